"""Parser for single-item ``{"rating": n, "reason": "..."}`` replies (seed 002)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from judgekit.parsing.common import (
    clean_text,
    find_json_values,
    find_python_dicts,
    json_number,
    key_values,
    note_json_surroundings,
    single_item_id,
    unparseable_reason,
    verdict_for_value,
)
from judgekit.parsing.tolerances import ToleranceLog
from judgekit.types import ItemVerdict, ParsedReply, Scale, Status


def parse_rating_json(text: str, scale: Scale, item_ids: Sequence[str]) -> ParsedReply:
    """Read a rating reply: a JSON object with a ``rating`` key, fenced or inside prose.

    The rating must be a whole number on the scale (a numeric string is accepted and recorded);
    an abstain value gives ABSTAIN, any other number OUT_OF_RANGE. Several JSON answers with
    different ratings give DUPLICATE. The ``reason`` text becomes the verdict's reason.
    """
    item_id = single_item_id(item_ids, "rating_json")
    log = ToleranceLog()
    text = clean_text(text, log)
    found = [v for v in find_json_values(text) if isinstance(v.value, dict) and "rating" in v.value]
    if not found:
        found = [v for v in find_python_dicts(text) if "rating" in v.value]
        if found:
            log.add("python_dict")
    if not found:
        return _unparseable(item_id, text, log)
    note_json_surroundings(text, found, log)
    ratings = [rating for v in found for rating in key_values(v.value, "rating")]
    raw = "\n".join(text[v.start : v.end] for v in found)
    if len({json.dumps(r) for r in ratings}) > 1:
        verdict = ItemVerdict.unscored(
            item_id,
            Status.DUPLICATE,
            f"the reply gives {len(ratings)} different ratings {ratings}",
            raw,
            values=ratings,
        )
        return ParsedReply((verdict,), log.as_tuple())
    if len(ratings) > 1:
        log.add("repeated_json")
    answer = found[-1].value
    rating = json_number(answer["rating"], log)
    if rating is None:
        verdict = ItemVerdict.unscored(
            item_id,
            Status.UNPARSEABLE,
            f"the rating {answer['rating']!r} is not a number",
            raw,
        )
        return ParsedReply((verdict,), log.as_tuple())
    reason = answer.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        log.add("missing_reason")
        reason = ""
    elif list(answer).index("reason") < list(answer).index("rating"):
        log.add("reason_before_rating")
    verdict = verdict_for_value(
        item_id, rating, scale, raw=raw, judge_reason=reason.strip(), log=log
    )
    return ParsedReply((verdict,), log.as_tuple())


def _unparseable(item_id: str, text: str, log: ToleranceLog) -> ParsedReply:
    """An UNPARSEABLE verdict that says whether JSON was present at all."""
    other_json = [v for v in find_json_values(text) if isinstance(v.value, dict)]
    if other_json:
        keys = sorted({key for v in other_json for key in v.value})
        reason = f"the reply's JSON has no 'rating' key (keys: {', '.join(keys)})"
    else:
        reason = unparseable_reason(text, "JSON object with a 'rating'")
    verdict = ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, text)
    return ParsedReply((verdict,), log.as_tuple())
