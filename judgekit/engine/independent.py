"""The ``"independent"`` mode: every batch is its own conversation, sent by a pool of workers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from judgekit.engine.plan import FirstAsks, Row, RunPlan
from judgekit.engine.rows import judge_items
from judgekit.engine.session import JudgeSession
from judgekit.engine.tokens import estimate_message_tokens, estimate_text_tokens


async def run_independent(session: JudgeSession, plan: RunPlan) -> list[Row]:
    """Send every batch of a run as its own request, a bounded pool of workers at a time.

    The workers (twice the client's concurrency, so that a finished request's slot is taken at
    once) pull the next batch when they finish one: pending batches are not tasks, nothing is
    rendered before its turn, and the cost of a call does not grow with the study.
    """
    results: list[list[Row]] = [[] for _ in plan.batches]
    pending = iter(enumerate(plan.batches))

    async def worker() -> None:
        for index, batch in pending:  # one shared iterator: each batch goes to one worker
            results[index] = await judge_items(session, plan, batch)

    workers = min(len(plan.batches), 2 * max(1, session.client.max_concurrency))
    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(worker())
    return [row for rows in results for row in rows]


def independent_asks(session: JudgeSession, plans: Sequence[RunPlan]) -> FirstAsks:
    """Every first ask's tokens without rendering it, and how many the store answers.

    One request per variant is rendered (the first to be sent, kept to be sent as it is): its
    tokens beyond the items' own texts (instructions, header, tags) are taken as every
    request's overhead, to which each batch adds its items' texts. The store is asked how many
    first asks of this judge, rubric, variant and run it answers, not request by request.
    """
    model, store = session.model, session.store
    overhead: dict[str, int] = {}
    asks, stored, first = [], 0, None
    for plan in plans:
        if not plan.batches:
            continue
        if plan.variant not in overhead:
            batch = plan.batches[0]
            sample = session.build_request(
                batch.items, variant=plan.variant, run=plan.run, batch_label=batch.label
            )
            first = first or sample
            session.rendered_ahead[(plan.variant, plan.run, batch.label, batch.ids)] = sample
            texts = sum(estimate_text_tokens(text, model) for text in sample.shown)
            overhead[plan.variant] = estimate_message_tokens(sample.messages, model) - texts
        for batch in plan.batches:
            texts = sum(
                estimate_text_tokens(t, model) for t in session.rubric.shown_texts(batch.items)
            )
            asks.append((overhead[plan.variant] + texts, len(batch.items)))
        if store is not None:
            answered = store.answered(
                model=model,
                rubric=session.rubric.name,
                variant=plan.variant,
                run=plan.run,
                endpoint=session.client.endpoint,
                offline=session.settings.offline,
            )
            stored += min(answered, len(plan.batches))
    return asks, stored, first
