"""Single-item ``{"rating": n, "reason": "..."}`` replies (seed 002).

The rating must be a whole number on the scale (a numeric string, ``"7/10"`` with the scale's
maximum, capitalised keys, ``score`` for ``rating``, one outer wrapper or a one-element list are
read and recorded); an abstain value gives ABSTAIN, any other number OUT_OF_RANGE. Several JSON
answers with different ratings give DUPLICATE. A JSON object copied from the item's own text is
no evidence. With no JSON at all, one rating in plain text is read as ``score_line`` reads it
(a ``Rating: N`` line, one first-person rating phrase ...: ``plain_rating_line``); beside the
JSON, a ``Rating: N`` line or a later rating phrase with another number makes the item
INCONSISTENT (:mod:`judgekit.formats.revisions`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from judgekit.formats.candidates import describe, find_candidates
from judgekit.formats.common import (
    NUMBER_PATTERN,
    JsonValue,
    describe_value,
    find_json_values,
    find_python_dicts,
    json_number,
    key_values,
    lookup_key,
    note_json_surroundings,
    text_number,
    unparseable_reason,
    unwrap,
    verdict_for_value,
)
from judgekit.formats.reply import ReplyInput
from judgekit.formats.revisions import Revision, after_answer, overrule, revisions
from judgekit.formats.schemas import closed_object
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, ItemVerdict, Scale, Status

_FRACTION = re.compile(rf"\s*(?P<number>{NUMBER_PATTERN})\s*/\s*(?P<den>\d+)\s*")
_RATING_LINE = re.compile(
    rf"[\s*_#>]*rating[\s*_]*:[\s*_]*(?P<number>{NUMBER_PATTERN})[\s*_.]*", re.I
)


def _answers(reply: ReplyInput) -> list[tuple[JsonValue, dict[str, Any], str]]:
    """The reply's own JSON answers: (where, the object, its rating key); echoes left out."""
    found = find_json_values(reply.text, reply.log)
    if not any(isinstance(v.value, (dict, list)) for v in found):
        found = find_python_dicts(reply.text)
        if found:
            reply.log.add("python_dict")
    answers = []
    for value in found:
        scratch = ToleranceLog()
        inner = unwrap(value.value, ("rating", "reason"), scratch)
        key = _rating_key(inner, scratch) if isinstance(inner, dict) else None
        if key is None or not isinstance(inner, dict):
            continue
        if reply.echoes.has_span(reply.text[value.start : value.end]):
            reply.log.add("echoed_text_ignored")
            continue
        for name in scratch.as_tuple():
            reply.log.add(name)
        answers.append((value, inner, key))
    return answers


