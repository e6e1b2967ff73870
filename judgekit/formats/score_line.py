"""Single-item "explanation, then ``SCORE: N``" replies (seed 004) and their JSON form.

The rubric's ``score_marker`` says how the prompt asks for the score (``SCORE: N`` by default,
``Rating: [[N]]``, ``[RESULT] N``, ``{"score": N}``). Every rating the reply writes is a
candidate (:mod:`judgekit.formats.candidates`): a label and a number alone on its line, closing
a paragraph or opening a line with a comment is taken; inside a sentence only the asked
``[[N]]`` is; the whole reply being a number, or one first-person rating phrase when nothing
else is there, is taken too. Quoted examples, text copied from the request, ratings of
something else and conditional ratings never are.
The JSON form ``{"explanation": "...", "score": n}`` is read too, and JSON objects and lines
are merged: several readings with one value are read once (``multiple_score_lines``), readings
with different values make the item INCONSISTENT with every value in ``details`` — never "the
last one wins", which is what an echoed line or a run-on invented example would exploit. A
rating of something else or a conditional one with another value is a second verdict too. A
different score given in prose after the answer makes the item INCONSISTENT
(:mod:`judgekit.formats.revisions`). Every refusal names the candidate it saw and why it was
not taken.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.formats.candidates import Candidate, describe, find_candidates, is_english_label
from judgekit.formats.common import (
    describe_value,
    find_json_values,
    json_number,
    key_values,
    lookup_key,
    note_json_surroundings,
    unparseable_reason,
    unwrap,
    verdict_for_value,
)
from judgekit.formats.reply import ReplyInput
from judgekit.formats.revisions import after_answer, overrule, revisions
from judgekit.formats.schemas import closed_object
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, ItemVerdict, Scale, Status

_LABEL_ONLY = re.compile(r"[\s>*_#\-]*(?:final\s+)?score[\s*_]*[:=].*", re.IGNORECASE)
_EXPLANATION_LABEL = re.compile(
    r"^\W*(?:explanation|evaluation|reasoning|justification)\W*:\s*", re.IGNORECASE
)
_DECIMAL = re.compile(r"\d\.\d")
_EQUALS = re.compile(r"[\s*_]*=")
_FENCE_LINE = re.compile(r"\s*(?:```|~~~)[A-Za-z0-9_+-]*\s*")
_PLACE_TOLERANCE = {
    "closing": "score_closes_paragraph",
    "opening": "score_comment",
    "sentence": "score_in_sentence",
    "whole": "bare_score",
    "phrase": "rating_in_prose",
}
#: Problems that make a candidate a second verdict when its value differs from the answer.
_SECOND_VERDICT = ("other", "conditional")


@dataclass(frozen=True)
class _Reading:
    """One score the reply gives: its value, denominator, fragment and explanation."""

    value: float | None
    raw: str
    out_of: int | None = None
    explanation: str = ""
    echoed: bool = False


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read an explanation followed by the rubric's score marker (or the JSON form)."""
    (item_id,) = reply.item_ids
    log = reply.log
    json_readings = _json_readings(reply)
    candidates = find_candidates(reply)
    taken = [c for c in candidates if c.taken]
    if taken or any(r.value is not None for r in json_readings):  # a quoted schema: no number
        json_readings = [r for r in json_readings if r.value is not None]
    own = [r for r in json_readings if not r.echoed] + [_reading(reply, c) for c in taken]
    if not own:
        return (_unread(reply, item_id, json_readings, candidates),)
    if len(own) < len(json_readings) + len(taken) or any(
        c.problem in ("echoed", "example") for c in candidates
    ):
        log.add("echoed_text_ignored")
    if len({(r.value, r.out_of) for r in own}) > 1:
        return (_inconsistent(item_id, own),)
    chosen = own[-1]
    if chosen.value is None:
        reason = f"the score in {chosen.raw!r} is not a number"
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, chosen.raw),)
    other = [c for c in candidates if c.problem in _SECOND_VERDICT and c.value != chosen.value]
    if other:
        first = other[0]
        reason = (
            f"two ratings, {describe_value(chosen.value)} and {describe_value(first.value)}: "
            f"{describe(first)}; none is chosen"
        )
        values = [describe_value(chosen.value), describe_value(first.value)]
        raw = "\n".join([chosen.raw, first.raw])
        return (ItemVerdict.unscored(item_id, Status.INCONSISTENT, reason, raw, values=values),)
    if len(own) > 1:
        log.add("multiple_score_lines")
    _note_candidates(reply, taken, log)
    explanation = next((r.explanation for r in own if r.explanation), "")
    verdict = verdict_for_value(
        item_id, chosen.value, reply.scale, raw=chosen.raw, judge_reason=explanation,
        out_of=chosen.out_of, log=log,
    )  # fmt: skip
    ends = [c.end for c in taken]
    ends += [at + len(r.raw) for r in own if (at := reply.text.rfind(r.raw)) >= 0]
    end = max(ends, default=len(reply.text))
    return (overrule(verdict, revisions(after_answer(reply, end)), reply.scale),)


