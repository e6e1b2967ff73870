"""The Jinja2 environment rubrics render with, and the escaping filters.

Templates are package data under this folder. Undefined variables raise (``StrictUndefined``);
autoescaping is off because the output is a chat prompt, not HTML, so item text is escaped
explicitly with the :func:`xml_text` and :func:`xml_attr` filters.

A user's rubric folder (or a format's templates from outside the package) is someone else's
code: its templates render in Jinja's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`,
which refuses every attribute that starts with ``_`` (``cycler.__init__.__globals__``,
``''.__class__.__mro__``, ...) and every method that changes a value. Such a refusal, or any
other template error, is a one-line :class:`TemplateRefused` naming the template's file.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from judgekit.types import UsageError

#: The folder that holds ``common/`` and one folder per rubric.
RUBRICS_DIR: Path = Path(__file__).resolve().parent
#: Templates below this folder are ours; every other template renders in the sandbox.
PACKAGE_DIR: Path = RUBRICS_DIR.parent

_TEXT_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_ATTR_ESCAPES = {**_TEXT_ESCAPES, '"': "&quot;"}
_TEXT_PATTERN = re.compile("[&<>]")
_ATTR_PATTERN = re.compile('[&<>"]')


def xml_text(value: str) -> str:
    """Escape ``&``, ``<`` and ``>`` so text cannot open or close a tag."""
    return _TEXT_PATTERN.sub(lambda match: _TEXT_ESCAPES[match.group()], value)


def xml_attr(value: str) -> str:
    """Escape text for a double-quoted XML attribute (``&``, ``<``, ``>`` and ``"``)."""
    return _ATTR_PATTERN.sub(lambda match: _ATTR_ESCAPES[match.group()], value)


def format_number(value: float) -> str:
    """Write a weight or score without a trailing ``.0`` (``0.4``, ``2``, ``1.25``)."""
    return f"{value:g}"


def json_text(value: object) -> str:
    """Serialise a value as JSON, keeping non-ASCII text readable."""
    return json.dumps(value, ensure_ascii=False)


class TemplateRefused(UsageError):
    """A user's template tried something the sandbox refuses, or failed (one line)."""


def _template_file(error: BaseException, fallback: str | None) -> str:
    """The template file the error was raised in (Jinja rewrites frames to name it)."""
    found = getattr(error, "filename", None) or fallback or "a rubric template"
    trace = error.__traceback__
    while trace is not None:
        name = trace.tb_frame.f_code.co_filename
        if name.endswith(".j2"):
            found = name
        trace = trace.tb_next
    return str(found)


class _UserTemplate(jinja2.Template):
    """A sandboxed template whose every failure is one line naming its file."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        """Render as :meth:`jinja2.Template.render`; raise :class:`TemplateRefused` on failure."""
        try:
            return super().render(*args, **kwargs)
        except jinja2.TemplateError as error:
            where = _template_file(error, self.filename)
            line = " ".join(str(error.message or error).split())
            raise TemplateRefused(f"{where}: template refused: {line}") from None


class _UserEnvironment(ImmutableSandboxedEnvironment):
    template_class = _UserTemplate

    def _load_template(self, name: str, globals: Any) -> jinja2.Template:
        try:
            return super()._load_template(name, globals)
        except jinja2.TemplateSyntaxError as error:
            where = error.filename or name
            raise TemplateRefused(
                f"{where}, line {error.lineno}: template syntax error: {error.message}"
            ) from None


def _packaged(path: Path | None) -> bool:
    return path is None or path.resolve().is_relative_to(PACKAGE_DIR)


@cache
def environment(
    name: str = "", folder: Path | None = None, format_dir: Path | None = None
) -> jinja2.Environment:
    """Return the environment of the packaged rubrics, or of a user's rubric folder.

    A user's folder ``folder`` is found as ``<name>/...`` (its ``variants/``, ``scale.j2``,
    ...) before the packaged rubrics, whose ``common/`` templates it shares. ``format_dir``
    is the rubric's format's own template folder (``FormatSpec.template_dir``), found as
    ``common/...`` after the packaged ones. When either comes from outside the package, the
    environment is sandboxed (see the module docstring).
    """
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(RUBRICS_DIR))]
    if format_dir is not None:
        loaders.append(jinja2.PrefixLoader({"common": jinja2.FileSystemLoader(str(format_dir))}))
    if folder is not None:
        loaders.insert(0, jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(folder))}))
    sandboxed = folder is not None or not _packaged(format_dir)
    kind = _UserEnvironment if sandboxed else jinja2.Environment
    env = kind(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # templates compiled once per process
    )
    env.filters["xml_text"] = xml_text
    env.filters["xml_attr"] = xml_attr
    env.filters["num"] = format_number
    env.filters["json"] = json_text
    return env


_BLANK_RUNS = re.compile(r"\n[ \t]*(\n[ \t]*)+\n")


def tidy(text: str) -> str:
    """Collapse runs of blank lines left by template blocks and strip the ends.

    Only used on instructions written by us (system prompts), never on item text.
    """
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines))
