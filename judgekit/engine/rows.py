"""Turn replies into rows of the judgments table, and re-ask the rows a reply failed.

A batch's final table holds one row per item (the verdict of the attempt that settled it) plus
one row per foreign ID a reply scored (``unknown_id``; they are data about the judge). Rows whose
verdict is ``missing``, ``unparseable``, ``out_of_range`` or ``duplicate`` are sent again, alone,
up to ``max_reasks`` times; abstentions and inconsistent totals are answers and are kept.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.data import Batch
from judgekit.engine.plan import RunPlan
from judgekit.engine.session import CallOutcome, JudgeSession
from judgekit.formats import expected_score, expected_scores_by_id, get_format
from judgekit.types import JUDGMENT_COLUMNS, ChatReply, Item, ItemVerdict, Status

#: Statuses that trigger a re-ask of the row.
REASK_STATUSES: frozenset[Status] = frozenset(
    {Status.MISSING, Status.UNPARSEABLE, Status.OUT_OF_RANGE, Status.DUPLICATE}
)

#: Columns after :data:`judgekit.types.JUDGMENT_COLUMNS`, in order.
EXTRA_COLUMNS: tuple[str, ...] = (
    "structured",  # the reply was schema-enforced JSON
    "cached_tokens",  # prompt tokens the endpoint served from its cache (per request)
    "finish_reason",  # "stop", "length", ... ("" for failed calls)
    "http_attempts",  # HTTP attempts behind the request (retries included)
    "error",  # the call's final error ("" when there was a reply)
    "verdict_raw",  # the fragment of the reply the verdict was read from
    "details",  # the verdict's details as JSON (criteria, rejected numbers, ...)
)

#: Every column of the table ``judge()`` returns.
ALL_COLUMNS: tuple[str, ...] = JUDGMENT_COLUMNS + EXTRA_COLUMNS


@dataclass(frozen=True)
class RowContext:
    """Where a reply sits in the study: variant, run, attempt and source batch."""

    variant: str
    run: int
    attempt: int
    batch_index: int


def expected_by_id(session: JudgeSession, reply: ChatReply, ids: Sequence[str]) -> dict[str, float]:
    """Logprob-weighted expected score per expected ID (only IDs where one can be computed).

    Single-score formats use the score token after ``"rating":`` / ``SCORE:``; ``ID,score``
    lines use each line's score token; direct scoring has none (its overall is computed).
    The reply text is passed along, so a score the judge sampled against its most likely
    token gets no expected score (the continuation it would need was never reported).
    """
    rubric = session.rubric
    if not session.settings.logprobs or not reply.top_logprobs:
        return {}
    anchor = get_format(rubric.output_format).logprob_anchor
    if anchor == "id":
        found = expected_scores_by_id(reply.top_logprobs, rubric.scale, ids, reply_text=reply.text)
        return {item_id: float(value) for item_id, value in found.items() if value is not None}
    if anchor != "none" and len(ids) == 1:
        value = expected_score(
            reply.top_logprobs, rubric.scale, anchor=anchor, reply_text=reply.text
        )
        return {} if value is None else {ids[0]: float(value)}
    return {}


def verdict_row(
    session: JudgeSession,
    verdict: ItemVerdict,
    outcome: CallOutcome,
    *,
    tolerances: Sequence[str],
    context: RowContext,
    position: int | None,
    expected: float = math.nan,
) -> dict[str, Any]:
    """One table row for a verdict read from a reply (``expected`` kept for OK rows only)."""
    reply = outcome.reply
    assert reply is not None, "verdict rows need a reply"
    return {
        "item_id": verdict.item_id,
        "rubric": session.rubric.name,
        "variant": context.variant,
        "model": session.model,
        "run": context.run,
        "attempt": context.attempt,
        "status": verdict.status.value,
        "score": math.nan if verdict.score is None else float(verdict.score),
        "expected_score": expected if verdict.status is Status.OK else math.nan,
        "reason": verdict.reason,
        "batch_index": context.batch_index,
        "position": position,
        "request_hash": outcome.request_hash,
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": reply.usage.completion_tokens,
        "latency_s": reply.latency_s,
        "tolerances": ";".join(tolerances),
        "raw_reply": reply.text or reply.refusal or "",  # a refusal is the whole reply
        "structured": session.settings.structured,
        "cached_tokens": reply.usage.cached_tokens,
        "finish_reason": reply.finish_reason or "",
        "http_attempts": reply.http_attempts,
        "error": "",
        "verdict_raw": verdict.raw,
        "details": json.dumps(dict(verdict.details), sort_keys=True, default=str),
    }


def record_failed_call(
    session: JudgeSession,
    pending: Sequence[Item],
    outcome: CallOutcome,
    final: dict[str, dict[str, Any]],
    *,
    context: RowContext,
    place: Callable[[dict[str, Any]], dict[str, Any]] = lambda row: row,
) -> None:
    """Record a call that failed after all retries, for the rows it asked about.

    A row that an earlier attempt already answered keeps that verdict and carries the failed
    re-ask's error in ``error`` (nothing it said is thrown away or invented); a row never
    answered becomes an ``error`` row, passed through ``place`` (modes add their columns).
    """
    for position, item in enumerate(pending):
        if item.id in final:
            final[item.id]["error"] = f"re-ask {context.attempt - 1} failed: {outcome.error}"
        else:
            row = error_row(session, item, outcome, context=context, position=position)
            final[item.id] = place(row)


def error_row(
    session: JudgeSession,
    item: Item,
    outcome: CallOutcome,
    *,
    context: RowContext,
    position: int,
) -> dict[str, Any]:
    """One table row for an item whose request failed after all retries."""
    error = outcome.error or "call failed"
    return {
        "item_id": item.id,
        "rubric": session.rubric.name,
        "variant": context.variant,
        "model": session.model,
        "run": context.run,
        "attempt": context.attempt,
        "status": Status.ERROR.value,
        "score": math.nan,
        "expected_score": math.nan,
        "reason": error,
        "batch_index": context.batch_index,
        "position": position,
        "request_hash": outcome.request_hash,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "latency_s": math.nan,
        "tolerances": "",
        "raw_reply": "",
        "structured": session.settings.structured,
        "cached_tokens": 0,
        "finish_reason": "",
        "http_attempts": outcome.failed_attempts,
        "error": error,
        "verdict_raw": "",
        "details": "{}",
    }


def rows_from_reply(
    session: JudgeSession, outcome: CallOutcome, items: Sequence[Item], context: RowContext
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Parse one answered request for ``items``: rows by expected ID, and foreign-ID rows.

    Positions are the items' 0-based places in this request. Lines copied from what the request
    showed the judge (``outcome.request``: its items and format example) cannot score.
    """
    reply = outcome.reply
    assert reply is not None, "rows_from_reply needs a reply"
    ids = [item.id for item in items]
    parsed = session.rubric.parse(reply.text, ids, request=outcome.request, reply=reply)
    expected = expected_by_id(session, reply, ids)
    by_id: dict[str, dict[str, Any]] = {}
    foreign: list[dict[str, Any]] = []
    for verdict in parsed.verdicts:
        is_expected = verdict.status is not Status.UNKNOWN_ID and verdict.item_id in ids
        row = verdict_row(
            session,
            verdict,
            outcome,
            tolerances=parsed.tolerances,
            context=context,
            position=ids.index(verdict.item_id) if is_expected else None,
            expected=expected.get(verdict.item_id, math.nan) if is_expected else math.nan,
        )
        if is_expected:
            by_id[verdict.item_id] = row
        else:
            foreign.append(row)
    return by_id, foreign


