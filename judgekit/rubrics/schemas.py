"""JSON schemas of valid replies, one builder per output format (strict-mode compatible).

Every object lists all its properties as required and forbids extra ones, so the schemas can
be sent with OpenAI's ``"strict": true``. IDs and scores are enums, so a schema-enforcing
endpoint cannot invent an ID or an off-scale score; it can still repeat an ID (strict mode has
no ``uniqueItems``), which the parser reports as DUPLICATE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit.types import Criterion, OutputFormat, Scale


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed object whose properties are all required (in the given order)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def id_score_lines_schema(scale: Scale, item_ids: Sequence[str]) -> dict[str, Any]:
    """``{"scores": [{"id", "score"}, ...]}`` with exactly one entry per ID of the batch."""
    entry = _obj(
        {
            "id": {"type": "string", "enum": list(item_ids)},
            "score": {"type": "integer", "enum": [*scale.allowed, *scale.abstain]},
        }
    )
    count = len(item_ids)
    return _obj({"scores": {"type": "array", "items": entry, "minItems": count, "maxItems": count}})


def rating_json_schema(scale: Scale) -> dict[str, Any]:
    """``{"rating", "reason"}``, rating first; the rating includes the abstain values."""
    return _obj(
        {
            "rating": {"type": "integer", "enum": [*scale.abstain, *scale.allowed]},
            "reason": {"type": "string"},
        }
    )


def score_line_schema(scale: Scale) -> dict[str, Any]:
    """``{"explanation", "score"}``: the JSON form of "explanation, then SCORE: N"."""
    return _obj(
        {
            "explanation": {"type": "string"},
            "score": {"type": "integer", "enum": [*scale.allowed, *scale.abstain]},
        }
    )


def _criterion_entry(criterion: Criterion) -> dict[str, Any]:
    return _obj(
        {
            "criterion": {"type": "string", "enum": [criterion.name]},
            "evidence": _strings(),
            "score": {
                "type": "integer",
                "enum": list(range(criterion.min_score, criterion.max_score + 1)),
            },
            "maxScore": {"type": "integer", "enum": [criterion.max_score]},
            "justification": {"type": "string"},
            "improvement": {"type": "string"},
        }
    )


def direct_scoring_schema(criteria: Sequence[Criterion]) -> dict[str, Any]:
    """Evidence-first per-criterion records, the weighted overall score and a summary."""
    entries = [_criterion_entry(criterion) for criterion in criteria]
    items: dict[str, Any] = entries[0] if len(entries) == 1 else {"anyOf": entries}
    count = len(entries)
    return _obj(
        {
            "scores": {"type": "array", "items": items, "minItems": count, "maxItems": count},
            "overallScore": {"type": "number"},
            "summary": _obj(
                {
                    "assessment": {"type": "string"},
                    "strengths": _strings(),
                    "weaknesses": _strings(),
                    "priorities": _strings(),
                }
            ),
        }
    )


def reply_schema(
    output_format: OutputFormat,
    scale: Scale,
    item_ids: Sequence[str],
    criteria: Sequence[Criterion] = (),
) -> dict[str, Any]:
    """The schema of a valid reply in ``output_format`` for a batch with these IDs."""
    if output_format == "id_score_lines":
        return id_score_lines_schema(scale, item_ids)
    if output_format == "rating_json":
        return rating_json_schema(scale)
    if output_format == "score_line":
        return score_line_schema(scale)
    if output_format == "direct_scoring_json":
        if not criteria:
            raise ValueError("a direct_scoring_json schema needs at least one criterion")
        return direct_scoring_schema(criteria)
    raise ValueError(f"unknown output format {output_format!r}")
