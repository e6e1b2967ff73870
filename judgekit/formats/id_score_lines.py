"""Batched ``ID,score`` replies (seeds 000 and 001) and their JSON form.

Plain lines are read by :mod:`judgekit.formats.lines`; JSON records by this module
(``{"scores": [{"id", "score"}]}``, a bare list of records, an ``{"ID": score}`` map, with
capitalised keys or one outer wrapper). Both are read and merged, so a JSON fragment in the
prose cannot switch the reader away from the lines (or the reverse): an item whose readings
agree is scored, an item whose readings conflict is DUPLICATE.

Per expected ID: no reading gives MISSING (UNPARSEABLE for all IDs when nothing is read); one
value (given once, or repeated identically: ``repeated_identical_line``) is checked against the
scale; different values give DUPLICATE. A line or JSON object copied from the request (an
item's own text, the prompt's example block) is no evidence: it is ignored when the item has
its own reading (``echoed_text_ignored``), and makes the item UNPARSEABLE when it is the only
one. Each foreign ID gets one UNKNOWN_ID verdict after the expected ones. A row given another
score in prose after the last score line ("on second thought, row 2 deserves a 3") is
INCONSISTENT (:mod:`judgekit.formats.revisions`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.formats.common import (
    TRUNCATION_HINT,
    JsonValue,
    describe_value,
    find_json_values,
    json_number,
    key_values,
    looks_truncated,
    lookup_key,
    note_json_surroundings,
    unparseable_reason,
    unwrap,
    verdict_for_value,
)
from judgekit.formats.ids import IdMatcher
from judgekit.formats.lines import Columns, read_header, read_line, table_rule
from judgekit.formats.reply import Echoes, ReplyInput
from judgekit.formats.revisions import after_answer, overrule, revisions
from judgekit.formats.schemas import closed_object
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, ItemVerdict, Scale, Status

_FENCE_LINE = re.compile(r"(?:```|~~~)[A-Za-z0-9_+-]*")


@dataclass(frozen=True)
class _Record:
    """One score the judge gave: to an expected ID (``item_id``) or a foreign one (None)."""

    written_id: str
    item_id: str | None
    value: float | None
    raw: str
    out_of: int | None = None
    echoed: bool = False


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read a batched reply: plain ``ID,score`` lines and/or the JSON form."""
    matcher = IdMatcher(reply.item_ids)
    containers, records = _json_records(reply, matcher)
    records += _line_records(_blank(reply, containers), matcher, note_prose=not containers)
    if not records:
        reason = unparseable_reason(reply.text, "'ID,score' line or JSON score record")
        return tuple(
            ItemVerdict.unscored(i, Status.UNPARSEABLE, reason, reply.text) for i in reply.item_ids
        )
    verdicts = _verdicts(reply, records, matcher)
    starts = [(reply.text.rfind(r.raw), r.raw) for r in records if not r.echoed]
    ends = [at + len(raw) for at, raw in starts if at >= 0] + [c.end for c in containers]
    later = revisions(after_answer(reply, max(ends, default=len(reply.text))), matcher)
    return tuple(overrule(verdict, later, reply.scale) for verdict in verdicts)


def _blank(reply: ReplyInput, containers: list[JsonValue]) -> ReplyInput:
    """The reply with the JSON containers already read blanked out (line structure kept)."""
    text = reply.text
    for found in containers:
        span = text[found.start : found.end]
        text = text[: found.start] + re.sub(r"[^\n]", " ", span) + text[found.end :]
    return ReplyInput(
        text, reply.scale, reply.item_ids, echoes=reply.echoes, truncated=reply.truncated,
        log=reply.log,
    )  # fmt: skip


def _json_entries(value: Any, matcher: IdMatcher, log: ToleranceLog) -> list[Any] | None:
    """The ``{"id", "score"}`` entries a decoded JSON value holds, or None if it holds none."""
    if isinstance(value, list):
        if value and all(
            isinstance(e, dict) and lookup_key(e, "id", ToleranceLog()) is not None for e in value
        ):
            return list(value)
        return None
    value = unwrap(value, ("scores",), log)
    if not isinstance(value, dict):
        return None
    key = lookup_key(value, "scores", log)
    if key is not None:
        value = value[key]
        if isinstance(value, list):
            return [e for e in value if isinstance(e, dict)]
    keyed_by_id = all(matcher.match(str(k))[0] or matcher.shaped(str(k)) for k in value)
    if isinstance(value, dict) and value and keyed_by_id:
        log.add("json_id_map")
        return [{"id": k, "score": v} for k, v in value.items()]
    return None


