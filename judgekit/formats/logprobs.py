"""Logprob-weighted expected scores (G-Eval style) from a reply's per-token top logprobs.

Method. The reply is rebuilt from the first alternative at each position (OpenAI lists the
alternatives most likely first, which is the emitted token under greedy decoding). When the
reply text is passed too, the score spelled by those tokens must equal the score in the reply,
so a sampled, less likely score token gives None instead of a wrong continuation. The score
is located in the rebuilt text by its anchor (``"rating":``, the last ``SCORE:`` line,
``"score":``, or ``ID,`` for batched lines), and the token position where the number starts
is found. Each alternative at that position is read as a number, sharing whatever text the
emitted token had before the digits (e.g. a leading space):

* a number that is complete (followed by non-digits, or with no longer value on the scale
  starting with it) adds its probability to that value;
* a number that could still grow into another value (``1`` on a 0-10 scale may become ``10``)
  is followed into the next position, but only if it is the emitted token, because that is the
  only continuation the endpoint reported: ``P(10) = P("1") * P("0" next)`` and
  ``P(1) = P("1") * P(a non-digit next)``;
* the probability of such a prefix that was *not* emitted cannot be split and is "unresolved".

The expected score is ``sum(p(v) * v) / sum(p(v))`` over the scale's allowed values (abstain
values and off-scale numbers are left out of both sums). It is None, never a fallback, when the
logprobs are absent, the anchor or number cannot be found, the emitted number is not an allowed
score (an abstention such as -1 has no expected score), or the unresolved share of the numeric
probability exceeds ``max_unresolved_share``.

Limits: only the top-k alternatives the endpoint returned are seen, so mass outside them is
ignored; a value whose spelling needs a different tokenisation before the number (e.g. ``:7``
as one token when ``: 7`` was emitted) is missed; a score sampled against the most likely token
is caught only when ``reply_text`` is passed.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from judgekit.formats.ids import IdMatcher
from judgekit.types import Scale, TopLogprobs

_RATING_ANCHOR = re.compile(r'"rating"\s*:\s*"?')
_SCORE_ANCHOR = re.compile(
    r'^[^\S\n]*[>*_#\-]*[^\S\n]*(?:final\s+)?score[\s*_]*[:=][\s*_]*\[?[^\S\n]*|"score"\s*:\s*"?',
    re.IGNORECASE | re.MULTILINE,
)
_ID_LINE = re.compile(
    r"^[^\S\n]*(?:[-*•]\s+|\d{1,3}[.)]\s+)?(?:id\s*[:#]?\s*)??"
    r"(?P<id>[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)"
    r"(?:[^\S\n]*[,;:=|\t][^\S\n]*|[^\S\n]+[-–—][^\S\n]+)(?P<number>-?\d+)[^\S\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_JSON_ID_SCORE = re.compile(
    r'"id"\s*:\s*"?(?P<id>[^",}\s]+)"?\s*,\s*"score"\s*:\s*"?(?P<number>-?\d)'
)
_EMITTED_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class _Masses:
    """Probability gathered per scale value, and the part that could not be attributed."""

    by_value: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    unresolved: float = 0.0


def expected_score(
    top_logprobs: TopLogprobs,
    scale: Scale,
    *,
    anchor: str | None = None,
    reply_text: str | None = None,
    max_unresolved_share: float = 0.01,
) -> float | None:
    """Probability-weighted score of a single-item reply, or None when it cannot be computed.

    Args:
        top_logprobs: Per generated token, the (token, logprob) alternatives, most likely first.
        scale: The rubric's scale; the expectation runs over ``scale.allowed``.
        anchor: The format's ``logprob_anchor``: ``"rating"`` (after ``"rating":``) or
            ``"score"`` (the last ``SCORE:`` line or ``"score":``). None tries both in that
            order, and gives None for a reply holding a ``"scores"`` list. ``"id"`` and
            ``"none"`` give None (use :func:`expected_scores_by_id` for batches; a
            direct-scoring overall is computed by the judge, not a single emitted token).
        reply_text: The reply as received. When given, the score read from the most likely
            tokens must equal the score in the reply; otherwise the judge sampled a less likely
            token and the result is None (its continuation tokens were not reported).
        max_unresolved_share: Largest share of the numeric probability that may be left
            unattributed (a non-emitted prefix such as ``1`` on a 0-10 scale).
    """
    if anchor in ("id", "none") or not top_logprobs:
        return None
    text, starts = _emitted_text(top_logprobs)
    if anchor is None and '"scores"' in text:
        return None  # a batched or direct-scoring JSON reply: no single emitted score
    anchor_end = _single_anchor(text, anchor)
    if anchor_end is None:
        return None
    if reply_text is not None:
        reply_anchor = _single_anchor(reply_text, anchor)
        if reply_anchor is None or _number_at(reply_text, reply_anchor) != _number_at(
            text, anchor_end
        ):
            return None
    return _expected_at(top_logprobs, text, starts, anchor_end, scale, max_unresolved_share)


def expected_scores_by_id(
    top_logprobs: TopLogprobs,
    scale: Scale,
    item_ids: Sequence[str],
    *,
    reply_text: str | None = None,
    max_unresolved_share: float = 0.01,
) -> dict[str, float | None]:
    """Per expected ID, the probability-weighted score of its ``ID,score`` line (or JSON record).

    An ID gets None when it has no line, more than one line, its score in ``reply_text`` (if
    given) differs from the one spelled by the most likely tokens, or its score position cannot
    be resolved (same rules as :func:`expected_score`).
    """
    matcher = IdMatcher(item_ids)
    result: dict[str, float | None] = dict.fromkeys(matcher.expected)
    if not top_logprobs:
        return result
    text, starts = _emitted_text(top_logprobs)
    positions = _batch_positions(text, matcher)
    written = _batch_positions(reply_text, matcher) if reply_text is not None else None
    for item_id, found in positions.items():
        if len(found) != 1:
            continue
        if written is not None:
            in_reply = written.get(item_id, [])
            if len(in_reply) != 1 or _number_at(reply_text or "", in_reply[0]) != _number_at(
                text, found[0]
            ):
                continue
        result[item_id] = _expected_at(
            top_logprobs, text, starts, found[0], scale, max_unresolved_share
        )
    return result


def _single_anchor(text: str, anchor: str | None) -> int | None:
    """Where the number of a single-item reply starts (just after its label), if found."""
    if anchor in (None, "rating"):
        rating = _RATING_ANCHOR.search(text)
        if rating:
            return rating.end()
    if anchor in (None, "score"):
        matches = list(_SCORE_ANCHOR.finditer(text))
        if matches:
            return matches[-1].end()
    return None


def _batch_positions(text: str, matcher: IdMatcher) -> dict[str, list[int]]:
    """Per expected ID, the offsets where a score for it starts (lines and JSON records)."""
    positions: dict[str, list[int]] = defaultdict(list)
    for pattern in (_ID_LINE, _JSON_ID_SCORE):
        for match in pattern.finditer(text):
            item_id, _ = matcher.match(match["id"])
            if item_id is not None:
                positions[item_id].append(match.start("number"))
    return positions


def _number_at(text: str, offset: int) -> str | None:
    """The number written at ``offset`` (None if there is none)."""
    number = _EMITTED_NUMBER.match(text, offset)
    return number.group(0) if number else None


def _emitted_text(top_logprobs: TopLogprobs) -> tuple[str, list[int]]:
    """The reply rebuilt from the first alternatives, and each token's start offset."""
    starts: list[int] = []
    pieces: list[str] = []
    offset = 0
    for alternatives in top_logprobs:
        token = alternatives[0][0] if alternatives else ""
        starts.append(offset)
        pieces.append(token)
        offset += len(token)
    return "".join(pieces), starts


