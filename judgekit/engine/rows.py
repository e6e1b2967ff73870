"""Turn replies into rows of the judgments table, and re-ask the rows a reply failed.

:func:`reask_loop` is the one re-ask loop of every mode (a mode says how it asks one attempt)
and :func:`judgment_row` the one row builder.

A batch's final table holds one row per item (the verdict of the attempt that settled it) plus
one row per foreign ID a reply scored (``unknown_id``; they are data about the judge). Rows whose
verdict is ``missing``, ``unparseable``, ``out_of_range`` or ``duplicate`` are sent again, alone,
up to ``max_reasks`` times; abstentions and inconsistent totals are answers and are kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from judgekit.data import Batch
from judgekit.engine.plan import Row, RunPlan
from judgekit.engine.session import CallOutcome, JudgeSession
from judgekit.engine.store import RequestKey
from judgekit.formats import expected_score, expected_scores_by_id
from judgekit.types import (
    JUDGMENT_COLUMNS,
    ChatReply,
    ChatRequest,
    Item,
    ItemVerdict,
    Status,
    Usage,
)

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
    anchor = rubric.format.logprob_anchor
    if anchor == "id":
        found = expected_scores_by_id(reply.top_logprobs, rubric.scale, ids, reply_text=reply.text)
        return {item_id: float(value) for item_id, value in found.items() if value is not None}
    if anchor != "none" and len(ids) == 1:
        value = expected_score(
            reply.top_logprobs, rubric.scale, anchor=anchor, reply_text=reply.text
        )
        return {} if value is None else {ids[0]: float(value)}
    return {}


def judgment_row(
    session: JudgeSession,
    outcome: CallOutcome,
    *,
    item_id: str,
    context: RowContext,
    position: int | None,
    verdict: ItemVerdict | None = None,
    tolerances: Sequence[str] = (),
    expected: float = math.nan,
) -> Row:
    """One table row: a verdict read from the reply, or (``verdict=None``) a failed call.

    ``expected`` is kept for OK rows only; a failed call's row is ``error`` with its reason.
    """
    reply = outcome.reply if verdict is not None else None
    error = "" if verdict is not None else outcome.error or "call failed"
    usage = reply.usage if reply is not None else Usage()
    ok = verdict is not None and verdict.status is Status.OK
    return {
        "item_id": item_id,
        "rubric": session.rubric.name,
        "variant": context.variant,
        "model": session.model,
        "run": context.run,
        "attempt": context.attempt,
        "status": verdict.status.value if verdict is not None else Status.ERROR.value,
        "score": math.nan if verdict is None or verdict.score is None else float(verdict.score),
        "expected_score": expected if ok else math.nan,
        "reason": verdict.reason if verdict is not None else error,
        "batch_index": context.batch_index,
        "position": position,
        "request_hash": outcome.request_hash,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "latency_s": reply.latency_s if reply is not None else math.nan,
        "tolerances": ";".join(tolerances),
        # a refusal is the whole reply
        "raw_reply": (reply.text or reply.refusal or "") if reply is not None else "",
        "structured": session.settings.structured,
        "cached_tokens": usage.cached_tokens,
        "finish_reason": (reply.finish_reason or "") if reply is not None else "",
        "http_attempts": reply.http_attempts if reply is not None else outcome.failed_attempts,
        "error": error,
        "verdict_raw": verdict.raw if verdict is not None else "",
        "details": "{}"
        if verdict is None
        else json.dumps(dict(verdict.details), sort_keys=True, default=str),
    }


def record_failed_call(
    session: JudgeSession,
    pending: Sequence[Item],
    outcome: CallOutcome,
    final: dict[str, Row],
    *,
    context: RowContext,
    place: Callable[[Row], Row] = lambda row: row,
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
            row = judgment_row(
                session, outcome, item_id=item.id, context=context, position=position
            )
            final[item.id] = place(row)


def rows_from_reply(
    session: JudgeSession, outcome: CallOutcome, items: Sequence[Item], context: RowContext
) -> tuple[dict[str, Row], list[Row]]:
    """Parse one answered request for ``items``: rows by expected ID, and foreign-ID rows.

    Positions are the items' 0-based places in this request. Lines copied from what the request
    showed the judge (``outcome.request``: its items and format example) cannot score.
    """
    reply = outcome.reply
    assert reply is not None, "rows_from_reply needs a reply"
    ids = [item.id for item in items]
    parsed = session.rubric.parse(reply.text, ids, request=outcome.request, reply=reply)
    expected = expected_by_id(session, reply, ids)
    by_id: dict[str, Row] = {}
    foreign: list[Row] = []
    for verdict in parsed.verdicts:
        is_expected = verdict.status is not Status.UNKNOWN_ID and verdict.item_id in ids
        row = judgment_row(
            session,
            outcome,
            item_id=verdict.item_id,
            context=context,
            position=ids.index(verdict.item_id) if is_expected else None,
            verdict=verdict,
            tolerances=parsed.tolerances,
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


def with_hint(request: ChatRequest, hint: str | None) -> ChatRequest:
    """``request`` with ``hint`` as the last paragraph of its last (user) message."""
    if not hint:
        return request
    *before, last = request.messages
    closing = {**last, "content": f"{last['content'].rstrip()}\n\n{hint}"}
    return dataclasses.replace(request, messages=(*before, closing))


def reask_key(
    session: JudgeSession,
    request: ChatRequest,
    hint: str | None,
    *,
    variant: str,
    run: int,
    attempt: int,
) -> RequestKey:
    """The key of ``request`` sent with ``hint``, or without it when the store says so.

    A store written before re-asks carried hints holds the same re-ask without one; its reply
    is replayed rather than paid for again (the key then records no hint).
    """
    hinted = session.request_key(
        with_hint(request, hint), variant=variant, run=run, attempt=attempt, reask_hint=hint or ""
    )
    if not hint or session.stored(hinted) is not None:
        return hinted
    plain = session.request_key(request, variant=variant, run=run, attempt=attempt)
    stored = session.stored(plain)
    return plain if stored is not None and stored.reply is not None else hinted


@dataclass(frozen=True)
class Asked:
    """What asking one attempt gave: the outcome and how its rows are placed (mode columns)."""

    outcome: CallOutcome
    place: Callable[[Row], Row] = lambda row: row


#: How a mode asks one attempt: ``(pending items, attempt, hint or None) -> Asked``.
AskAttempt = Callable[[list[Item], int, str | None], Awaitable[Asked]]


async def reask_loop(
    session: JudgeSession, plan: RunPlan, batch: Batch, ask: AskAttempt
) -> list[Row]:
    """Ask a batch, then re-ask its unusable rows alone; the one loop of every mode.

    A re-ask carries the rubric's hint naming what was wrong with each row's last reply, when
    the rubric gives one. If a re-ask call itself fails, the affected rows keep their earlier
    verdict and carry the re-ask's error in ``error``: nothing said before is thrown away.

    Returns:
        The batch's final rows (one per item, in the batch's order), then foreign-ID rows.
    """
    final: dict[str, Row] = {}
    foreign: list[Row] = []
    pending = list(batch.items)
    hint: str | None = None
    for attempt in range(1, session.settings.max_reasks + 2):
        asked = await ask(pending, attempt, hint)
        context = RowContext(plan.variant, plan.run, attempt, batch.index)
        if asked.outcome.reply is None:
            record_failed_call(
                session, pending, asked.outcome, final, context=context, place=asked.place
            )
            break
        expected_rows, foreign_rows = rows_from_reply(session, asked.outcome, pending, context)
        final.update({item_id: asked.place(row) for item_id, row in expected_rows.items()})
        foreign += [asked.place(row) for row in foreign_rows]
        pending = [item for item in pending if Status(final[item.id]["status"]) in REASK_STATUSES]
        if not pending:
            break
        hint = session.rubric.reask_hint({item.id: final[item.id]["reason"] for item in pending})
    session.on_items_done(len(batch.items))
    return [final[item.id] for item in batch.items] + foreign


async def judge_items(session: JudgeSession, plan: RunPlan, batch: Batch) -> list[Row]:
    """Judge one batch of ``plan`` as its own request, re-asking failed rows; its final rows."""

    async def ask(pending: list[Item], attempt: int, hint: str | None) -> Asked:
        label = reask_label(batch.label, attempt)
        request = session.build_request(
            pending, variant=plan.variant, run=plan.run, batch_label=label
        )
        key = reask_key(session, request, hint, variant=plan.variant, run=plan.run, attempt=attempt)
        return Asked(await session.call_or_replay(key))

    return await reask_loop(session, plan, batch, ask)