def _rating_key(answer: dict[str, Any], log: ToleranceLog) -> str | None:
    """The key holding the rating: ``rating``, else a lone ``score`` (``rating_key_synonym``)."""
    key = lookup_key(answer, "rating", log)
    if key is None and (key := lookup_key(answer, "score", log)) is not None:
        log.add("rating_key_synonym")
    return key


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read a rating reply: a JSON object with a ``rating`` key, fenced or inside prose."""
    (item_id,) = reply.item_ids
    log = reply.log
    answers = _answers(reply)
    if not answers:
        return (_plain_line(item_id, reply),)
    note_json_surroundings(reply.text, [a[0] for a in answers], log)
    ratings = [rating for _, obj, key in answers for rating in key_values(obj, key)]
    raw = "\n".join(reply.text[v.start : v.end] for v, _, _ in answers)
    if len({json.dumps(r) for r in ratings}) > 1:
        reason = f"the reply gives {len(ratings)} different ratings {ratings}"
        return (ItemVerdict.unscored(item_id, Status.DUPLICATE, reason, raw, values=ratings),)
    if len(ratings) > 1:
        log.add("repeated_json")
    _, answer, key = answers[-1]
    rating, out_of = _rating_value(answer[key], log)
    if rating is None:
        reason = f"the rating {answer[key]!r} is not a number"
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, raw),)
    reason_key = lookup_key(answer, "reason", log) or "reason"
    judge_reason = answer.get(reason_key)
    if not isinstance(judge_reason, str) or not judge_reason.strip():
        log.add("missing_reason")
        judge_reason = ""
    elif list(answer).index(reason_key) < list(answer).index(key):
        log.add("reason_before_rating")
    verdict = verdict_for_value(
        item_id, rating, reply.scale, raw=raw, judge_reason=judge_reason.strip(), out_of=out_of,
        log=log,
    )  # fmt: skip
    later = revisions(after_answer(reply, answers[-1][0].end))
    earlier = [m for m in _own_rating_lines(reply) if float(m["number"]) != rating]
    if earlier:  # a "Rating: N" line of the reply that the JSON contradicts
        later.insert(0, Revision(float(earlier[0]["number"]), None, earlier[0].group(0).strip()))
    return (overrule(verdict, later, reply.scale),)


def _rating_value(value: Any, log: ToleranceLog) -> tuple[float | None, int | None]:
    """A JSON rating as a number, reading a ``"7/10"`` string as 7 out of 10."""
    if isinstance(value, str):
        fraction = _FRACTION.fullmatch(value)
        if fraction:
            log.add("score_as_string")
            return text_number(fraction["number"], log), int(fraction["den"])
    return json_number(value, log), None


def _own_rating_lines(reply: ReplyInput) -> list[re.Match[str]]:
    """The reply's ``Rating: N`` lines that are not copies of the request."""
    return [
        match
        for line in reply.lines()
        if (match := _RATING_LINE.fullmatch(line)) and not reply.echoes.has_line(line)
    ]


def _plain_line(item_id: str, reply: ReplyInput) -> ItemVerdict:
    """With no JSON answer: one rating in plain text is read as ``score_line`` reads it.

    A ``Rating: N`` line, a rating closing a paragraph, one first-person rating phrase ...
    (:mod:`judgekit.formats.candidates`); several different ones, or none, leave the item
    unscored with the reason naming what was seen.
    """
    candidates = find_candidates(reply)
    taken = [c for c in candidates if c.taken]
    if len({(c.value, c.out_of) for c in taken}) == 1:
        reply.log.add("plain_rating_line")
        chosen = taken[-1]
        if chosen.place == "phrase":
            reply.log.add("rating_in_prose")
        explanation = reply.text[: chosen.start].strip() or chosen.context
        return verdict_for_value(
            item_id, chosen.value, reply.scale, raw=chosen.raw, judge_reason=explanation,
            out_of=chosen.out_of, log=reply.log,
        )  # fmt: skip
    if taken:
        shown = " and ".join(f"{describe_value(c.value)} (`{c.raw}`)" for c in taken[:2])
        reason = f"no JSON answer, and two ratings in the text, {shown}; none is chosen"
        return ItemVerdict.unscored(item_id, Status.INCONSISTENT, reason, reply.text)
    if candidates:
        reason = f"no JSON answer; {describe(candidates[-1])}"
        return ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, reply.text)
    other_json = [v for v in find_json_values(reply.text) if isinstance(v.value, dict)]
    if "echoed_text_ignored" in reply.log.as_tuple():
        reason = "the only JSON answer repeats an item's text or the prompt's example"
    elif other_json:
        keys = sorted({str(key) for v in other_json for key in v.value})
        reason = f"the reply's JSON has no 'rating' key (keys: {', '.join(keys)})"
    else:
        reason = unparseable_reason(reply.text, "JSON object with a 'rating'")
    return ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, reply.text)


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"rating", "reason"}``, rating first; the rating includes the abstain values."""
    return closed_object(
        {
            "rating": {"type": "integer", "enum": [*scale.abstain, *scale.allowed]},
            "reason": {"type": "string"},
        }
    )


SPEC = register(
    FormatSpec(
        name="rating_json",
        batched=False,
        completion_tokens_per_item=60,
        parse=parse,
        schema=schema,
        logprob_anchor="rating",
    )
)
