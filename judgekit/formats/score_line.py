"""Single-item "explanation, then ``SCORE: N``" replies (seed 004) and their JSON form.

A score line is a line that is only a label (``SCORE``, any case, ``Final score``; ``Grade`` /
``Rating`` as named synonyms; Prometheus' ``[RESULT] N``), ``:`` or ``=``, and a number
(optionally ``[N]`` or MT-Bench's ``[[N]]``, ``N/max``, ``N out of max``, a trailing period or
a worded comment). A label inside a sentence is prose.
The JSON form ``{"explanation": "...", "score": n}`` is read too, and JSON objects and lines
are merged: several readings with one value are read once (``multiple_score_lines``), readings
with different values make the item INCONSISTENT with every value in ``details`` — never "the
last one wins", which is what an echoed line or a run-on invented example would exploit. A
line or object copied from the item's own text is no evidence (``echoed_text_ignored``). A
different score given in prose after the answer makes the item INCONSISTENT too
(:mod:`judgekit.formats.revisions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.formats.common import (
    NUMBER_PATTERN,
    describe_value,
    find_json_values,
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
from judgekit.formats.revisions import after_answer, overrule, revisions
from judgekit.formats.schemas import closed_object
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, ItemVerdict, Scale, Status

_DECORATION = r"(?P<decoration>[\s>*_#\-]*)"
_SCORE_LINE = re.compile(
    rf"{_DECORATION}(?P<label>(?P<final>final\s+)?score|grade|rating|(?P<result>\[result\]))"
    r"[\s*_]*(?(result)(?P<tag_sep>[:=])?|(?P<sep>[:=]))[\s*_]*"
    rf"(?P<open>\[)?(?P<double>\[)?\s*(?P<number>{NUMBER_PATTERN})\s*(?(double)\])(?(open)\])"
    r"(?:\s*(?:/|out\s+of)\s*(?P<den>\d+))?(?P<period>\s*\.)?"
    r"(?P<comment>\s*\([^()\d\n]*\)|\s+[-–—]\s+[^\W\d][^\d\n]*)?[\s*_]*",
    re.IGNORECASE,
)
_LABEL_ONLY = re.compile(rf"{_DECORATION}(?:final\s+)?score[\s*_]*[:=].*", re.IGNORECASE)
_EXPLANATION_LABEL = re.compile(
    r"^\W*(?:explanation|evaluation|reasoning|justification)\W*:\s*", re.IGNORECASE
)
_RESULT_TAG = re.compile(r"(?<=\S)\s+(?=\[RESULT\]\s*\S+\s*$)", re.IGNORECASE)
_FENCE_LINE = re.compile(r"\s*(?:```|~~~)[A-Za-z0-9_+-]*\s*")


@dataclass(frozen=True)
class _Reading:
    """One score the reply gives: its value, denominator, fragment and explanation."""

    value: float | None
    raw: str
    out_of: int | None = None
    explanation: str = ""
    echoed: bool = False


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read an explanation followed by ``SCORE: N`` (or the JSON form) for one item."""
    (item_id,) = reply.item_ids
    log = reply.log
    readings = _json_readings(reply) + _line_readings(reply)
    if any(r.value is not None for r in readings):  # a quoted schema holds no number
        readings = [r for r in readings if r.value is not None]
    own = [r for r in readings if not r.echoed]
    if not own:
        if readings:
            reason = (
                "the only score line repeats an item's text or the prompt's example, so it is "
                "not the judge's answer"
            )
            raw = "\n".join(r.raw for r in readings)
            return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, raw),)
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, _why_none(reply), reply.text),)
    if len(own) < len(readings):
        log.add("echoed_text_ignored")
    if len({(r.value, r.out_of) for r in own}) > 1:
        values = [None if r.value is None else describe_value(r.value) for r in own]
        reason = f"the reply gives {len(own)} different scores {values}; none is chosen"
        raw = "\n".join(r.raw for r in own)
        return (ItemVerdict.unscored(item_id, Status.INCONSISTENT, reason, raw, values=values),)
    if len(own) > 1:
        log.add("multiple_score_lines")
    chosen = own[-1]
    if chosen.value is None:
        reason = f"the score in {chosen.raw!r} is not a number"
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, chosen.raw),)
    explanation = next((r.explanation for r in own if r.explanation), "")
    verdict = verdict_for_value(
        item_id, chosen.value, reply.scale, raw=chosen.raw, judge_reason=explanation,
        out_of=chosen.out_of, log=log,
    )  # fmt: skip
    ends = [at + len(r.raw) for r in own if (at := reply.text.rfind(r.raw)) >= 0]
    end = max(ends, default=len(reply.text))
    return (overrule(verdict, revisions(after_answer(reply, end)), reply.scale),)


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


