"""Write the simulated judge's reply in the requested format, then apply malformations."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from judgekit.formats import get_format
from judgekit.simulator.config import MALFORMATION_KINDS, SimulatorConfig
from judgekit.simulator.faults import Draw
from judgekit.simulator.formats import PROSE, fault_applies, json_reply
from judgekit.simulator.reading import JudgeTask
from judgekit.simulator.scoring import ItemScore, number

REASON = (
    "Simulated verdict: the score comes from the simulator's oracle or a hash, not from reading."
)
FIELD_TAG = re.compile(r"</?[A-Za-z_][\w.-]*>")
# Kinds that change what is said (applied to the rows), then kinds that change how it is written.
CONTENT_KINDS = ("missing_rows", "duplicate_id", "unknown_id", "out_of_range", "echo_injection")
REFUSAL = "I'm sorry, but I can't help with evaluating this content."


@dataclass(frozen=True)
class ComposedReply:
    """The reply text, the malformations applied to it, the finish reason and side fields."""

    text: str
    malformations: tuple[str, ...]
    finish_reason: str
    reasoning: str | None = None  # sent as the message's reasoning_content
    refusal: str | None = None  # sent as the message's refusal (content is then null)


@dataclass(frozen=True)
class Row:
    """One scored entry as it will be written (the ID may be foreign, the value off-scale)."""

    item_id: str
    value: float
    role: str = "real"  # "real", "duplicate" (conflicting twin), "echo" (injected), "foreign"
    criteria: tuple[tuple[str, int, int], ...] = ()  # (name, score, max) for direct scoring


def compose_reply(
    task: JudgeTask, scores: tuple[ItemScore, ...], config: SimulatorConfig, draw: Draw
) -> ComposedReply:
    """Render the reply for ``scores`` in the task's format, applying drawn malformations."""
    rows = [
        Row(s.item.id, s.value, criteria=tuple((c.name, v, c.high) for c, v in s.criteria))
        for s in scores
    ]
    applied = [
        kind
        for kind in MALFORMATION_KINDS
        if draw.chance(f"malformed:{kind}", config.malformed.get(kind, 0.0))
        and fault_applies(kind, task.output_format)
    ]
    if "refusal" in applied:
        return ComposedReply("", ("refusal",), "stop", refusal=REFUSAL)
    draft = _render(task, [_contrary(row, task) for row in rows])  # what reasoning drafts
    for kind in CONTENT_KINDS:
        if kind in applied:
            rows = _content_fault(kind, rows, task, draw)
    text = _render(task, rows)
    finish_reason = "stop"
    if "reasoning_block" in applied:
        text = f"<think>\nA first draft, to be checked:\n{draft}\n</think>\n\n{text}"
    spec = get_format(task.output_format)
    if "header" in applied:
        plain_lines = spec.batched and not task.json_reply
        text = ("ID,Score\n" if plain_lines else "Evaluation:\n") + text
    if "fence" in applied:
        text = f"```{'json' if text.lstrip().startswith('{') else 'csv'}\n{text}\n```"
    if "prose" in applied:
        text = f"Sure! Here is my evaluation.\n\n{text}\n\nLet me know if you need anything else."
    if "crlf" in applied:
        text = text.replace("\n", "\r\n")
    if "truncated" in applied:
        text = text[: max(1, int(len(text) * (0.4 + 0.3 * draw.fraction("truncate_at"))))]
        finish_reason = "length"
    reasoning = f"Draft before checking:\n{draft}" if "reasoning_field" in applied else None
    return ComposedReply(text, tuple(applied), finish_reason, reasoning=reasoning)


def _contrary(row: Row, task: JudgeTask) -> Row:
    """The row with another score (a draft the final answer contradicts)."""
    low, high = task.allowed[0], task.allowed[-1]
    return replace(row, value=float(high if row.value == low else low))


def _pick(rows: list[Row], draw: Draw, kind: str) -> int:
    return int(draw.fraction(f"pick:{kind}") * len(rows))


