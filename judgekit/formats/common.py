"""Helpers shared by the reply parsers: clean-up, JSON extraction, truncation, scale checks."""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import ItemVerdict, Scale, Status

TRUNCATION_HINT = (
    "the reply looks truncated (an unclosed JSON object or code fence) — raise max_tokens"
)

#: A signed decimal number as judges write scores; "−" (U+2212) is folded to "-" beforehand.
NUMBER_PATTERN = r"[+-]?\d+(?:\.\d+)?"

_FENCE = "```"


def clean_text(text: str, log: ToleranceLog) -> str:
    """Remove a leading BOM and unify line endings, recording what was changed."""
    if text.startswith("\ufeff"):
        log.add("bom")
        text = text.lstrip("\ufeff")
    if "\r" in text:
        log.add("crlf")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\u2212", "-")


def has_unclosed_fence(text: str) -> bool:
    """Whether a ``` code fence is opened but never closed."""
    return text.count(_FENCE) % 2 == 1


def _string_state(text: str) -> tuple[list[bool], bool]:
    """Per character, whether it lies outside JSON strings; and whether the text ends in one.

    JSON strings hold no raw newline, so a newline ends a string opened in prose.
    """
    outside: list[bool] = []
    in_string = escaped = False
    for char in text:
        if not in_string:
            outside.append(char != '"')
            in_string = char == '"'
            continue
        outside.append(False)
        if char == "\n":
            in_string = escaped = False
        elif escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            in_string = False
    return outside, in_string


def has_unclosed_json(text: str) -> bool:
    """Whether the text opens a JSON object or string that it never closes."""
    start = text.find("{")
    if start < 0:
        return False
    outside, open_string = _string_state(text[start:])
    depth = 0
    for char, counts in zip(text[start:], outside, strict=True):
        if counts and char in "{[":
            depth += 1
        elif counts and char in "}]":
            depth = max(0, depth - 1)
    return open_string or depth > 0


def looks_truncated(text: str) -> bool:
    """Whether the reply looks cut off (the usual result of a too small ``max_tokens``)."""
    return has_unclosed_fence(text) or has_unclosed_json(text)


@dataclass(frozen=True)
class JsonValue:
    """One JSON value found in a reply, with its character span."""

    value: Any
    start: int
    end: int


class JsonObject(dict[str, Any]):
    """A decoded JSON object that remembers every value of a key the text repeated.

    ``json`` keeps only the last value of a repeated key; a judge that writes
    ``{"rating": 3, "rating": 8}`` has given two answers, and the parsers must see both.
    """

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        values: dict[str, list[Any]] = {}
        for key, value in pairs:
            values.setdefault(key, []).append(value)
        self.repeated: dict[str, list[Any]] = {k: v for k, v in values.items() if len(v) > 1}

    def all_values(self, key: str) -> list[Any]:
        """Every value the text gave for ``key`` (empty if absent)."""
        if key in self.repeated:
            return list(self.repeated[key])
        return [self[key]] if key in self else []


def key_values(obj: dict[str, Any], key: str) -> list[Any]:
    """Every value given for ``key``: all repeats for a :class:`JsonObject`, else the one."""
    if isinstance(obj, JsonObject):
        return obj.all_values(key)
    return [obj[key]] if key in obj else []


def conflicting_keys(value: Any, path: str = "") -> list[str]:
    """Paths of keys repeated with different values anywhere inside a decoded JSON value."""
    found: list[str] = []
    if isinstance(value, JsonObject):
        for key, values in value.repeated.items():
            if len({json.dumps(v, sort_keys=True) for v in values}) > 1:
                found.append(f"{path}{key}")
    if isinstance(value, dict):
        for key, inner in value.items():
            found.extend(conflicting_keys(inner, f"{path}{key}."))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.extend(conflicting_keys(inner, f"{path}{index}."))
    return found