def _expected_at(
    top_logprobs: TopLogprobs,
    text: str,
    starts: list[int],
    anchor_end: int,
    scale: Scale,
    max_unresolved_share: float,
) -> float | None:
    """The expectation for the number that starts at or just after ``anchor_end``."""
    number = _EMITTED_NUMBER.match(text, anchor_end)
    if number is None:
        return None
    written = number.group(0)
    if "." in written or int(written) not in scale.allowed:
        return None
    char = number.start()
    position = bisect.bisect_right(starts, char) - 1
    if not top_logprobs[position]:
        return None
    lead = text[starts[position] : char]
    masses = _Masses()
    allowed = {str(v) for v in scale.allowed}
    _gather(top_logprobs, position, lead, "", 1.0, allowed, masses)
    numeric = sum(masses.by_value.values())
    if numeric <= 0 or masses.unresolved / (numeric + masses.unresolved) > max_unresolved_share:
        return None
    return sum(v * p for v, p in masses.by_value.items()) / numeric


def _gather(
    top_logprobs: TopLogprobs,
    position: int,
    lead: str,
    prefix: str,
    weight: float,
    allowed: set[str],
    masses: _Masses,
) -> None:
    """Distribute ``weight`` over the numbers that the alternatives at ``position`` spell."""
    emitted = top_logprobs[position][0][0]
    for token, logprob in top_logprobs[position]:
        probability = weight * math.exp(logprob)
        if prefix:
            body = token
        elif token.startswith(lead):
            body = token[len(lead) :].lstrip()
        elif not lead.strip():
            body = token.lstrip()
        else:
            continue
        rest = body.lstrip("0123456789")
        digits = body[: len(body) - len(rest)]
        candidate = prefix + digits
        if not candidate:
            continue
        if not digits or (rest and not rest.startswith(".")):
            _add(candidate, probability, allowed, masses)
        elif rest.startswith(".") and rest[1:2].isdigit():
            continue  # a decimal such as 4.5 is off the scale
        elif rest == ".":
            masses.unresolved += probability
        elif not any(v.startswith(candidate) and v != candidate for v in allowed):
            _add(candidate, probability, allowed, masses)
        elif token == emitted and position + 1 < len(top_logprobs):
            if top_logprobs[position + 1]:
                _gather(top_logprobs, position + 1, "", candidate, probability, allowed, masses)
        elif token == emitted:
            _add(candidate, probability, allowed, masses)  # the reply ends after the number
        else:
            masses.unresolved += probability


def _add(candidate: str, probability: float, allowed: set[str], masses: _Masses) -> None:
    """Credit ``probability`` to a scale value; anything else is off the scale and dropped."""
    if candidate in allowed:
        masses.by_value[int(candidate)] += probability