def _reading(reply: ReplyInput, candidate: Candidate) -> _Reading:
    """A taken candidate as a reading; the explanation is the prose before it."""
    prose = reply.text[: candidate.start]
    if candidate.place in ("line", "opening"):
        prose = prose[: prose.rfind("\n") + 1] if "\n" in prose else ""
    prose = "\n".join(line for line in prose.split("\n") if not _FENCE_LINE.fullmatch(line))
    explanation = _EXPLANATION_LABEL.sub("", prose.strip())
    return _Reading(candidate.value, candidate.raw, candidate.out_of, explanation)


def _inconsistent(item_id: str, own: list[_Reading]) -> ItemVerdict:
    """Several different scores: every value named, none chosen."""
    values = [None if r.value is None else describe_value(r.value) for r in own]
    first = {v: r.raw for v, r in reversed(list(zip(values, own, strict=True)))}
    shown = [f"{v} (`{raw}`)" for v, raw in reversed(list(first.items()))]
    count = "two" if len(shown) == 2 else str(len(shown))
    reason = f"{count} ratings, {', '.join(shown[:-1])} and {shown[-1]}; none is chosen"
    raw = "\n".join(r.raw for r in own)
    return ItemVerdict.unscored(item_id, Status.INCONSISTENT, reason, raw, values=values)


def _unread(
    reply: ReplyInput, item_id: str, json_readings: list[_Reading], candidates: list[Candidate]
) -> ItemVerdict:
    """No verdict: name the candidates seen and why none was taken, in one line."""
    if candidates:
        reason = "; ".join(dict.fromkeys(describe(c) for c in candidates[-2:]))
        raw = "\n".join(c.raw for c in candidates)
        return ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, raw)
    if json_readings:
        reason = (
            "the only score line repeats an item's text or the prompt's example, so it is "
            "not the judge's answer"
        )
        raw = "\n".join(r.raw for r in json_readings)
        return ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, raw)
    return ItemVerdict.unscored(item_id, Status.UNPARSEABLE, _why_none(reply), reply.text)


def _note_candidates(reply: ReplyInput, taken: list[Candidate], log: ToleranceLog) -> None:
    """Record how the taken candidates depart from the rubric's marker alone on its line."""
    text = reply.text
    if any(_FENCE_LINE.fullmatch(line) for line in text.split("\n")):
        log.add("markdown_fence")
    for candidate in taken:
        if candidate.place in _PLACE_TOLERANCE:
            log.add(_PLACE_TOLERANCE[candidate.place])
        _note_label(candidate.label, reply, log)
        line_start = text.rfind("\n", 0, candidate.start) + 1
        line_end = text.find("\n", candidate.end)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        after = text[candidate.end : len(text) if line_end < 0 else line_end]
        if "[" in candidate.raw[len(candidate.label) :] and not reply.marker.brackets:
            log.add("score_in_brackets")
        if _EQUALS.match(candidate.raw, len(candidate.label)):
            log.add("separator_equals")
        if candidate.value.is_integer() and _DECIMAL.search(candidate.raw):
            log.add("decimal_notation")
        if after.lstrip(" *_").startswith(".") and candidate.place == "line":
            log.add("trailing_period")
        if "*" in line or "__" in line or "`" in line:
            log.add("markdown_emphasis")
        if line.lstrip().startswith(("#", ">")):
            log.add("line_decoration")
    ends = [_reading_end(text, c) for c in taken]
    if text[max(ends, default=len(text)) :].strip(" \n*_`.。"):
        log.add("text_after_score")


