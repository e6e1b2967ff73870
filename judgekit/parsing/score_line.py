"""Parser for single-item "explanation, then ``SCORE: N``" replies (seed 004).

The last line that is only a score label and a number wins (as in inspect_ai's "last GRADE").
A label inside a sentence ("my score: 3 because ...") is not a score line. The JSON form
``{"explanation": "...", "score": 3}`` is accepted too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from judgekit.parsing.common import (
    NUMBER_PATTERN,
    JsonValue,
    clean_text,
    describe_value,
    find_json_values,
    json_number,
    key_values,
    note_json_surroundings,
    single_item_id,
    text_number,
    unparseable_reason,
    verdict_for_value,
)
from judgekit.parsing.tolerances import ToleranceLog
from judgekit.types import ItemVerdict, ParsedReply, Scale, Status

_DECORATION = r"[\s>*_#\-]*"
_SCORE_LINE = re.compile(
    rf"{_DECORATION}(?P<label>(?P<final>final\s+)?score)[\s*_]*[:=][\s*_]*"
    rf"(?P<open>\[)?\s*(?P<number>{NUMBER_PATTERN})\s*(?(open)\])"
    r"(?:\s*(?:/|out\s+of)\s*(?P<den>\d+))?[\s*_.]*",
    re.IGNORECASE,
)
_LABEL_ONLY = re.compile(rf"{_DECORATION}(?:final\s+)?score[\s*_]*[:=].*", re.IGNORECASE)
_EXPLANATION_LABEL = re.compile(
    r"^\W*(?:explanation|evaluation|reasoning|justification)\W*:\s*", re.IGNORECASE
)
_FENCE_LINE = re.compile(r"\s*(?:```|~~~)[A-Za-z0-9_+-]*\s*")


def parse_score_line(text: str, scale: Scale, item_ids: Sequence[str]) -> ParsedReply:
    """Read an explanation followed by ``SCORE: N`` (or the JSON form) for one item."""
    item_id = single_item_id(item_ids, "score_line")
    log = ToleranceLog()
    text = clean_text(text, log)
    json_answers = [
        v for v in find_json_values(text) if isinstance(v.value, dict) and "score" in v.value
    ]
    if json_answers:
        if len(json_answers) > 1:
            log.add("multiple_score_lines")
        return _from_json(item_id, text, json_answers[-1], scale, log)
    lines = text.split("\n")
    if any(_FENCE_LINE.fullmatch(line) for line in lines):
        log.add("markdown_fence")
        lines = [line for line in lines if not _FENCE_LINE.fullmatch(line)]
    hits = [(n, m) for n, m in enumerate(_SCORE_LINE.fullmatch(line) for line in lines) if m]
    if not hits:
        labelled = [line.strip() for line in lines if _LABEL_ONLY.fullmatch(line)]
        if labelled:
            reason = f"the SCORE line is not just a number on the scale: {labelled[-1]!r}"
        else:
            reason = unparseable_reason(text, "'SCORE: N' line")
        verdict = ItemVerdict.unscored(item_id, Status.UNPARSEABLE, reason, text)
        return ParsedReply((verdict,), log.as_tuple())
    line_number, match = hits[-1]
    _note_line_tolerances(match, log)
    details = {}
    if len(hits) > 1:
        log.add("multiple_score_lines")
        details["earlier_scores"] = [describe_value(float(m["number"])) for _, m in hits[:-1]]
    if any(line.strip() for line in lines[line_number + 1 :]):
        log.add("text_after_score")
    score_lines = {n for n, _ in hits}
    explanation = "\n".join(
        line for n, line in enumerate(lines) if n < line_number and n not in score_lines
    ).strip()
    explanation = _EXPLANATION_LABEL.sub("", explanation)
    value = text_number(match["number"], log)
    out_of = int(match["den"]) if match["den"] is not None else None
    verdict = verdict_for_value(
        item_id,
        value,
        scale,
        raw=match.group(0).strip(),
        judge_reason=explanation,
        out_of=out_of,
        log=log,
    )
    if details:
        verdict = ItemVerdict(
            verdict.item_id,
            verdict.status,
            verdict.score,
            verdict.reason,
            verdict.raw,
            {**verdict.details, **details},
        )
    return ParsedReply((verdict,), log.as_tuple())


def _note_line_tolerances(match: re.Match[str], log: ToleranceLog) -> None:
    """Record how the winning SCORE line departs from a bare ``SCORE: N``."""
    if match["final"]:
        log.add("final_score_label")
    elif match["label"] != "SCORE":
        log.add("score_label_case")
    if match["open"]:
        log.add("score_in_brackets")
    if "*" in match.group(0) or "__" in match.group(0):
        log.add("markdown_emphasis")


def _from_json(
    item_id: str, text: str, answer: JsonValue, scale: Scale, log: ToleranceLog
) -> ParsedReply:
    """Read the JSON form ``{"explanation": "...", "score": n}``."""
    note_json_surroundings(text, [answer], log)
    record = answer.value
    raw = text[answer.start : answer.end]
    scores = key_values(record, "score")
    if len({json.dumps(s) for s in scores}) > 1:
        verdict = ItemVerdict.unscored(
            item_id,
            Status.DUPLICATE,
            f"the JSON answer gives 'score' {len(scores)} times with different values {scores}",
            raw,
            values=scores,
        )
        return ParsedReply((verdict,), log.as_tuple())
    value = json_number(record["score"], log)
    if value is None:
        verdict = ItemVerdict.unscored(
            item_id, Status.UNPARSEABLE, f"the score {record['score']!r} is not a number", raw
        )
        return ParsedReply((verdict,), log.as_tuple())
    explanation = record.get("explanation")
    reason = explanation.strip() if isinstance(explanation, str) else ""
    verdict = verdict_for_value(item_id, value, scale, raw=raw, judge_reason=reason, log=log)
    return ParsedReply((verdict,), log.as_tuple())
