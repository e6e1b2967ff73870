"""Placeholders in a researcher's own prompt, filled from an item's columns and nothing else.

Three styles researchers write, one per file:

* ``{question}``: Python ``str.format`` style (MT-Bench's prompts); ``{{`` and ``}}`` stand for
  literal braces, as ``str.format`` sends them;
* ``{{ question }}`` / ``{{question}}`` (and Handlebars' ``{{{question}}}``);
* Handlebars blocks ``{{#if context}}…{{else}}…{{/if}}`` and ``{{#unless context}}…{{/unless}}``
  (seed 003). A block tag alone on its line takes its line with it, as in Handlebars.

A value is inserted as it is (no escaping, no trimming). Every other character of the file is
sent unchanged. Anything that would need a template engine (``{% … %}``, ``{{#each}}``,
helpers) is refused when the file is read, naming the line, so nothing is silently left
unfilled; so is a placeholder whose closing brace is missing (``{question`` at a line's end or
before a word, which would reach the judge as text), and a slot whose value is missing when a
request is built.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(
    rf"\{{\{{\{{\s*(?P<triple>{_NAME})\s*\}}\}}\}}"
    rf"|\{{\{{\s*(?P<tag>[#/^][^{{}}]*|else)\s*\}}\}}"
    rf"|\{{\{{\s*(?P<double>{_NAME})\s*\}}\}}"
    rf"|(?<!\{{)\{{(?P<single>{_NAME})\}}(?!\}})"
    r"|(?P<jinja>\{%.*?%\})"
)
#: An opening brace and a name that no closing brace follows (``{question`` at a line's end).
_UNCLOSED = re.compile(
    rf"(?<!\{{)(?P<open>\{{{{1,3}})[ \t]*(?P<name>{_NAME})(?=[ \t]*(?:\n|$)|[ \t]+\w)"
)
_BLOCK = re.compile(rf"(?P<kind>#if|#unless|/if|/unless|else)(?:\s+(?P<name>{_NAME}))?")


class PromptTemplateError(ValueError):
    """A prompt file that cannot be filled as written; the message names the file and line."""


@dataclass(frozen=True)
class Slot:
    """A placeholder to replace with the text of the column mapped to ``name``."""

    name: str
    line: int


@dataclass(frozen=True)
class Block:
    """``{{#if name}}`` (or ``#unless``): ``then`` when the value is not blank, else the other."""

    name: str
    negate: bool
    then: tuple[Node, ...]
    otherwise: tuple[Node, ...]
    line: int


Node = str | Slot | Block


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _standalone(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a block tag alone on its line to the whole line, its line break included."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end + 1
    before, after = text[line_start:start], text[end:line_end]
    if before.strip() or after.strip():
        return start, end
    return line_start, line_end


class PromptTemplate:
    """A prompt file's text with its placeholders, ready to be filled per item.

    Attributes:
        text: The file's text as read.
        source: Where it came from, for messages (the file name).
        style: ``"none"`` (no placeholder), ``"format"`` (``{name}``) or ``"handlebars"``.
        names: Every placeholder and block name, in order of first appearance.
        optional: Names used only inside ``{{#if}}`` blocks testing themselves (or only as
            conditions): an item may leave them blank.
    """

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        tokens = list(_TOKEN.finditer(text))
        single = [t for t in tokens if t["single"]]
        double = [t for t in tokens if not t["single"]]
        for token in tokens:
            if token["jinja"]:
                self._fail(
                    token.start(),
                    f"{token.group()!r} is a Jinja statement; a prompt file is filled, not run "
                    "as a template (use a rubric folder for Jinja)",
                )
        if single and double:
            self._fail(
                double[0].start(),
                f"{double[0].group()!r} mixes {{{{name}}}} placeholders with {single[0].group()!r}"
                "; use one style in a file",
            )
        self.style = "format" if single else "handlebars" if double else "none"
        self._refuse_unclosed(tokens)
        self._lines: dict[str, int] = {}
        for token in tokens:
            found = token["triple"] or token["double"] or token["single"] or token["tag"] or ""
            name = found.split()[-1] if found.startswith("#") else found
            if name and not name.startswith(("/", "#")) and name != "else":
                self._lines.setdefault(name, _line_of(text, token.start()))
        self._nodes = self._parse(tokens)
        names: dict[str, None] = {}
        required: set[str] = set()
        _collect(self._nodes, names, required, guarded=frozenset())
        self.names = tuple(names)
        self.optional = tuple(name for name in names if name not in required)

    def _refuse_unclosed(self, tokens: list[re.Match[str]]) -> None:
        """Refuse ``{question`` without its closing brace: it would be sent as text."""
        rest = list(self.text)
        for token in tokens:
            rest[token.start() : token.end()] = " " * (token.end() - token.start())
        for found in _UNCLOSED.finditer("".join(rest)):
            if self.style == "format" and found["open"] == "{{":
                continue  # a literal brace in str.format's style
            braces = "}" * len(found["open"])
            self._fail(
                found.start(),
                f"placeholder {found['name']!r} is not closed ({found.group().strip()!r} would "
                f"be sent as text); write {found['open']}{found['name']}{braces}",
            )

    def _fail(self, at: int, message: str) -> NoReturn:
        self.fail_at_line(_line_of(self.text, at), message)

    def _literal(self, chunk: str) -> str:
        return chunk.replace("{{", "{").replace("}}", "}") if self.style == "format" else chunk

    def _parse(self, tokens: list[re.Match[str]]) -> tuple[Node, ...]:
        # open blocks: (kind, name, then, otherwise, [in the else branch], line)
        root: list[Node] = []
        stack: list[tuple[str, str, list[Node], list[Node], list[bool], int]] = []
        position = 0

        def target() -> list[Node]:
            if not stack:
                return root
            _, _, then, otherwise, in_else, _ = stack[-1]
            return otherwise if in_else[0] else then

        for token in tokens:
            start, end = token.span()
            if token["tag"] is not None:
                start, end = _standalone(self.text, start, end)
            if start > position:
                target().append(self._literal(self.text[position:start]))
            position = end
            name = token["triple"] or token["double"] or token["single"]
            if name:
                target().append(Slot(name, _line_of(self.text, token.start())))
                continue
            tag = " ".join(token["tag"].split())
            block = _BLOCK.fullmatch(tag)
            line = _line_of(self.text, token.start())
            if block is None or (block["kind"][0] == "#") != bool(block["name"]):
                self._fail(
                    token.start(),
                    f"{token.group()!r} is not supported (only {{{{#if name}}}}, "
                    "{{#unless name}}, {{else}}, {{/if}}, {{/unless}})",
                )
            kind = block["kind"]
            if kind in ("#if", "#unless"):
                stack.append((kind[1:], block["name"], [], [], [False], line))
            elif kind == "else":
                if not stack or stack[-1][4][0]:
                    self._fail(token.start(), "{{else}} outside an {{#if}} or {{#unless}} block")
                stack[-1][4][0] = True
            else:
                if not stack or stack[-1][0] != kind[1:]:
                    self._fail(token.start(), f"{token.group()!r} closes no open block")
                opened, cond, then, otherwise, _, at = stack.pop()
                target().append(Block(cond, opened == "unless", tuple(then), tuple(otherwise), at))
        if stack:
            self.fail_at_line(
                stack[-1][5], f"{{{{#{stack[-1][0]} {stack[-1][1]}}}}} is never closed"
            )
        if position < len(self.text):
            root.append(self._literal(self.text[position:]))
        return tuple(root)

    def line_of(self, name: str) -> int:
        """The line where ``name`` first appears (as a placeholder or a block's condition)."""
        return self._lines.get(name, 1)

    def fail_at_line(self, line: int, message: str) -> NoReturn:
        """Raise a :class:`PromptTemplateError` for ``line`` of the file."""
        raise PromptTemplateError(f"{self.source}, line {line}: {message}")

    def fill(self, values: Mapping[str, str | None], *, what: str = "the item") -> str:
        """The text with every placeholder replaced by its value.

        Args:
            values: Text per placeholder name; ``None`` or absent means "no value".
            what: Names the item in the error message.

        Raises:
            PromptTemplateError: When a slot that is reached has no value.
        """
        return "".join(self._fill(self._nodes, values, what))

    def _fill(
        self, nodes: tuple[Node, ...], values: Mapping[str, str | None], what: str
    ) -> list[str]:
        out: list[str] = []
        for node in nodes:
            if isinstance(node, str):
                out.append(node)
            elif isinstance(node, Slot):
                value = values.get(node.name)
                if value is None:
                    self.fail_at_line(
                        node.line, f"placeholder {node.name!r} has no value for {what}"
                    )
                out.append(str(value))
            else:
                present = bool((values.get(node.name) or "").strip())
                branch = node.then if present != node.negate else node.otherwise
                out.extend(self._fill(branch, values, what))
        return out


def _collect(
    nodes: tuple[Node, ...], names: dict[str, None], required: set[str], guarded: frozenset[str]
) -> None:
    """Record every name; a slot is required unless an enclosing ``{{#if}}`` tests its name."""
    for node in nodes:
        if isinstance(node, Slot):
            names.setdefault(node.name)
            if node.name not in guarded:
                required.add(node.name)
        elif isinstance(node, Block):
            names.setdefault(node.name)
            inner = guarded | {node.name}
            _collect(node.then, names, required, inner if not node.negate else guarded)
            _collect(node.otherwise, names, required, inner if node.negate else guarded)