def reask_label(batch_label: str, attempt: int) -> str:
    """The batch label shown in the header of a re-ask request."""
    return batch_label if attempt == 1 else f"{batch_label}, re-ask {attempt - 1}"


async def judge_items(session: JudgeSession, plan: RunPlan, batch: Batch) -> list[dict[str, Any]]:
    """Judge one batch of ``plan`` independently, re-asking failed rows; returns its final rows.

    If a re-ask call itself fails, the affected rows keep their earlier verdict and carry the
    re-ask's error in ``error``: nothing they said before is thrown away or invented.
    """
    variant, run, batch_index, batch_label = plan.variant, plan.run, batch.index, batch.label
    final: dict[str, dict[str, Any]] = {}
    foreign: list[dict[str, Any]] = []
    pending = list(batch.items)
    for attempt in range(1, session.settings.max_reasks + 2):
        request = session.build_request(
            pending, variant=variant, run=run, batch_label=reask_label(batch_label, attempt)
        )
        key = session.request_key(request, variant=variant, run=run, attempt=attempt)
        outcome = await session.call_or_replay(key)
        context = RowContext(variant, run, attempt, batch_index)
        if outcome.reply is None:
            record_failed_call(session, pending, outcome, final, context=context)
            break
        expected_rows, foreign_rows = rows_from_reply(session, outcome, pending, context)
        final.update(expected_rows)
        foreign.extend(foreign_rows)
        pending = [item for item in pending if Status(final[item.id]["status"]) in REASK_STATUSES]
        if not pending:
            break
    session.on_items_done(len(batch.items))
    return [final[item.id] for item in batch.items] + foreign
