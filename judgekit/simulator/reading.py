"""Read a chat-completions request the way the simulated judge needs it.

What is read: the ``<item id="...">`` blocks of the last user message (a message without them,
as an own prompt with placeholders sends, is one item without an ID: the whole message), the
output format (from the JSON schema sent with the request, else from the prompt text; see
:mod:`judgekit.simulator.formats`), the score marker the prompt shows
(:mod:`judgekit.simulator.markers`), the scale, and for direct scoring the announced criteria.
Nothing is read for meaning, and nothing but what a real endpoint receives.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.formats import get_format
from judgekit.formats.markers import ScoreMarker
from judgekit.simulator.formats import (
    default_scale,
    format_from_prompt,
    format_from_schema,
)
from judgekit.simulator.formats import schema_scale as schema_scale_of
from judgekit.simulator.markers import find_marker

ITEM_PATTERN = re.compile(r'<item id="([^"]*)">(.*?)</item>', re.DOTALL)
CRITERION_PATTERN = re.compile(
    r"^###\s*Criterion:\s*(?P<name>.+?)\s*\|\s*weight\s*(?P<weight>[0-9.]+)\s*\|"
    r"\s*scale\s*(?P<low>-?\d+)\s*[-–]\s*(?P<high>-?\d+)\s*$",
    re.MULTILINE,
)
# Ways a prompt states its scale, tried in order on the text outside the items.
SCALE_LIST_PATTERNS = (
    re.compile(r"[Ss]coring scale \((\d+(?:\s*,\s*\d+)+)\)"),  # "## Scoring scale (0, 3, 5)"
    re.compile(r"score is one of:?\s*(\d+(?:\s*,\s*\d+)+)"),  # "each score is one of: 0, 3, 5"
    re.compile(r"\((\d+(?:\s*/\s*\d+)+)\)"),  # "(0 / 3 / 5)"
    re.compile(r"\[(\d+(?:\s*/\s*\d+)+)\]"),  # "SCORE: [1/2/3/4]"
    re.compile(r"[Aa]llowed (?:scores|values)\s*:\s*(-?\d+(?:\s*,\s*-?\d+)+)"),
)
SCALE_RANGE_PATTERNS = (
    re.compile(r"scale (?:of|from) (\d+) to (\d+)", re.IGNORECASE),
    re.compile(r"an integer from (\d+) to (\d+)"),  # rating_json: "an integer from 0 to 10"
    re.compile(r"(\d+)\s*[-–]\s*(\d+) scale", re.IGNORECASE),
    re.compile(r"SCORING \((\d+)\s*[-–]\s*(\d+)\)", re.IGNORECASE),
    re.compile(r"\b(?:from|between) (\d+) (?:to|and) (\d+)\b"),  # "from 0 to 4", "between 1 and 5"
    re.compile(r"<(\d+)\s*[-–]\s*(\d+)>"),  # '{"score": <1-5>}'
)


@dataclass(frozen=True)
class SimItem:
    """One ``<item>`` block: its ID (unescaped), its inner text (as sent) and position."""

    id: str
    text: str
    position: int


@dataclass(frozen=True)
class CriterionSpec:
    """A direct-scoring criterion as announced in the prompt (or only named by the schema)."""

    name: str
    weight: float
    low: int
    high: int


@dataclass(frozen=True)
class JudgeTask:
    """Everything the simulated judge takes from one request."""

    items: tuple[SimItem, ...]
    output_format: str
    json_reply: bool
    allowed: tuple[int, ...]
    criteria: tuple[CriterionSpec, ...]
    max_tokens: int | None
    marker: ScoreMarker | None = None


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message (string content or a list of text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def request_schema(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """Return (the JSON schema the reply must follow or None, whether a JSON reply is required)."""
    guided = body.get("guided_json")
    if isinstance(guided, Mapping):
        return dict(guided), True
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping):
        return None, False
    kind = response_format.get("type")
    if kind == "json_schema":
        wrapper = response_format.get("json_schema") or {}
        schema = wrapper.get("schema") if isinstance(wrapper, Mapping) else None
        return (dict(schema) if isinstance(schema, Mapping) else None), True
    if kind == "json_object":
        schema = response_format.get("schema")
        return (dict(schema) if isinstance(schema, Mapping) else None), True
    return None, False


def scale_from_prompt(instructions: str) -> tuple[int, ...] | None:
    """Find a stated scale ("(0 / 3 / 5)", "scale of 0 to 10", "1-4 scale", ...) in the prompt."""
    for pattern in SCALE_LIST_PATTERNS:
        found = pattern.search(instructions)
        if found:
            return tuple(sorted({int(v) for v in re.split(r"[/,]", found.group(1))}))
    for pattern in SCALE_RANGE_PATTERNS:
        found = pattern.search(instructions)
        if found and int(found.group(1)) < int(found.group(2)):
            return tuple(range(int(found.group(1)), int(found.group(2)) + 1))
    return None


def read_task(body: Mapping[str, Any], *, forced_scale: tuple[int, ...] | None) -> JudgeTask:
    """Read the judge's task from a chat-completions request body.

    Raises:
        ValueError: If the body has no messages.
    """
    messages = body.get("messages")
    if not isinstance(messages, Sequence) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    user_turns = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    last_user = message_text(user_turns[-1]) if user_turns else ""
    system = "\n".join(
        message_text(m) for m in messages if isinstance(m, Mapping) and m.get("role") == "system"
    )
    items = tuple(
        SimItem(id=html.unescape(match.group(1)), text=match.group(2), position=index)
        for index, match in enumerate(ITEM_PATTERN.finditer(last_user))
    )
    instructions = system + "\n" + ITEM_PATTERN.sub("", last_user)
    filled = not items  # a filled own prompt: the message is the item, its ID is not sent
    items = items or (SimItem(id="", text=last_user, position=0),)
    schema, json_reply = request_schema(body)
    schema_format = format_from_schema(schema) if schema else None
    output_format = schema_format or format_from_prompt(instructions)
    marker, one_score = find_marker(instructions) if not schema_format else (None, False)
    if get_format(output_format).batched and not schema_format and (filled or one_score):
        output_format = "score_line"  # one item, or a prompt asking for one score
    schema_scale = schema_scale_of(output_format, schema) if schema_format and schema else None
    criteria = tuple(
        CriterionSpec(
            name=m.group("name"),
            weight=float(m.group("weight")),
            low=int(m.group("low")),
            high=int(m.group("high")),
        )
        for m in CRITERION_PATTERN.finditer(instructions)
    )
    allowed = (
        forced_scale
        or _non_negative(schema_scale)
        or scale_from_prompt(instructions)
        or default_scale(output_format)
    )
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    return JudgeTask(
        items=items,
        output_format=output_format,
        json_reply=json_reply,
        allowed=allowed,
        criteria=criteria,
        max_tokens=int(max_tokens) if max_tokens else None,
        marker=marker if output_format == "score_line" else None,
    )


def _non_negative(values: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Drop abstain values (negative by convention) from a schema enum."""
    if not values:
        return None
    kept = tuple(v for v in values if v >= 0)
    return kept or None
