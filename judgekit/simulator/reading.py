"""Read a chat-completions request the way the simulated judge needs it.

What is read: the ``<item id="...">`` blocks of the last user message, the output format (from
the JSON schema sent with the request, else from the prompt text), the scale, and for direct
scoring the announced criteria. Nothing is read for meaning.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from judgekit.types import OutputFormat

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
)
#: Scale used when neither the schema, the prompt nor the config names one.
DEFAULT_SCALES: Mapping[str, tuple[int, ...]] = {
    "id_score_lines": (0, 1, 2, 3, 4, 5),
    "rating_json": tuple(range(11)),
    "score_line": (1, 2, 3, 4),
    "direct_scoring_json": (1, 2, 3, 4, 5),
}


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
    output_format: OutputFormat
    json_reply: bool
    allowed: tuple[int, ...]
    criteria: tuple[CriterionSpec, ...]
    max_tokens: int | None


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


def _enum_or_range(spec: Mapping[str, Any]) -> tuple[int, ...] | None:
    if "enum" in spec:
        return tuple(sorted(int(v) for v in spec["enum"]))
    if "minimum" in spec and "maximum" in spec:
        return tuple(range(int(spec["minimum"]), int(spec["maximum"]) + 1))
    return None


def format_from_schema(
    schema: Mapping[str, Any],
) -> tuple[OutputFormat | None, tuple[int, ...] | None]:
    """Identify the output format and the scale (allowed + abstain values) from a schema."""
    props = cast(Mapping[str, Any], schema.get("properties") or {})
    if "overallScore" in props:
        return "direct_scoring_json", None
    if "rating" in props:
        return "rating_json", _enum_or_range(props["rating"])
    if "scores" in props:
        entry = cast(
            Mapping[str, Any], (props["scores"].get("items") or {}).get("properties") or {}
        )
        if "criterion" in entry:
            return "direct_scoring_json", None
        return "id_score_lines", _enum_or_range(entry.get("score", {}))
    if "score" in props:
        return "score_line", _enum_or_range(props["score"])
    return None, None


def format_from_prompt(instructions: str) -> OutputFormat:
    """Guess the output format from prompt text outside the items."""
    if "overallScore" in instructions:
        return "direct_scoring_json"
    if '"rating"' in instructions:
        return "rating_json"
    if "SCORE:" in instructions or '"explanation"' in instructions:
        return "score_line"
    return "id_score_lines"


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
    schema, json_reply = request_schema(body)
    schema_format, schema_scale = format_from_schema(schema) if schema else (None, None)
    output_format = schema_format or format_from_prompt(instructions)
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
        or DEFAULT_SCALES[output_format]
    )
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    return JudgeTask(
        items=items,
        output_format=output_format,
        json_reply=json_reply,
        allowed=allowed,
        criteria=criteria,
        max_tokens=int(max_tokens) if max_tokens else None,
    )


def _non_negative(values: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Drop abstain values (negative by convention) from a schema enum."""
    if not values:
        return None
    kept = tuple(v for v in values if v >= 0)
    return kept or None