def _json_records(reply: ReplyInput, matcher: IdMatcher) -> tuple[list[JsonValue], list[_Record]]:
    """The JSON containers of the reply and the records they hold."""
    log = reply.log
    containers: list[JsonValue] = []
    records: list[_Record] = []
    for found in find_json_values(reply.text, log):
        scratch = ToleranceLog()
        entries = _json_entries(found.value, matcher, scratch)
        if entries is None:
            continue
        containers.append(found)
        echoed = reply.echoes.has_span(reply.text[found.start : found.end])
        if not echoed:
            for name in scratch.as_tuple():
                log.add(name)
            if isinstance(found.value, list):
                log.add("bare_json_list")
        for entry in entries:
            records.extend(_entry_records(entry, matcher, log, reply.echoes, echoed))
    if containers:
        note_json_surroundings(reply.text, containers, log)
    return containers, records


def _entry_records(
    entry: dict[str, Any], matcher: IdMatcher, log: ToleranceLog, echoes: Echoes, echoed: bool
) -> list[_Record]:
    """The records of one JSON entry (a record that repeats "score" gives the ID twice)."""
    id_key = lookup_key(entry, "id", log)
    written = entry.get(id_key) if id_key else None
    if isinstance(written, int) and not isinstance(written, bool):
        log.add("id_as_number")
        written = str(written)
    if not isinstance(written, str) or not written.strip():
        return []
    written = written.strip()
    item_id, id_tolerance = matcher.match(written)
    if id_tolerance:
        log.add(id_tolerance)
    raw = json.dumps(entry, ensure_ascii=False)
    score_key = lookup_key(entry, "score", log) or "score"
    records = []
    for score in key_values(entry, score_key) or [None]:
        value = json_number(score, log)
        # the JSON form of an "ID,score" line that stands in an item's text is an echo too
        copied = value is not None and echoes.has_line(f"{written},{describe_value(value)}")
        records.append(_Record(written, item_id, value, raw, echoed=echoed or copied))
    return records


def _line_records(reply: ReplyInput, matcher: IdMatcher, *, note_prose: bool) -> list[_Record]:
    """Records from plain score lines; every other kind of line is noted as a tolerance.

    Prose is not noted when the reply's JSON was read (``prose_around_json`` says it).
    """
    log = reply.log
    lines = reply.lines()
    example = reply.echoes.example_lines(lines)
    columns = Columns()
    records: list[_Record] = []
    record_lines: list[int] = []
    blank_lines: list[int] = []
    for number, raw_line in enumerate(lines):
        line = raw_line.strip()
        if not line:
            blank_lines.append(number)
            continue
        echoed = number in example or reply.echoes.has_line(line)
        scratch = ToleranceLog()
        if line != raw_line:
            scratch.add("line_whitespace")
        if _FENCE_LINE.fullmatch(line):
            scratch.add("markdown_fence")
        elif table_rule(line):
            scratch.add("markdown_table")
        elif read_header(line, Columns() if echoed else columns, scratch):
            if echoed:
                log.add("echoed_text_ignored")
        else:
            found = read_line(line, matcher, columns, scratch)
            if not found and note_prose:
                scratch.add("prose")
            for score in found:
                records.append(
                    _Record(
                        score.written_id, score.item_id, score.value, line, score.out_of, echoed
                    )
                )
                record_lines.append(number)
        if not echoed:
            for name in scratch.as_tuple():
                log.add(name)
    if record_lines and any(record_lines[0] < b < record_lines[-1] for b in blank_lines):
        log.add("blank_lines")
    return records


