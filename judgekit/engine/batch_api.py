"""OpenAI Batch API mode: the same judgments table as ``judge()``, at batch prices.

How it works, so that the table equals the online engine's on the same inputs:

1. *Collect.* ``ajudge`` runs with the mode ``"batch_api_collect"``: every step is the online
   engine's own (batching, rendering, request options, store keys, parsing, re-ask choice),
   except that a request the store cannot answer is not sent; it is collected instead.
2. *Submit.* The collected requests become one JSONL file (``custom_id`` = rubric / variant /
   run / batch / attempt / store hash), which is uploaded and turned into a batch. The batch
   ID is saved beside the store, so a rerun with the same inputs resumes polling it instead
   of submitting again.
3. *Wait, download, record.* The batch is polled (bounded, with backoff); each output line is
   written into the response store under its request hash, each failed line as an error.
4. Steps 1-3 repeat while replies lead to re-asks (or failed lines are retried, boundedly).
5. *Table.* ``ajudge(..., offline=True)`` replays everything from the store: the table is
   built by exactly the code that builds the online table.

Batch replies carry ``latency_s = 0.0`` (the Batch API reports no per-request latency) and
``http_attempts = 1``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pandas as pd
from openai.types import Batch as SDKBatch

from judgekit.engine.batch_files import (
    ENDPOINT,
    BatchState,
    PendingRequest,
    batch_lines,
    fingerprint,
    reply_from_result,
)
from judgekit.engine.client import OpenAIJudge
from judgekit.engine.rows import judge_items
from judgekit.engine.runner import RunPlan, ajudge, blocking, register_mode
from judgekit.engine.session import CallOutcome, JudgeSession
from judgekit.engine.store import RequestKey, ResponseStore
from judgekit.types import Item, JudgeClient, Rubric, UsageError

logger = logging.getLogger(__name__)

COLLECT_MODE = "batch_api_collect"
TERMINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class PollPolicy:
    """How a batch is polled: interval grows by ``factor`` up to a cap; give up after a bound.

    Attributes:
        initial_s: First wait between polls.
        factor: Growth of the wait after each poll.
        max_interval_s: Longest wait between polls.
        timeout_s: Stop waiting (the batch keeps running; rerun to resume) after this long.
    """

    initial_s: float = 2.0
    factor: float = 1.5
    max_interval_s: float = 60.0
    timeout_s: float = 26 * 3600.0


@dataclass
class _Collector:
    """Requests found missing during one collect pass (and hashes not to retry)."""

    pending: dict[str, PendingRequest] = field(default_factory=dict)
    give_up: set[str] = field(default_factory=set)


_COLLECTOR: ContextVar[_Collector] = ContextVar("judgekit_batch_collector")


@dataclass
class _CollectingSession(JudgeSession):
    """A session that replays from the store and collects (does not send) everything else."""

    collector: _Collector = field(default_factory=_Collector)
    batch_index: int = 0

    async def call_or_replay(self, key: RequestKey) -> CallOutcome:
        """Replay a stored reply; otherwise note the request and report it as deferred."""
        request_hash = key.hash
        stored = self.stored(key)
        if stored is not None and (
            stored.reply is not None or request_hash in self.collector.give_up
        ):
            return CallOutcome.replay(stored, key.request)
        self.collector.pending.setdefault(request_hash, PendingRequest(key, self.batch_index))
        return CallOutcome(request_hash, None, "deferred to the Batch API", replayed=False)


async def _collect_mode(session: JudgeSession, plan: RunPlan) -> list[dict[str, Any]]:
    """Walk a run's batches like the online engine, collecting requests instead of sending."""
    collector = _COLLECTOR.get(None)
    if collector is None:
        raise ValueError(f"mode {COLLECT_MODE!r} is used by batch_judge() only")
    shared = {f.name: getattr(session, f.name) for f in dataclasses.fields(JudgeSession)}
    rows: list[dict[str, Any]] = []
    for batch in plan.batches:
        collecting = _CollectingSession(**shared, collector=collector, batch_index=batch.index)
        rows += await judge_items(collecting, plan, batch)
    return rows


register_mode(COLLECT_MODE, _collect_mode)


