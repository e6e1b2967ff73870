"""The Jinja2 environment rubrics render with, and the escaping filters.

Templates are package data under this folder. Undefined variables raise (``StrictUndefined``);
autoescaping is off because the output is a chat prompt, not HTML, so item text is escaped
explicitly with the :func:`xml_text` and :func:`xml_attr` filters.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import jinja2

#: The folder that holds ``common/`` and one folder per rubric.
RUBRICS_DIR: Path = Path(__file__).resolve().parent

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


@cache
def environment(
    name: str = "", folder: Path | None = None, format_dir: Path | None = None
) -> jinja2.Environment:
    """Return the environment of the packaged rubrics, or of a user's rubric folder.

    A user's folder ``folder`` is found as ``<name>/...`` (its ``variants/``, ``scale.j2``,
    ...) before the packaged rubrics, whose ``common/`` templates it shares. ``format_dir``
    is the rubric's format's own template folder (``FormatSpec.template_dir``), found as
    ``common/...`` after the packaged ones.
    """
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(RUBRICS_DIR))]
    if format_dir is not None:
        loaders.append(jinja2.PrefixLoader({"common": jinja2.FileSystemLoader(str(format_dir))}))
    if folder is not None:
        loaders.insert(0, jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(folder))}))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
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