def _content_fault(kind: str, rows: list[Row], task: JudgeTask, draw: Draw) -> list[Row]:
    """Change what the reply says for one malformation kind."""
    if not rows:
        return rows
    spec = get_format(task.output_format)
    index = _pick(rows, draw, kind)
    top = task.allowed[-1]
    if kind == "missing_rows":
        if spec.needs_criteria and len(rows[index].criteria) > 1:
            criteria = rows[index].criteria
            rows[index] = replace(rows[index], criteria=criteria[:-1])
            return rows
        if spec.batched:
            return rows[:index] + rows[index + 1 :]
        rows[index] = replace(rows[index], value=float("nan"))
        return rows
    if kind == "duplicate_id":
        row = rows[index]
        other = task.allowed[0] if row.value != task.allowed[0] else top
        if spec.needs_criteria and row.criteria:
            name, score, high = row.criteria[0]
            twin = (name, high if score != high else max(score - 1, 0), high)
            rows[index] = replace(row, criteria=(*row.criteria, twin))
            return rows
        return [*rows, Row(row.item_id, float(other), role="duplicate")]
    if kind == "unknown_id":
        numeric = [int(r.item_id) for r in rows if r.item_id.isdigit()]
        foreign = str(max(numeric) + 1000) if numeric else f"{rows[-1].item_id}_x"
        return [*rows, Row(foreign, float(task.allowed[0]), role="foreign")]
    if kind == "out_of_range":
        row = rows[index]
        if spec.needs_criteria and row.criteria:
            name, _, high = row.criteria[0]
            rows[index] = replace(row, criteria=((name, high + 1, high), *row.criteria[1:]))
        else:
            rows[index] = replace(row, value=float(top + 1))
        return rows
    # echo_injection: a fooled judge repeats score-looking lines that sit inside the items.
    pattern = PROSE[task.output_format].echo
    assert pattern is not None  # fault_applies let the kind through only for such formats
    for item in task.items:
        for found in pattern.finditer(html.unescape(FIELD_TAG.sub("\n", item.text))):
            if pattern.groups == 1:
                rows.append(Row(item.id, float(found.group(1)), role="echo"))
            else:
                rows.append(Row(found.group(1), float(found.group(2)), role="echo"))
    return rows


def _render(task: JudgeTask, rows: list[Row]) -> str:
    """Write rows in the task's output format (plain or JSON form)."""
    spec = get_format(task.output_format)
    if spec.needs_criteria:
        return _render_direct(rows[0])
    if not spec.batched:
        # One item: a conflicting twin comes first, the real value next, echoes last
        # (so a "last one wins" reader is fooled only by an echo); an unscored row says nothing.
        order = {"duplicate": 0, "real": 1, "echo": 2}
        rows = [r for r in sorted(rows, key=lambda r: order[r.role]) if r.value == r.value]
    entries = [(r.item_id, json.dumps(number(r.value))) for r in rows]
    plain = PROSE[task.output_format].plain if task.output_format in PROSE else None
    if plain is not None and not task.json_reply:
        return plain(entries, REASON, task.marker)
    return json_reply(task.output_format, entries, REASON)


def _render_direct(row: Row) -> str:
    entries: list[dict[str, Any]] = [
        {
            "criterion": name,
            "evidence": ["(simulated: no text was read)"],
            "score": score,
            "maxScore": high,
            "justification": REASON,
            "improvement": "Not applicable: simulated judge.",
        }
        for name, score, high in row.criteria
    ]
    reply: dict[str, Any] = {"scores": entries}
    if row.value == row.value:
        reply["overallScore"] = number(row.value)
    reply["summary"] = {
        "assessment": REASON,
        "strengths": ["(simulated)"],
        "weaknesses": ["(simulated)"],
        "priorities": ["(simulated)"],
    }
    return json.dumps(reply, ensure_ascii=False)
