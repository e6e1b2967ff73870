"""Parser for batched ``ID,score`` replies (seeds 000 and 001) and their JSON form.

A line counts as a score line only if, after removing list markers, table pipes and markdown
emphasis, it is *just* an ID, one separator and a number (optionally ``/max``). A sentence that
mentions ``17,5`` is prose and never scores. A token that is not an expected ID counts as a
foreign ID (UNKNOWN_ID) only if it has the same shape as the expected IDs (digits for numeric
IDs), so ``Score: 5`` or ``Total: 60`` in a numeric batch are prose, not foreign IDs.

Per expected ID: no line gives MISSING (UNPARSEABLE for all IDs when the reply has no score
line at all); an ID repeated with the same score is read once and ``repeated_identical_line``
is recorded, because the judge's answer is unambiguous; an ID repeated with different scores is
DUPLICATE and unscored, because choosing one would be a guess. Each foreign ID gets one
UNKNOWN_ID verdict after the expected ones, keeping the judge's number only in ``details``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from judgekit.parsing.common import (
    NUMBER_PATTERN,
    TRUNCATION_HINT,
    clean_text,
    describe_value,
    find_json_values,
    json_number,
    key_values,
    looks_truncated,
    note_json_surroundings,
    text_number,
    unparseable_reason,
    verdict_for_value,
)
from judgekit.parsing.ids import IdMatcher
from judgekit.parsing.tolerances import ToleranceLog
from judgekit.types import ItemVerdict, ParsedReply, Scale, Status

_ID = r"(?P<id>[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)"
_SEP = r"(?P<sep>\s*[,;:=|\t]\s*|\s+[-–—]\s+|\s*(?:->|→)\s*|\s+)"
_SCORE = rf"(?P<score>{NUMBER_PATTERN})(?:\s*/\s*(?P<den>\d+))?(?P<trail>\s*[,;]+)?"
_PLAIN = re.compile(rf"{_ID}{_SEP}{_SCORE}")
_PREFIXED = re.compile(rf"(?:id\s*[:#.]?\s*|#\s*){_ID}{_SEP}{_SCORE}", re.IGNORECASE)
_HEADER = re.compile(
    r"(?:id|item|item[ _]?id|row)\s*[,;:|\t]\s*[^\W\d]+(?:[ _][^\W\d]+)*", re.IGNORECASE
)
#: Words judges put before a number that are labels, never foreign IDs (``Score: 5``).
_LABEL_WORDS = frozenset(
    {"score", "scores", "rating", "total", "id", "accuracy", "justification", "grammar", "row"}
)
_FENCE_LINE = re.compile(r"(?:```|~~~)[A-Za-z0-9_+-]*")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")
_LIST_MARKER = re.compile(r"(?:[-*•·+]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*+|__|`+")
_SEPARATOR_TOLERANCE = {
    ";": "separator_semicolon",
    ":": "separator_colon",
    "=": "separator_equals",
    "|": "separator_pipe",
    "-": "separator_dash",
    "–": "separator_dash",
    "—": "separator_dash",
    "->": "separator_arrow",
    "→": "separator_arrow",
}


@dataclass(frozen=True)
class _Record:
    """One score the judge gave: to an expected ID (``item_id``) or a foreign one (None)."""

    written_id: str
    item_id: str | None
    value: float | None
    raw: str
    out_of: int | None = None


def parse_id_score_lines(text: str, scale: Scale, item_ids: Sequence[str]) -> ParsedReply:
    """Read a batched reply: plain ``ID,score`` lines or ``{"scores": [{"id", "score"}]}``."""
    log = ToleranceLog()
    text = clean_text(text, log)
    matcher = IdMatcher(item_ids)
    records = _json_records(text, matcher, log)
    if records is None:
        records = _line_records(text, matcher, log)
    if not records:
        reason = unparseable_reason(text, "'ID,score' line or JSON score record")
        verdicts = [ItemVerdict.unscored(i, Status.UNPARSEABLE, reason, text) for i in item_ids]
        return ParsedReply(tuple(verdicts), log.as_tuple())
    return ParsedReply(_verdicts(text, records, scale, matcher, log), log.as_tuple())


def _json_records(text: str, matcher: IdMatcher, log: ToleranceLog) -> list[_Record] | None:
    """Records from the JSON form, or None when the reply holds no such JSON."""
    containers = []
    entries: list[object] = []
    for found in find_json_values(text):
        value = found.value
        if isinstance(value, dict) and isinstance(value.get("scores"), list):
            containers.append(found)
            entries.extend(value["scores"])
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(e, dict) and "id" in e for e in value)
        ):
            log.add("bare_json_list")
            containers.append(found)
            entries.extend(value)
    if not containers:
        return None
    note_json_surroundings(text, containers, log)
    records = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        written = entry.get("id")
        if isinstance(written, int) and not isinstance(written, bool):
            log.add("id_as_number")
            written = str(written)
        if not isinstance(written, str) or not written.strip():
            continue
        written = written.strip()
        item_id, id_tolerance = matcher.match(written)
        if id_tolerance:
            log.add(id_tolerance)
        raw = json.dumps(entry, ensure_ascii=False)
        # a record that repeats "score" gives the ID more than once
        for score in key_values(entry, "score") or [None]:
            records.append(_Record(written, item_id, json_number(score, log), raw))
    return records


def _line_records(text: str, matcher: IdMatcher, log: ToleranceLog) -> list[_Record]:
    """Records from plain score lines; every other kind of line is noted as a tolerance."""
    records: list[_Record] = []
    record_lines: list[int] = []
    blank_lines: list[int] = []
    for number, raw_line in enumerate(text.split("\n")):
        line = raw_line.strip()
        if not line:
            blank_lines.append(number)
            continue
        if line != raw_line:
            log.add("line_whitespace")
        if _FENCE_LINE.fullmatch(line):
            log.add("markdown_fence")
            continue
        if _TABLE_RULE.fullmatch(line):
            log.add("markdown_table")
            continue
        for candidate, decorations in _variants(line):
            if _HEADER.fullmatch(candidate):
                for name in (*decorations, "header_line"):
                    log.add(name)
                break
            record = _score_record(candidate, matcher, line, log, decorations)
            if record is not None:
                records.append(record)
                record_lines.append(number)
                break
        else:
            log.add("prose")
    if record_lines and any(record_lines[0] < b < record_lines[-1] for b in blank_lines):
        log.add("blank_lines")
    return records


def _variants(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """The line as written, then with table pipes, list marker and emphasis removed."""
    decorations: list[str] = []
    bare = line
    if len(bare) > 1 and bare.startswith("|") and bare.endswith("|"):
        bare = bare[1:-1].strip()
        decorations.append("markdown_table")
    marker = _LIST_MARKER.match(bare)
    if marker:
        bare = bare[marker.end() :]
        decorations.append("list_marker")
    plain = _EMPHASIS.sub("", bare).strip()
    if plain != bare:
        bare = plain
        decorations.append("markdown_emphasis")
    variants: list[tuple[str, tuple[str, ...]]] = [(line, ())]
    if bare != line:
        variants.append((bare, tuple(decorations)))
    return variants


def _score_record(
    candidate: str,
    matcher: IdMatcher,
    raw: str,
    log: ToleranceLog,
    decorations: tuple[str, ...],
) -> _Record | None:
    """A record if ``candidate`` is exactly an ID, a separator and a number; else None."""
    plain = _PLAIN.fullmatch(candidate)
    prefixed = _PREFIXED.fullmatch(candidate)
    chosen: re.Match[str] | None = None
    item_id: str | None = None
    id_tolerance: str | None = None
    for match in (plain, prefixed):
        if match is not None:
            item_id, id_tolerance = matcher.match(match["id"])
            if item_id is not None:
                chosen = match
                break
    if chosen is None:
        foreign = [
            m
            for m in (plain, prefixed)
            if m is not None and matcher.shaped(m["id"]) and m["id"].casefold() not in _LABEL_WORDS
        ]
        if not foreign:
            return None
        chosen, item_id, id_tolerance = foreign[0], None, None
    for name in decorations:
        log.add(name)
    if chosen is prefixed:
        log.add("id_prefix")
    if id_tolerance:
        log.add(id_tolerance)
    _note_separator(chosen["sep"], log)
    if chosen["trail"]:
        log.add("trailing_separator")
    out_of = int(chosen["den"]) if chosen["den"] is not None else None
    value = text_number(chosen["score"], log)
    return _Record(chosen["id"], item_id, value, raw, out_of)


def _note_separator(separator: str, log: ToleranceLog) -> None:
    """Record a separator other than a bare comma."""
    symbol = separator.strip()
    if not symbol:
        log.add("separator_tab" if "\t" in separator else "separator_space")
        return
    if symbol in _SEPARATOR_TOLERANCE:
        log.add(_SEPARATOR_TOLERANCE[symbol])
    if symbol in ",;:=" and symbol != separator:
        log.add("spaced_separator")


def _verdicts(
    text: str,
    records: list[_Record],
    scale: Scale,
    matcher: IdMatcher,
    log: ToleranceLog,
) -> tuple[ItemVerdict, ...]:
    """One verdict per expected ID (batch order), then one per foreign ID."""
    by_item: dict[str, list[_Record]] = defaultdict(list)
    foreign: dict[str, list[_Record]] = defaultdict(list)
    for record in records:
        if record.item_id is not None:
            by_item[record.item_id].append(record)
        else:
            foreign[record.written_id].append(record)
    truncated = looks_truncated(text)
    verdicts = []
    for item_id in matcher.expected:
        found = by_item.get(item_id, [])
        if not found:
            verdicts.append(_missing(item_id, text, truncated))
            continue
        if len({(r.value, r.out_of) for r in found}) > 1:
            shown = [None if r.value is None else describe_value(r.value) for r in found]
            verdicts.append(
                ItemVerdict.unscored(
                    item_id,
                    Status.DUPLICATE,
                    f"ID {item_id} was given {len(found)} times with different scores {shown}",
                    "\n".join(r.raw for r in found),
                    values=shown,
                )
            )
            continue
        if len(found) > 1:
            log.add("repeated_identical_line")
        verdicts.append(_single(item_id, found[0], scale, log))
    for written, found in foreign.items():
        verdicts.append(_unknown(written, found, matcher))
    return tuple(verdicts)


def _single(item_id: str, record: _Record, scale: Scale, log: ToleranceLog) -> ItemVerdict:
    """The verdict for an ID given exactly once (or repeated identically)."""
    if record.value is None:
        return ItemVerdict.unscored(
            item_id,
            Status.UNPARSEABLE,
            f"the record for ID {item_id} has no numeric score",
            record.raw,
        )
    return verdict_for_value(
        item_id, record.value, scale, raw=record.raw, out_of=record.out_of, log=log
    )


def _missing(item_id: str, text: str, truncated: bool) -> ItemVerdict:
    """A MISSING verdict that points at a near-miss line when there is one."""
    reason = f"the reply has no score line for ID {item_id}"
    near = re.search(
        rf"^[^\w\n]*(?:id\W*)?{re.escape(item_id)}(?![\w.]).*$", text, re.IGNORECASE | re.MULTILINE
    )
    raw = ""
    if near:
        raw = near.group(0).strip()
        reason += f"; a line mentions it but is not just an ID and a number: {raw!r}"
    if truncated:
        reason += f"; {TRUNCATION_HINT}"
    return ItemVerdict.unscored(item_id, Status.MISSING, reason, raw)


def _unknown(written: str, found: list[_Record], matcher: IdMatcher) -> ItemVerdict:
    """An UNKNOWN_ID verdict; the judge's number is kept in details, never as a score."""
    candidates = matcher.ambiguous(written)
    if candidates:
        why = f"ID {written!r} matches several expected IDs as a number ({', '.join(candidates)})"
    else:
        why = f"ID {written!r} is not in this batch"
    values = [None if r.value is None else describe_value(r.value) for r in found]
    return ItemVerdict.unscored(
        written,
        Status.UNKNOWN_ID,
        f"{why}; its score is ignored",
        "\n".join(r.raw for r in found),
        values=values,
    )
