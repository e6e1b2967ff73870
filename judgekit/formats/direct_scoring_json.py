"""Single-item direct-scoring replies (seed 003): criteria plus a weighted overall.

The reply is checked against the rubric's criteria before its overall score is trusted:
every criterion exactly once, each score a whole number within the criterion's range and not
above the reported ``maxScore``, ``maxScore`` equal to the criterion's maximum, and
``overallScore`` equal to the weight-normalised mean of the criterion scores within
:data:`OVERALL_TOLERANCE`. Any failure gives INCONSISTENT with every problem listed; the
item's score is the judge's own ``overallScore`` only when all checks pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from judgekit.formats.common import (
    conflicting_keys,
    describe_value,
    find_json_values,
    json_number,
    note_json_surroundings,
    unparseable_reason,
    unwrap,
)
from judgekit.formats.reply import ReplyInput
from judgekit.formats.schemas import closed_object, string_list
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, ItemVerdict, Scale, Status

#: Largest accepted gap between the reported and the recomputed overall score.
OVERALL_TOLERANCE = 0.05


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read and cross-check a direct-scoring JSON reply for one item."""
    (item_id,) = reply.item_ids
    criteria = reply.criteria
    if not criteria:
        raise ValueError("direct_scoring_json needs the rubric's criteria to check the reply")
    if sum(c.weight for c in criteria) <= 0:
        raise ValueError("the criteria weights must add up to more than 0")
    log = reply.log
    found = []
    for value in find_json_values(reply.text, log):
        scratch = ToleranceLog()
        inner = unwrap(value.value, ("scores",), scratch)
        if not isinstance(inner, dict) or not isinstance(inner.get("scores"), list):
            continue
        if reply.echoes.has_span(reply.text[value.start : value.end]):
            log.add("echoed_text_ignored")
            continue
        for name in scratch.as_tuple():
            log.add(name)
        found.append((value, inner))
    if not found:
        reason = unparseable_reason(reply.text, "JSON object with 'scores'")
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, reply.text),)
    note_json_surroundings(reply.text, [v for v, _ in found], log)
    raw = "\n".join(reply.text[v.start : v.end] for v, _ in found)
    if len({json.dumps(inner, sort_keys=True) for _, inner in found}) > 1:
        reason = f"the reply holds {len(found)} different evaluations"
        return (ItemVerdict.unscored(item_id, Status.DUPLICATE, reason, raw),)
    if len(found) > 1:
        log.add("repeated_json")
    return (_checked(item_id, found[-1][1], criteria, raw, log),)


def _checked(
    item_id: str,
    answer: dict[str, Any],
    criteria: Sequence[Criterion],
    raw: str,
    log: ToleranceLog,
) -> ItemVerdict:
    """The verdict of one evaluation: its overall score only if every check passes."""
    problems = [
        f"{path!r} is given more than once with different values"
        for path in conflicting_keys(answer)
    ]
    per_criterion = _criterion_records(answer["scores"], criteria, problems, log)
    # a weighted mean is naturally fractional, so only a string overall is a leniency here
    reported = answer.get("overallScore")
    overall = json_number(reported, log if isinstance(reported, str) else ToleranceLog())
    recomputed = _weighted_mean(per_criterion, criteria)
    if overall is None:
        problems.append("overallScore is missing or not a number")
    elif recomputed is not None and abs(overall - recomputed) > OVERALL_TOLERANCE:
        problems.append(
            f"overallScore {describe_value(overall)} differs from the weighted mean of the "
            f"criterion scores, {recomputed:.3f}"
        )
    summary = answer.get("summary")
    details: dict[str, Any] = {
        "criteria": per_criterion,
        "overall_reported": overall,
        "overall_recomputed": recomputed,
        "summary": summary if isinstance(summary, dict) else {},
    }
    if problems or overall is None:
        details["problems"] = problems
        return ItemVerdict.unscored(
            item_id, Status.INCONSISTENT, "; ".join(problems), raw, **details
        )
    assessment = details["summary"].get("assessment", "")
    reason = assessment.strip() if isinstance(assessment, str) else ""
    return ItemVerdict(item_id, Status.OK, overall, reason, raw, details)