def _line_readings(reply: ReplyInput) -> list[_Reading]:
    """Readings from ``SCORE: N`` lines; the explanation is the prose before the first one."""
    # Prometheus ends its feedback line with the tag: "Feedback: ... [RESULT] 2"
    lines = [part for line in reply.lines() for part in _RESULT_TAG.split(line, maxsplit=1)]
    if any(_FENCE_LINE.fullmatch(line) for line in lines):
        reply.log.add("markdown_fence")
        lines = [line for line in lines if not _FENCE_LINE.fullmatch(line)]
    readings: list[_Reading] = []
    first = None
    for number, line in enumerate(lines):
        match = _SCORE_LINE.fullmatch(line)
        if match is None:
            continue
        echoed = reply.echoes.has_line(line)
        log = ToleranceLog() if echoed else reply.log
        _note_line_tolerances(match, log)
        value = text_number(match["number"], log)
        out_of = int(match["den"]) if match["den"] is not None else None
        if first is None and not echoed:
            first = number
        readings.append(_Reading(value, match.group(0).strip(), out_of, "", echoed))
    own_lines = [n for n, line in enumerate(lines) if _is_own_score(line, reply)]
    trailing = own_lines and any(line.strip() for line in lines[own_lines[-1] + 1 :])
    if trailing and not any(r.echoed for r in readings):
        reply.log.add("text_after_score")
    if first is not None and readings:
        prose = "\n".join(line for line in lines[:first] if not _SCORE_LINE.fullmatch(line))
        explanation = _EXPLANATION_LABEL.sub("", prose.strip())
        readings = [
            r if r.echoed else _Reading(r.value, r.raw, r.out_of, explanation, r.echoed)
            for r in readings
        ]
    return readings


def _is_own_score(line: str, reply: ReplyInput) -> bool:
    """Whether a line is a score line the judge wrote (not a copy of the item's text)."""
    return bool(_SCORE_LINE.fullmatch(line)) and not reply.echoes.has_line(line)


def _why_none(reply: ReplyInput) -> str:
    """Why no score was read: a label line with no clean number, or nothing at all."""
    labelled = [line.strip() for line in reply.lines() if _LABEL_ONLY.fullmatch(line)]
    if labelled:
        return f"the SCORE line is not just a number on the scale: {labelled[-1]!r}"
    return unparseable_reason(reply.text, "'SCORE: N' line")


def _note_line_tolerances(match: re.Match[str], log: ToleranceLog) -> None:
    """Record how a SCORE line departs from a bare ``SCORE: N``."""
    label = match["label"]
    if match["result"]:
        log.add("result_tag")
    elif match["final"]:
        log.add("final_score_label")
    elif label.casefold() != "score":
        log.add("score_label_synonym")
    elif label != "SCORE":
        log.add("score_label_case")
    if "=" in (match["sep"], match["tag_sep"]):
        log.add("separator_equals")
    if match["open"]:
        log.add("score_in_brackets")
    if match["period"]:
        log.add("trailing_period")
    if match["comment"]:
        log.add("score_comment")
    if "*" in match.group(0) or "__" in match.group(0):
        log.add("markdown_emphasis")
    if any(mark in match["decoration"] for mark in "#>"):
        log.add("line_decoration")


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "score"}``: the JSON form of "explanation, then SCORE: N"."""
    return closed_object(
        {
            "explanation": {"type": "string"},
            "score": {"type": "integer", "enum": [*scale.allowed, *scale.abstain]},
        }
    )


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
