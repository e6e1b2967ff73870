"""A rating pair: the judge scores each answer on the rubric's scale; the verdict is derived.

The reply ends with two lines, ``Score A: N`` and ``Score B: N`` (``Rating`` for ``Score``,
``[[N]]`` for ``N`` are read too), or is the JSON form ``{"explanation", "score_a",
"score_b"}``. The verdict is derived by :func:`ratings_preference` with a stated tie margin
(:data:`TIE_MARGIN`: ratings closer than or equal to it are a tie): the score is 1 when A's
rating exceeds B's by more than the margin, -1 in the other direction, 0 otherwise; both
ratings and the margin are kept in ``details`` so another margin can be applied later. A side
rated twice with different values is INCONSISTENT, a side not rated is UNPARSEABLE, a rating off
the scale is OUT_OF_RANGE: no verdict is derived from half a reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from judgekit.formats.reply import ReplyInput
from judgekit.formats.schemas import closed_object
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.verdicts import verdict_label
from judgekit.types import Criterion, ItemVerdict, Scale, Status

#: Ratings whose difference is at most this are a tie (stated in every verdict's details).
TIE_MARGIN = 0.0
_RATING = re.compile(
    r"(?im)^[ \t#*>_\-]*(?:score|rating)\s+(?:for\s+|of\s+)?(?:answer\s+|assistant\s+)?"
    r"\(?([ab])\)?[ \t*_]*[:=][ \t*_]*\[{0,2}\s*(-?\d+(?:\.\d+)?)\s*\]{0,2}"
    r"(?:\s*/\s*\d+)?[ \t*_.]*$"
)


def ratings_preference(rating_a: float, rating_b: float, margin: float = TIE_MARGIN) -> float:
    """The signed preference two ratings stand for: 1 (A), -1 (B) or 0 (within ``margin``).

    >>> ratings_preference(8, 6), ratings_preference(6, 6), ratings_preference(7, 8, margin=1)
    (1.0, 0.0, 0.0)
    """
    difference = rating_a - rating_b
    return 1.0 if difference > margin else -1.0 if difference < -margin else 0.0


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read both ratings; derive the verdict only when each side has one rating on the scale."""
    (item_id,) = reply.item_ids
    ratings: dict[str, set[float]] = {"a": set(), "b": set()}
    raws: list[str] = []
    reason = ""
    from_json = _json_ratings(reply.text)
    if from_json is not None:
        reason, found = from_json
        for side, number in found.items():
            ratings[side].add(number)
        raws.append(reply.text.strip())
    else:
        for match in _RATING.finditer(reply.text):
            ratings[match.group(1).lower()].add(float(match.group(2)))
            raws.append(match.group(0).strip())
        first = _RATING.search(reply.text)
        reason = reply.text[: first.start()].strip() if first else ""
    raw = "\n".join(raws)
    for side, given in ratings.items():
        if not given:
            why = f"no rating for answer {side.upper()} ('Score {side.upper()}: N')"
            return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, why, raw or reply.text),)
        if len(given) > 1:
            shown = ", ".join(f"{v:g}" for v in sorted(given))
            why = f"answer {side.upper()} is rated {shown}; none is chosen"
            return (ItemVerdict.unscored(item_id, Status.INCONSISTENT, why, raw),)
        (value,) = given
        if not reply.scale.accepts(value):
            why = f"answer {side.upper()}'s rating {value:g} is not on the scale"
            return (ItemVerdict.unscored(item_id, Status.OUT_OF_RANGE, why, raw, value=value),)
    (rating_a,), (rating_b,) = ratings["a"], ratings["b"]
    preference = ratings_preference(rating_a, rating_b)
    details = {
        "verdict": verdict_label(preference), "rating_a": rating_a, "rating_b": rating_b,
        "tie_margin": TIE_MARGIN,
    }  # fmt: skip
    return (ItemVerdict(item_id, Status.OK, preference, reason, raw, details),)


def _json_ratings(text: str) -> tuple[str, dict[str, float]] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    found = {
        side: float(value[key])
        for side, key in (("a", "score_a"), ("b", "score_b"))
        if isinstance(value.get(key), int | float) and not isinstance(value.get(key), bool)
    }
    return str(value.get("explanation", "")), found


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "score_a", "score_b"}``, each score one of the scale's values."""
    score: dict[str, Any] = {"type": "integer", "enum": list(scale.allowed)}
    if scale.step is not None:
        score = {"type": "number"}
    return closed_object({"explanation": {"type": "string"}, "score_a": score, "score_b": score})


SPEC = register(
    FormatSpec(
        name="pair_rating",
        batched=False,
        completion_tokens_per_item=200,
        parse=parse,
        schema=schema,
        logprob_anchor="none",
    )
)