def _criterion_records(
    entries: list[Any],
    criteria: Sequence[Criterion],
    problems: list[str],
    log: ToleranceLog,
) -> dict[str, dict[str, Any]]:
    """Check each per-criterion record; problems are appended, records returned by name."""
    by_name = {c.name: c for c in criteria}
    by_folded = {" ".join(c.name.split()).casefold(): c for c in criteria}
    records: dict[str, dict[str, Any]] = {}
    for entry in entries:
        name = entry.get("criterion") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(name, str):
            problems.append("a scores entry has no criterion name")
            continue
        criterion = by_name.get(name.strip())
        if criterion is None:
            criterion = by_folded.get(" ".join(name.split()).casefold())
            if criterion is not None:
                log.add("criterion_name_case")
        if criterion is None:
            problems.append(f"unknown criterion {name!r}")
            continue
        if criterion.name in records:
            problems.append(f"criterion {criterion.name!r} is scored more than once")
            continue
        records[criterion.name] = _check_entry(entry, criterion, problems, log)
    problems.extend(f"criterion {c.name!r} is missing" for c in criteria if c.name not in records)
    return records


def _check_entry(
    entry: dict[str, Any], criterion: Criterion, problems: list[str], log: ToleranceLog
) -> dict[str, Any]:
    """Check one criterion's score and maxScore; return what the judge said about it."""
    score = json_number(entry.get("score"), log)
    label = f"criterion {criterion.name!r}"
    if score is None:
        problems.append(f"{label} has no numeric score")
    elif not score.is_integer():
        problems.append(f"{label} score {score} is not a whole number")
    elif not criterion.min_score <= score <= criterion.max_score:
        problems.append(
            f"{label} score {describe_value(score)} is outside its scale "
            f"{criterion.min_score}-{criterion.max_score}"
        )
    reported_max = json_number(entry.get("maxScore"), log)
    if "maxScore" not in entry:
        log.add("missing_max_score")
    elif reported_max is None or reported_max != criterion.max_score:
        problems.append(
            f"{label} reports maxScore {entry.get('maxScore')!r}, "
            f"but its scale ends at {criterion.max_score}"
        )
    if score is not None and reported_max is not None and score > reported_max:
        problems.append(f"{label} score {describe_value(score)} is above its maxScore")
    return {
        "score": score,
        "weight": criterion.weight,
        "max_score": criterion.max_score,
        "reported_max_score": reported_max,
        "evidence": entry.get("evidence", []),
        "justification": entry.get("justification", ""),
        "improvement": entry.get("improvement", ""),
    }


def _weighted_mean(
    records: dict[str, dict[str, Any]], criteria: Sequence[Criterion]
) -> float | None:
    """sum(w_i * s_i) / sum(w_i) over all criteria, or None if any score is absent."""
    weighted = 0.0
    for criterion in criteria:
        score = records.get(criterion.name, {}).get("score")
        if score is None:
            return None
        weighted += criterion.weight * score
    return weighted / sum(c.weight for c in criteria)


def _criterion_entry(criterion: Criterion) -> dict[str, Any]:
    """The schema of one criterion's record (its name and score range as enums)."""
    return closed_object(
        {
            "criterion": {"type": "string", "enum": [criterion.name]},
            "evidence": string_list(),
            "score": {
                "type": "integer",
                "enum": list(range(criterion.min_score, criterion.max_score + 1)),
            },
            "maxScore": {"type": "integer", "enum": [criterion.max_score]},
            "justification": {"type": "string"},
            "improvement": {"type": "string"},
        }
    )


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """Evidence-first per-criterion records, the weighted overall score and a summary."""
    if not criteria:
        raise ValueError("a direct_scoring_json schema needs at least one criterion")
    entries = [_criterion_entry(criterion) for criterion in criteria]
    items: dict[str, Any] = entries[0] if len(entries) == 1 else {"anyOf": entries}
    count = len(entries)
    return closed_object(
        {
            "scores": {"type": "array", "items": items, "minItems": count, "maxItems": count},
            "overallScore": {"type": "number"},
            "summary": closed_object(
                {
                    "assessment": {"type": "string"},
                    "strengths": string_list(),
                    "weaknesses": string_list(),
                    "priorities": string_list(),
                }
            ),
        }
    )


SPEC = register(
    FormatSpec(
        name="direct_scoring_json",
        batched=False,
        completion_tokens_per_item=400,
        parse=parse,
        schema=schema,
        logprob_anchor="none",
        needs_criteria=True,
    )
)