def _verdicts(
    reply: ReplyInput, records: list[_Record], matcher: IdMatcher
) -> tuple[ItemVerdict, ...]:
    """One verdict per expected ID (batch order), then one per foreign ID."""
    by_item: dict[str, list[_Record]] = defaultdict(list)
    foreign: dict[str, list[_Record]] = defaultdict(list)
    for record in records:
        if record.item_id is not None:
            by_item[record.item_id].append(record)
        elif not record.echoed:
            foreign[record.written_id].append(record)
        else:
            reply.log.add("echoed_text_ignored")
    verdicts = [_verdict(item_id, by_item.get(item_id, []), reply) for item_id in matcher.expected]
    for written, found in foreign.items():
        verdicts.append(_unknown(written, found, matcher))
    return tuple(verdicts)


def _verdict(item_id: str, found: list[_Record], reply: ReplyInput) -> ItemVerdict:
    """The verdict of one expected ID from every reading the reply gave it."""
    own = [r for r in found if not r.echoed]
    if not own and found:
        return ItemVerdict.unscored(
            item_id,
            Status.UNPARSEABLE,
            f"the only score for ID {item_id} is copied from the request (an item's own text "
            "or the prompt's format example), so it is not the judge's answer",
            "\n".join(r.raw for r in found),
        )
    if not own:
        return _missing(item_id, reply.text)
    if len(own) < len(found):
        reply.log.add("echoed_text_ignored")
    if len({(r.value, r.out_of) for r in own}) > 1:
        shown = _shown(own)
        why = f"ID {item_id} was given {len(own)} times with different scores {shown}"
        return _unscored(item_id, Status.DUPLICATE, why, own)
    if len(own) > 1:
        reply.log.add("repeated_identical_line")
    record = own[0]
    if record.value is None:
        return ItemVerdict.unscored(
            item_id, Status.UNPARSEABLE, f"the record for ID {item_id} has no numeric score",
            record.raw,
        )  # fmt: skip
    return verdict_for_value(
        item_id, record.value, reply.scale, raw=record.raw, out_of=record.out_of, log=reply.log
    )


def _missing(item_id: str, text: str) -> ItemVerdict:
    """A MISSING verdict that points at a near-miss line when there is one."""
    reason = f"the reply has no score line for ID {item_id}"
    near = re.search(
        rf"^[^\w\n]*(?:id\W*)?{re.escape(item_id)}(?![\w.]).*$", text, re.IGNORECASE | re.MULTILINE
    )
    raw = ""
    if near:
        raw = near.group(0).strip()
        reason += f"; a line mentions it but is not just an ID and a number: {raw!r}"
    if looks_truncated(text):
        reason += f"; {TRUNCATION_HINT}"
    return ItemVerdict.unscored(item_id, Status.MISSING, reason, raw)


def _unknown(written: str, found: list[_Record], matcher: IdMatcher) -> ItemVerdict:
    """An UNKNOWN_ID verdict; the judge's number is kept in details, never as a score."""
    candidates = matcher.ambiguous(written)
    if candidates:
        why = f"ID {written!r} matches several expected IDs as a number ({', '.join(candidates)})"
    else:
        why = f"ID {written!r} is not in this batch"
    return _unscored(written, Status.UNKNOWN_ID, f"{why}; its score is ignored", found)


def _shown(records: list[_Record]) -> list[int | float | None]:
    return [None if r.value is None else describe_value(r.value) for r in records]


def _unscored(item_id: str, status: Status, why: str, records: list[_Record]) -> ItemVerdict:
    """An unscored verdict keeping every reading's raw line and value (never as a score)."""
    raw = "\n".join(r.raw for r in records)
    return ItemVerdict.unscored(item_id, status, why, raw, values=_shown(records))


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"scores": [{"id", "score"}, ...]}`` with exactly one entry per ID of the batch."""
    entry = closed_object(
        {
            "id": {"type": "string", "enum": list(item_ids)},
            "score": {"type": "integer", "enum": [*scale.allowed, *scale.abstain]},
        }
    )
    count = len(item_ids)
    return closed_object(
        {"scores": {"type": "array", "items": entry, "minItems": count, "maxItems": count}}
    )


SPEC = register(
    FormatSpec(
        name="id_score_lines",
        batched=True,
        completion_tokens_per_item=6,
        parse=parse,
        schema=schema,
        logprob_anchor="id",
    )
)