async def submit_batch(
    sdk: openai.AsyncOpenAI,
    pending: Sequence[PendingRequest],
    *,
    completion_window: str = "24h",
    metadata: Mapping[str, str] | None = None,
) -> str:
    """Upload the requests as JSONL, create the batch, and return its ID."""
    lines = batch_lines(pending)
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    uploaded = await sdk.files.create(file=("judgekit_batch.jsonl", data), purpose="batch")
    batch = await sdk.batches.create(
        input_file_id=uploaded.id,
        endpoint=ENDPOINT,
        completion_window=completion_window,  # type: ignore[arg-type]
        metadata=dict(metadata) if metadata else None,
    )
    return batch.id


async def wait_for_batch(sdk: openai.AsyncOpenAI, batch_id: str, policy: PollPolicy) -> SDKBatch:
    """Poll until the batch is completed, failed, expired or cancelled.

    Raises:
        TimeoutError: After ``policy.timeout_s``; the batch keeps running and a rerun resumes.
    """
    started = time.monotonic()
    interval = policy.initial_s
    while True:
        batch = await sdk.batches.retrieve(batch_id)
        if batch.status in TERMINAL_STATUSES:
            return batch
        if time.monotonic() - started + interval > policy.timeout_s:
            raise TimeoutError(
                f"batch {batch_id} still {batch.status} after {policy.timeout_s:.0f}s; "
                "rerun with the same inputs to resume waiting"
            )
        await asyncio.sleep(interval)
        interval = min(interval * policy.factor, policy.max_interval_s)


async def download_results(sdk: openai.AsyncOpenAI, batch: SDKBatch) -> list[dict[str, Any]]:
    """Every output and error line of a finished batch."""
    lines: list[dict[str, Any]] = []
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            content = await sdk.files.content(file_id)
            lines += [json.loads(raw) for raw in content.text.splitlines() if raw.strip()]
    return lines


def record_results(
    store: ResponseStore,
    pending: Sequence[PendingRequest],
    batch: SDKBatch,
    lines: Sequence[Mapping[str, Any]],
) -> tuple[int, int]:
    """Write each line's reply (or error) into the store; returns (replies, errors).

    A submitted request with no line in the results (expired or cancelled batch) is recorded
    as an error naming the batch and its status.

    Raises:
        ValueError: If a line's ``custom_id`` is not one of the submitted requests.
    """
    by_id = {p.custom_id: p for p in pending}
    answered: set[str] = set()
    replies = errors = 0
    for line in lines:
        custom_id = str(line.get("custom_id"))
        if custom_id not in by_id:
            raise ValueError(f"batch {batch.id}: result for unknown custom_id {custom_id!r}")
        answered.add(custom_id)
        request_hash = by_id[custom_id].key.hash
        reply, error = reply_from_result(line)
        if reply is not None:
            store.record_reply(request_hash, reply)
            replies += 1
        else:
            store.record_error(request_hash, error or "batch line failed", 1)
            errors += 1
    for custom_id in sorted(set(by_id) - answered):
        store.record_error(by_id[custom_id].key.hash, f"batch {batch.id} {batch.status}", 0)
        errors += 1
    return replies, errors


def _sdk_for(client: JudgeClient, api_key: str | None) -> openai.AsyncOpenAI:
    """The files/batches client of ``client``'s endpoint, with the given key or its own."""
    if not isinstance(client, OpenAIJudge):
        raise UsageError("pass sdk=openai.AsyncOpenAI(...) for a client that is not OpenAIJudge")
    if api_key:
        return openai.AsyncOpenAI(base_url=client.base_url, api_key=api_key)
    return client.new_sdk()


