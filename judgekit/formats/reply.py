"""What every format does before reading a reply: refusals, reasoning, echoes, truncation.

* **Reasoning.** ``<think>…</think>`` (also ``<thinking>`` / ``<reasoning>``) blocks are cut
  out; text before a lone closing tag (templates that open the block in the prompt) is
  reasoning; an opening tag never closed makes the rest of the reply reasoning. A separate
  ``reasoning`` field of the reply is never read. Tolerance ``reasoning_block``.
* **Echoes.** A line (or JSON span) that appears verbatim in an item's own text, or the
  prompt's format example repeated line for line, is the judge copying the request, not
  answering: it cannot score an item.
* **Truncation.** With ``finish_reason == "length"`` the last line may be cut in the middle
  (``3,`` of ``3,5``), so line formats never read it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from judgekit.formats.markers import DEFAULT_MARKER, ScoreMarker
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import ChatRequest, Criterion, Scale

_TAGS = "think|thinking|reasoning"
_BLOCK = re.compile(rf"<({_TAGS})>.*?</\1>", re.IGNORECASE | re.DOTALL)
_CLOSE = re.compile(rf"</(?:{_TAGS})>", re.IGNORECASE)
_OPEN = re.compile(rf"<(?:{_TAGS})>", re.IGNORECASE)
_DECORATION = re.compile(r"^[\s>*_`]+|[\s*_`]+$")
_EXAMPLE_LINE = re.compile(r"[^\s,]+\s*,\s*-?\d+")
_FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_FULLWIDTH_PUNCT = re.compile(r"(?<=[0-9０-９])\s*([，：；])|([，：；])\s*(?=[0-9０-９])")

UNCLOSED_REASONING = "the reply is still inside an unclosed reasoning block: it holds no answer"
TRUNCATED = (
    "truncated: the reply stopped at max_tokens (finish_reason 'length') before this row"
    " — raise max_tokens"
)


def normalise_line(line: str) -> str:
    """A line as compared with the request: no quote marks, emphasis or spacing differences."""
    return " ".join(_DECORATION.sub("", line).split())


def unify_fullwidth(text: str, log: ToleranceLog) -> str:
    """Read full-width digits and the full-width comma/colon/semicolon next to digits as ASCII."""
    converted = text.translate(_FULLWIDTH_DIGITS)
    converted = _FULLWIDTH_PUNCT.sub(
        lambda m: {"，": ",", "：": ":", "；": ";"}[m.group(1) or m.group(2)], converted
    )
    if converted != text:
        log.add("fullwidth_characters")
    return converted


def strip_reasoning(text: str, log: ToleranceLog) -> tuple[str, bool]:
    """The answer part of ``text`` and whether a reasoning block was left open."""
    answer = _BLOCK.sub("\n", text)
    closings = list(_CLOSE.finditer(answer))
    if closings:
        answer = answer[closings[-1].end() :]
    opening = _OPEN.search(answer)
    left_open = opening is not None
    if opening is not None:
        answer = answer[: opening.start()]
    if answer != text:
        log.add("reasoning_block")
    return answer, left_open


@dataclass(frozen=True)
class Echoes:
    """What the request showed the judge, so that copying it back cannot score an item.

    Attributes:
        item_texts: Every item's own text, as the request showed it.
        text: Every item's text with whitespace collapsed (for JSON spans, and the first look
            for a copied line).
        example: The prompt's ``ID,score`` example lines, normalised and in order.
        instructions: The system message with whitespace collapsed (its JSON example).
    """

    item_texts: tuple[str, ...] = ()
    text: str = ""
    example: tuple[str, ...] = ()
    instructions: str = ""

    @classmethod
    def from_request(cls, request: ChatRequest | None) -> Echoes:
        """Collect the item texts (``request.shown``) and the format example of a request."""
        if request is None:
            return cls()
        item_texts = tuple(request.shown)
        example: tuple[str, ...] = ()
        instructions = ""
        for message in request.messages:
            if message.get("role") == "system":
                example, instructions = _read_instructions(str(message.get("content") or ""))
                break
        joined = " ".join(" ".join(text.split()) for text in item_texts)
        return cls(item_texts, joined, example, instructions)

    @functools.cached_property
    def lines(self) -> frozenset[str]:
        """Normalised non-blank lines of every item's own text (built when first needed)."""
        lines = {normalise_line(line) for text in self.item_texts for line in text.split("\n")}
        lines.discard("")
        return frozenset(lines)

    def has_line(self, line: str) -> bool:
        """Whether a reply line is a copy of a line of some item's text.

        A normalised item line is a run of the words of :attr:`text`, so a line not found
        there is no copy, and the set of item lines is built only for one that is.
        """
        normalised = normalise_line(line)
        return bool(normalised) and normalised in self.text and normalised in self.lines

    def has_span(self, span: str) -> bool:
        """Whether a JSON object of the reply is copied from an item's text or the prompt."""
        collapsed = " ".join(span.split())
        return bool(collapsed) and (collapsed in self.text or collapsed in self.instructions)

    def example_lines(self, lines: list[str]) -> set[int]:
        """Indexes of reply lines that repeat the prompt's format example as a whole block."""
        size = len(self.example)
        if size < 2:
            return set()
        found: set[int] = set()
        normalised = [normalise_line(line) for line in lines]
        for start in range(len(lines) - size + 1):
            if tuple(normalised[start : start + size]) == self.example:
                found.update(range(start, start + size))
        return found


@functools.lru_cache(maxsize=64)
def _read_instructions(content: str) -> tuple[tuple[str, ...], str]:
    """The format example and the collapsed text of a system message (the same every request)."""
    return tuple(_example_lines(content.split("\n"))), " ".join(content.split())


def _example_lines(lines: Iterable[str]) -> list[str]:
    """The first run of two or more consecutive ``ID,score`` lines in the instructions."""
    run: list[str] = []
    for line in lines:
        if _EXAMPLE_LINE.fullmatch(line.strip()):
            run.append(normalise_line(line))
        elif len(run) >= 2:
            return run
        else:
            run = []
    return run if len(run) >= 2 else []


@dataclass(frozen=True)
class ReplyInput:
    """A reply prepared for a format's reader.

    Attributes:
        text: The answer: reasoning removed, BOM and line endings and full-width digits unified.
        scale: The rubric's scale.
        item_ids: The IDs the request expected, in order.
        criteria: The rubric's criteria (direct scoring).
        echoes: What the request showed the judge.
        truncated: The reply hit ``max_tokens`` (its last line may be cut).
        log: Where the reader records the leniencies it used.
        marker: How the prompt asked for the score (``score_line``; see ``markers.py``).
    """

    text: str
    scale: Scale
    item_ids: tuple[str, ...]
    criteria: tuple[Criterion, ...] = ()
    echoes: Echoes = field(default_factory=Echoes)
    truncated: bool = False
    log: ToleranceLog = field(default_factory=ToleranceLog)
    marker: ScoreMarker = DEFAULT_MARKER

    def lines(self) -> list[str]:
        """The answer's lines; a truncated reply's unfinished last line is left out."""
        lines = self.text.split("\n")
        if self.truncated and lines:
            lines[-1] = ""
        return lines