def find_json_values(text: str, log: ToleranceLog | None = None) -> list[JsonValue]:
    """Decode every top-level JSON object or array embedded in ``text``, left to right.

    Objects are decoded as :class:`JsonObject` so that repeated keys stay visible. ``//``
    comments outside strings are blanked first (same length, so spans stay valid); when a
    decoded value contained one, ``json_comment`` is recorded in ``log``.
    """
    blanked, comments = _blank_comments(text)
    decoder = json.JSONDecoder(object_pairs_hook=JsonObject)
    found: list[JsonValue] = []
    position = 0
    while True:
        starts = [i for i in (blanked.find("{", position), blanked.find("[", position)) if i >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(blanked, start)
        except json.JSONDecodeError as error:
            # resume where decoding failed: restarting inside a broken value is quadratic
            position = max(start + 1, error.pos)
            continue
        except ValueError:  # a number too long to convert
            position = start + 1
            continue
        except RecursionError:  # nesting too deep to be a judge's answer
            return found
        if log is not None and any(start <= c < end for c in comments):
            log.add("json_comment")
        found.append(JsonValue(value, start, end))
        position = end


def _blank_comments(text: str) -> tuple[str, list[int]]:
    """``text`` with ``//`` comments outside JSON strings replaced by spaces, and their starts."""
    if "//" not in text:
        return text, []
    outside, _ = _string_state(text)
    chars = list(text)
    starts: list[int] = []
    index = 0
    while index < len(chars):
        if outside[index] and text.startswith("//", index):
            starts.append(index)
            while index < len(chars) and chars[index] != "\n":
                chars[index] = " "
                index += 1
            continue
        index += 1
    return "".join(chars), starts


def lookup_key(obj: dict[str, Any], key: str, log: ToleranceLog) -> str | None:
    """The key of ``obj`` that means ``key``: itself, else the one equal ignoring case."""
    if key in obj:
        return key
    folded = [k for k in obj if isinstance(k, str) and k.casefold() == key.casefold()]
    if len(folded) == 1:
        log.add("json_key_case")
        return folded[0]
    return None


def unwrap(value: Any, keys: tuple[str, ...], log: ToleranceLog) -> Any:
    """Open one outer layer a judge added: ``{"evaluation": {...}}`` or a one-element list.

    Only a single-key object whose key is not one of the format's own ``keys`` is opened.
    """
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        log.add("json_in_list")
        return value[0]
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if isinstance(inner, dict) and str(key).casefold() not in keys:
            log.add("json_wrapped")
            return inner
    return value


def find_python_dicts(text: str) -> list[JsonValue]:
    """Flat ``{...}`` spans that are Python literals but not JSON (``{'rating': 7}``)."""
    found = []
    for match in re.finditer(r"\{[^{}]*\}", text):
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(JsonValue(value, match.start(), match.end()))
    return found


def note_json_surroundings(text: str, used: Sequence[JsonValue], log: ToleranceLog) -> None:
    """Record fences and prose around the JSON values that were used."""
    outside = text
    for found in sorted(used, key=lambda v: v.start, reverse=True):
        outside = outside[: found.start] + outside[found.end :]
    if _FENCE in outside:
        log.add("markdown_fence")
        outside = re.sub(r"```[A-Za-z0-9_+-]*", "", outside)
    if outside.strip():
        log.add("prose_around_json")


def json_number(value: Any, log: ToleranceLog) -> float | None:
    """Read a JSON score: a number, or a string holding one; anything else gives None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) < 10**300:
            return float(value)
        return math.inf if value > 0 else -math.inf
    if isinstance(value, float):
        if value.is_integer():
            log.add("decimal_notation")
        return value
    if isinstance(value, str) and re.fullmatch(NUMBER_PATTERN, value.strip()):
        log.add("score_as_string")
        return text_number(value.strip(), log)
    return None


def text_number(token: str, log: ToleranceLog) -> float:
    """Read a score written in text (it must already match :data:`NUMBER_PATTERN`)."""
    value = float(token)
    if "." in token and value.is_integer():
        log.add("decimal_notation")
    return value


def describe_value(value: float) -> int | float:
    """Show a whole number without a trailing ``.0``."""
    return int(value) if value.is_integer() else value


def verdict_for_value(
    item_id: str,
    value: float,
    scale: Scale,
    *,
    raw: str,
    judge_reason: str = "",
    out_of: int | None = None,
    log: ToleranceLog,
) -> ItemVerdict:
    """Turn one number the judge gave for an item into a verdict.

    Args:
        item_id: The expected ID the number belongs to.
        value: The number as written.
        scale: The rubric's scale; only its allowed values are scores.
        raw: The reply fragment the number came from.
        judge_reason: The judge's own explanation, if it gave one.
        out_of: The denominator when the judge wrote a fraction such as ``4/4``.
        log: Where the tolerance for an accepted fraction is recorded.
    """
    shown = describe_value(value)
    if out_of is not None and out_of != scale.maximum:
        return ItemVerdict.unscored(
            item_id,
            Status.OUT_OF_RANGE,
            f"the judge wrote {shown}/{out_of}, but the scale's maximum is {scale.maximum}",
            raw,
            value=shown,
            out_of=out_of,
        )
    if scale.accepts(value):
        if out_of is not None:
            log.add("score_out_of_max")
        return ItemVerdict(item_id, Status.OK, float(value), judge_reason, raw)
    if value.is_integer() and int(value) in scale.abstain:
        reason = judge_reason or f"the judge abstained with {int(value)} (cannot judge this item)"
        return ItemVerdict.unscored(item_id, Status.ABSTAIN, reason, raw, abstain_value=int(value))
    details: dict[str, Any] = {"value": shown}
    if judge_reason:
        details["judge_reason"] = judge_reason
    return ItemVerdict.unscored(
        item_id,
        Status.OUT_OF_RANGE,
        f"{shown} is not on the rubric's scale ({scale.describe()})",
        raw,
        **details,
    )


def unparseable_reason(text: str, expected: str) -> str:
    """Explain, for a researcher, why nothing usable was found in a reply."""
    if not text.strip():
        return "the reply is empty"
    if looks_truncated(text):
        return f"no complete {expected} found: {TRUNCATION_HINT}"
    snippet = " ".join(text.split())
    if len(snippet) > 120:
        snippet = snippet[:117] + "..."
    return f"no {expected} found in the reply (it begins: {snippet!r})"