async def abatch_judge(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    *,
    store: ResponseStore | str | Path,
    sdk: openai.AsyncOpenAI | None = None,
    api_key: str | None = None,
    poll: PollPolicy = PollPolicy(),
    max_line_retries: int = 2,
    completion_window: str = "24h",
    **judge_options: Any,
) -> pd.DataFrame:
    """Judge through the Batch API and return the table ``judge()`` would return.

    Args:
        items: What to judge.
        rubric: The scoring instrument.
        client: The judge (its model, structured mode and options shape the requests).
        store: Response store (object or path); batch results are recorded in it and the
            submitted batch IDs are kept beside it for resuming.
        sdk: Client for the files and batches endpoints; by default one is built for
            ``client.base_url`` with the key from ``api_key`` or the environment.
        api_key: Key for the default ``sdk`` (never stored).
        poll: Polling policy.
        max_line_retries: How many more times a request whose batch line failed is submitted.
        completion_window: Batch completion window.
        **judge_options: The keyword arguments of :func:`judgekit.engine.judge` (runs,
            variants, batch_size, max_reasks, temperature, seed, structured, logprobs, ...),
            except ``store``, ``mode`` and ``offline``.

    Returns:
        The judgments table; ``attrs["batch_ids"]`` lists the batches used.

    Raises:
        ValueError: On a reserved option, or a batch the endpoint rejected as a whole.
        TimeoutError: When a batch is not done within ``poll.timeout_s`` (rerun to resume).
    """
    reserved = sorted({"store", "mode", "offline"} & set(judge_options))
    if reserved:
        raise ValueError(f"abatch_judge sets {reserved} itself")
    owns_store = not isinstance(store, ResponseStore)
    opened = ResponseStore(store) if not isinstance(store, ResponseStore) else store
    owns_sdk = sdk is None
    sdk = sdk or _sdk_for(client, api_key)
    state = BatchState(opened.path)
    failures: dict[str, int] = {}
    batch_ids: list[str] = []
    collect_options = {**judge_options, "progress": False}
    try:
        max_rounds = (int(judge_options.get("max_reasks", 2)) + 1) * (max_line_retries + 1) + 1
        for _round in range(max_rounds):
            collector = _Collector(give_up={h for h, n in failures.items() if n > max_line_retries})
            token = _COLLECTOR.set(collector)
            try:
                await ajudge(
                    items, rubric, client, store=opened, mode=COLLECT_MODE, **collect_options
                )
            finally:
                _COLLECTOR.reset(token)
            pending = sorted(collector.pending.values(), key=lambda p: p.custom_id)
            if not pending:
                break
            batch_ids.append(
                await _run_one_batch(sdk, opened, state, pending, poll, completion_window)
            )
            for p in pending:
                stored = opened.lookup(p.key.hash)
                if stored is None or stored.reply is None:
                    failures[p.key.hash] = failures.get(p.key.hash, 0) + 1
        else:
            raise RuntimeError("Batch API rounds did not settle; this is a bug in batch_api")
        table = await ajudge(items, rubric, client, store=opened, offline=True, **collect_options)
    finally:
        if owns_sdk:
            await sdk.close()
        if owns_store:
            opened.close()
    table.attrs["batch_ids"] = batch_ids
    return table


async def _run_one_batch(
    sdk: openai.AsyncOpenAI,
    store: ResponseStore,
    state: BatchState,
    pending: Sequence[PendingRequest],
    poll: PollPolicy,
    completion_window: str,
) -> str:
    """Submit (or resume) one batch for ``pending``, wait for it, and record its results."""
    digest = fingerprint(pending)
    batch_id = state.get(digest)
    if batch_id is not None:
        try:
            await sdk.batches.retrieve(batch_id)
            logger.info("resuming batch %s (%d requests)", batch_id, len(pending))
        except openai.NotFoundError:
            logger.warning("saved batch %s is unknown to the endpoint; resubmitting", batch_id)
            batch_id = None
    if batch_id is None:
        for p in pending:
            store.record_request(p.key)
        batch_id = await submit_batch(sdk, pending, completion_window=completion_window)
        state.put(digest, batch_id, len(pending))
        logger.info("submitted batch %s (%d requests)", batch_id, len(pending))
    batch = await wait_for_batch(sdk, batch_id, poll)
    if batch.status == "failed":
        problems = "; ".join(
            e.message or "" for e in (batch.errors.data if batch.errors else None) or []
        )
        state.drop(digest)
        raise ValueError(f"batch {batch_id} was rejected: {problems or 'no reason given'}")
    replies, errors = record_results(store, pending, batch, await download_results(sdk, batch))
    state.drop(digest)
    logger.info("batch %s %s: %d replies, %d errors", batch_id, batch.status, replies, errors)
    return batch_id


#: Blocking :func:`abatch_judge` (safe inside a running event loop, e.g. a notebook).
batch_judge = blocking(abatch_judge)
batch_judge.__name__ = batch_judge.__qualname__ = "batch_judge"