def _reading_end(text: str, candidate: Candidate) -> int:
    """Where a taken candidate's reading ends: its line for a score line, else the candidate."""
    if candidate.place not in ("line", "opening"):
        return candidate.end
    line_end = text.find("\n", candidate.end)
    return len(text) if line_end < 0 else line_end


def _note_label(label: str, reply: ReplyInput, log: ToleranceLog) -> None:
    """Record how a label departs from the marker's (``Score:`` for ``SCORE: N``)."""
    asked = reply.marker.label
    folded = " ".join(label.casefold().split())
    if not label or label == asked:
        return
    if not asked:  # an unlabelled marker ([[N]]): any label is the judge's wording
        if not is_english_label(label):
            log.add("score_label_language")
        return
    if folded == asked.casefold():
        log.add("score_label_case")
    elif folded == "[result]":
        log.add("result_tag")
    elif not is_english_label(label):
        log.add("score_label_language")
    elif folded.startswith(("final", "overall", "total")):
        log.add("final_score_label")
    else:
        log.add("score_label_synonym")


def _json_readings(reply: ReplyInput) -> list[_Reading]:
    """Readings from JSON objects holding a ``score`` key (any case, maybe wrapped)."""
    readings: list[_Reading] = []
    used = []
    score_key = reply.marker.json_key or "score"
    for found in find_json_values(reply.text, reply.log):
        scratch = ToleranceLog()
        value = unwrap(found.value, (score_key.casefold(), "explanation"), scratch)
        if not isinstance(value, dict):
            continue
        key = lookup_key(value, score_key, scratch)
        if key is None:
            continue
        raw = reply.text[found.start : found.end]
        echoed = reply.echoes.has_span(raw)
        log = ToleranceLog() if echoed else reply.log
        for name in scratch.as_tuple():
            log.add(name)
        used.append(found)
        note_key = lookup_key(value, "explanation", scratch)
        note = value.get(note_key) if note_key else None
        explanation = note.strip() if isinstance(note, str) else ""
        for score in key_values(value, key):
            number = json_number(score, log)
            # a score equal to a "SCORE: N" line of the item's text may be that line, echoed
            copied = number is not None and reply.echoes.has_line(
                f"SCORE: {describe_value(number)}"
            )
            readings.append(_Reading(number, raw, None, explanation, echoed or copied))
    if used:
        note_json_surroundings(reply.text, used, reply.log)
    return readings


def _why_none(reply: ReplyInput) -> str:
    """Why no score was read: a label line with no clean number, or nothing at all."""
    labelled = [line.strip() for line in reply.lines() if _LABEL_ONLY.fullmatch(line)]
    if labelled:
        return f"the SCORE line is not just a number on the scale: {labelled[-1]!r}"
    return unparseable_reason(reply.text, f"rating ({reply.marker.text} or a score line)")


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "score"}``: the JSON form of "explanation, then SCORE: N".

    A scale with a step (half points, continuous) takes any number here (strict structured
    outputs do not all accept ``minimum``/``multipleOf``; the reader checks range and step);
    otherwise the score is one of the values.
    """
    score: dict[str, Any] = {"type": "integer", "enum": [*scale.allowed, *scale.abstain]}
    if scale.step is not None:
        score = {"type": "number"}
    return closed_object({"explanation": {"type": "string"}, "score": score})


SPEC = register(
    FormatSpec(
        name="score_line",
        batched=False,
        completion_tokens_per_item=50,
        parse=parse,
        schema=schema,
        logprob_anchor="score",
    )
)
