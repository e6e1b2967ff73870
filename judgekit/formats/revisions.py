"""Scores revised in prose after the answer ("SCORE: 4" ... "on reflection, a 3 is fairer").

A judge sometimes changes its mind after writing its answer, in a sentence rather than in a
second answer line. A careful reader then holds two scores and cannot tell which one the judge
meant, so the item is flagged, never given either. Only the text after the answer is searched:
weighing scores before the final line is how judges reason and is not a revision.

A revision is a rating phrase with a number: ``give it a 3``, ``rate this 3/5``, ``deserves
a 3``, ``score of 3``, ``Rating: 5``, ``should be 3``, ``a 3 would be fairer``, ``Correction:
2,3``. A number equal to the answer's is a restatement, not a revision. In a batch, the phrase
belongs to the row it names (``row 2``, ``item 2``, ``#2``, ``2,3``); naming no row, it counts
for every row only when it says the judge changed its mind (``actually``, ``on reflection``,
``should``, ``lower`` ...): a bare ``Score: 5`` under a batch may be a total.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from judgekit.formats.common import describe_value
from judgekit.formats.ids import IdMatcher
from judgekit.formats.reply import ReplyInput
from judgekit.types import ItemVerdict, Scale, Status

_N = r"(?P<n>[+-]?\d+(?:\.\d+)?)(?:\s*(?:/|out\s+of)\s*\d+)?(?![\d.,]*\d|\w)"
_A = r"(?:an?\s+)?"
#: Words a judge puts before a row's ID in prose ("row 2", "item 2", "#2").
_ROW_WORD = r"(?:row|item|id|question|answer|response|entry|no\.?|number)"
_ROW_ID = r"[^\s,.:;!?)]+"
_ROW = rf"(?:(?:{_ROW_WORD}|#)\s*(?P<id>{_ROW_ID})|it|this(?:\s+one)?|that|the\s+\w+)"
_VERB = (
    r"(?:giv|rat|scor|assign|award|grad|deserv|merit|lower|rais|bump|chang|revis|adjust"
    r"|downgrad|upgrad|mov)\w*"
)
_FAIR = r"(?:fair|fairer|appropriate|accurate|better|right|correct|apt|justified|warranted)"
_PHRASES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # score of 3 / rating: 5 / grade should be 3 / score to a 3
        rf"\b(?:score|rating|grade|mark)\s*(?:of|to|:|=|is|would\s+be|should\s+be|becomes)\s*{_A}{_N}",
        # give it a 3 / rate row 2 a 3 / deserves a 3 / lower it to 3
        rf"\b{_VERB}(?:\s+{_ROW})?(?:\s+(?:down|up))?(?:\s+(?:to|at|with))?\s+{_A}{_N}",
        # a 3 would be fairer / 3 is more appropriate
        rf"\b{_A}{_N}\s+(?:would|is|seems|might|may|feels)\s+(?:be\s+)?(?:more\s+|a\s+)?{_FAIR}",
        # should be 3 / should get a 3
        rf"\b(?:should|would|could)\s+(?:be|get|receive|have)\s+{_A}{_N}",
        # Correction: 2,3 / Update - 2: 3
        r"\b(?:correction|corrected|update[d]?|revised|revision|amend\w*|actually)\s*[:\-–—]?\s*"
        rf"(?P<id>[^\s,:;]+)\s*[,:;]\s*{_N}",
    )
)
_ROW_MENTION = re.compile(rf"\b{_ROW_WORD}\s*(?P<id>{_ROW_ID})|#(?P<hash>{_ROW_ID})", re.I)
#: "I did not give it a 5", "wouldn't rate it 3": a score the judge says it did not give.
_NEGATED = re.compile(r"(?:\b(?:not|never|no|cannot)|n't)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_CHANGE_OF_MIND = re.compile(
    r"\b(?:actually|on\s+(?:second\s+)?thought|on\s+reflection|reconsider\w*|correct\w*"
    r"|revis\w*|instead|rather|fairer|more\s+appropriate|should|lower\w*|rais\w*|bump\w*"
    r"|change\w*|adjust\w*)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?](?!\d)|\n|$)")


@dataclass(frozen=True)
class Revision:
    """A score given in prose after the answer: its value, the row it names, the sentence."""

    value: float
    item_id: str | None
    text: str


def revisions(text: str, matcher: IdMatcher | None = None) -> list[Revision]:
    """The scores ``text`` (the reply after its answer) gives in rating phrases.

    With a ``matcher`` (a batch), each revision carries the expected ID its sentence names, or
    None when it names no row or several.
    """
    found = []
    for sentence in _SENTENCE.finditer(text):
        words = sentence.group(0)
        seen: set[int] = set()
        for pattern in _PHRASES:
            for match in pattern.finditer(words):
                if match.start("n") in seen or _NEGATED.search(words[: match.start()]):
                    continue
                seen.add(match.start("n"))
                written = match.groupdict().get("id")
                item_id = None if matcher is None else _named_row(words, written, matcher)
                if matcher is not None and item_id is None and not _CHANGE_OF_MIND.search(words):
                    continue  # "Score: 5" under a batch may be a total; not a row's revision
                found.append(Revision(float(match["n"]), item_id, words.strip()))
    return found


def _named_row(sentence: str, written: str | None, matcher: IdMatcher) -> str | None:
    """The one expected ID a sentence names (its phrase's own ID first), else None."""
    if written is not None:
        item_id, _ = matcher.match(written.lstrip("#"))
        if item_id is not None:
            return item_id
    named = set()
    for mention in _ROW_MENTION.finditer(sentence):
        item_id, _ = matcher.match(mention.group("id") or mention.group("hash"))
        if item_id is not None:
            named.add(item_id)
    return named.pop() if len(named) == 1 else None


def after_answer(reply: ReplyInput, end: int) -> str:
    """The reply's text after offset ``end``, without lines copied from the request.

    A truncated reply's unfinished last line is left out (it may stop inside a number).
    """
    lines = reply.text[end:].split("\n")
    if reply.truncated:
        lines = lines[:-1]
    return "\n".join(line for line in lines if not reply.echoes.has_line(line))


def overrule(verdict: ItemVerdict, found: Sequence[Revision], scale: Scale) -> ItemVerdict:
    """``verdict``, or INCONSISTENT when a later phrase gives its item another score.

    Only numbers within the scale's range count (``should be 1969`` is about a year); a
    revision naming no row applies to every row of a batch.
    """
    if verdict.status is not Status.OK or verdict.score is None:
        return verdict
    values = [*scale.allowed, *scale.abstain]
    low, high = min(values), max(values)
    other = [
        r
        for r in found
        if r.item_id in (None, verdict.item_id) and r.value != verdict.score
        and low <= r.value <= high
    ]  # fmt: skip
    if not other:
        return verdict
    given, later = describe_value(verdict.score), describe_value(other[0].value)
    reason = f"the reply gives {given} and also {later} ({other[0].text!r}); none is chosen"
    raw = "\n".join([verdict.raw, other[0].text])
    return ItemVerdict.unscored(
        verdict.item_id, Status.INCONSISTENT, reason, raw, values=[given, later]
    )
