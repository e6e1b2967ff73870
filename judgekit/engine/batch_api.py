"""OpenAI Batch API mode: the same judgments table as ``judge()``, at batch prices.

How it works, so that the table equals the online engine's on the same inputs:

1. *Collect.* ``ajudge`` runs with the mode ``"batch_api_collect"``: every step is the online
   engine's own (batching, rendering, request options, store keys, parsing, re-ask choice),
   except that a request the store cannot answer is not sent; it is collected instead.
2. *Submit.* The collected requests become JSONL files (``custom_id`` = rubric / variant /
   run / batch / attempt / store hash), split within the provider's request and byte limits,
   each uploaded and turned into a batch. Each batch ID and the store keys it holds are
   saved beside the store, so a rerun resumes polling the batches holding its pending
   requests instead of submitting them again (also after an interrupt mid-round).
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
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pandas as pd
from openai.types import Batch as SDKBatch

from judgekit.engine.batch_files import (
    ENDPOINT,
    BatchLimits,
    BatchState,
    PendingRequest,
    encoded_lines,
    hash_of,
    reply_from_result,
    split_for_limits,
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
    data = b"".join(encoded_lines(pending))
    uploaded = await sdk.files.create(file=("judgekit_batch.jsonl", data), purpose="batch")
    batch = await sdk.batches.create(
        input_file_id=uploaded.id,
        endpoint=ENDPOINT,
        completion_window=completion_window,  # type: ignore[arg-type]
        metadata=dict(metadata) if metadata else None,
    )
    return batch.id


async def wait_for_batch(
    sdk: openai.AsyncOpenAI,
    batch_id: str,
    policy: PollPolicy,
    on_poll: Callable[[SDKBatch], None] = lambda _batch: None,
) -> SDKBatch:
    """Poll until the batch is completed, failed, expired or cancelled.

    Raises:
        TimeoutError: After ``policy.timeout_s``; the batch keeps running and a rerun resumes.
    """
    started = time.monotonic()
    interval = policy.initial_s
    while True:
        batch = await sdk.batches.retrieve(batch_id)
        on_poll(batch)
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
    pending: Mapping[str, PendingRequest],
    batch: SDKBatch,
    lines: Sequence[Mapping[str, Any]],
    expected: Sequence[str],
) -> tuple[int, int]:
    """Write each line's reply (or error) into the store; returns (replies, errors).

    Args:
        store: Where the replies go.
        pending: The requests still unanswered, by store key; lines for other requests of
            the batch (recorded by an earlier, interrupted run) are skipped.
        batch: The finished batch.
        lines: Its output and error lines.
        expected: The store keys of the batch's requests.

    A pending request of the batch with no line (expired or cancelled batch) is recorded as
    an error naming the batch and its status.

    Raises:
        ValueError: If a line's ``custom_id`` is not one of the batch's requests.
    """
    members = set(expected)
    answered: set[str] = set()
    replies = errors = 0
    for line in lines:
        request_hash = hash_of(str(line.get("custom_id")))
        if request_hash not in members:
            unknown = line.get("custom_id")
            raise ValueError(f"batch {batch.id}: result for unknown custom_id {unknown!r}")
        answered.add(request_hash)
        if request_hash not in pending:
            continue
        reply, error = reply_from_result(line)
        if reply is not None:
            store.record_reply(request_hash, reply)
            replies += 1
        else:
            store.record_error(request_hash, error or "batch line failed", 1)
            errors += 1
    for request_hash in sorted(members & set(pending) - answered):
        store.record_error(request_hash, f"batch {batch.id} {batch.status}", 0)
        errors += 1
    return replies, errors


def _sdk_for(client: JudgeClient, api_key: str | None) -> openai.AsyncOpenAI:
    """The files/batches client of ``client``'s endpoint, with the given key or its own."""
    if not isinstance(client, OpenAIJudge):
        raise UsageError("pass sdk=openai.AsyncOpenAI(...) for a client that is not OpenAIJudge")
    if api_key:
        return openai.AsyncOpenAI(base_url=client.base_url, api_key=api_key)
    return client.new_sdk()


async def collect_pending(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    store: ResponseStore,
    give_up: frozenset[str] = frozenset(),
    **judge_options: Any,
) -> list[PendingRequest]:
    """The requests the store cannot answer yet, found by walking the study as ``judge()``.

    Re-asks appear once the replies they depend on are stored; ``give_up`` lists store keys
    whose stored failure is final (replayed, not collected).
    """
    collector = _Collector(give_up=set(give_up))
    token = _COLLECTOR.set(collector)
    try:
        await ajudge(
            items, rubric, client, store=store, mode=COLLECT_MODE, progress=False, **judge_options
        )
    finally:
        _COLLECTOR.reset(token)
    return sorted(collector.pending.values(), key=lambda p: p.custom_id)


@dataclass
class _Round:
    """One round's batches: what they hold and where they go (shared by its waits)."""

    sdk: openai.AsyncOpenAI
    store: ResponseStore
    state: BatchState
    pending: dict[str, PendingRequest]
    poll: PollPolicy
    notify: Callable[[str], None]


async def abatch_judge(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    *,
    store: ResponseStore | str | Path,
    sdk: openai.AsyncOpenAI | None = None,
    api_key: str | None = None,
    poll: PollPolicy = PollPolicy(),
    limits: BatchLimits = BatchLimits(),
    max_line_retries: int = 2,
    completion_window: str = "24h",
    notify: Callable[[str], None] = logger.info,
    **judge_options: Any,
) -> pd.DataFrame:
    """Judge through the Batch API and return the table ``judge()`` would return.

    Args:
        items: What to judge.
        rubric: The scoring instrument.
        client: The judge (its model, structured mode and options shape the requests).
        store: Response store (object or path); batch results are recorded in it and the
            submitted batches are kept beside it (:class:`BatchState`) for resuming.
        sdk: Client for the files and batches endpoints; by default one is built for
            ``client.base_url`` with the key from ``api_key`` or the environment.
        api_key: Key for the default ``sdk`` (never stored).
        poll: Polling policy.
        limits: Requests and bytes per input file; a round larger than that is split.
        max_line_retries: How many more times a request whose batch line failed is submitted.
        completion_window: Batch completion window.
        notify: Called with one line per event (submitted, resumed, status change, recorded).
        **judge_options: The keyword arguments of :func:`judgekit.engine.judge` (runs,
            variants, batch_size, max_reasks, temperature, seed, structured, logprobs, ...),
            except ``store``, ``mode`` and ``offline``.

    Returns:
        The judgments table; ``attrs["batch_ids"]`` lists the batches used, ``api_calls``
        the requests answered by them in this call, ``failed_calls`` the failed lines.

    Raises:
        ValueError: On a reserved option, or a batch the endpoint rejected as a whole.
        TimeoutError: When a batch is not done within ``poll.timeout_s`` (rerun to resume).
    """
    reserved = sorted({"store", "mode", "offline", "progress"} & set(judge_options))
    if reserved:
        raise ValueError(f"abatch_judge sets {reserved} itself")
    owns_store = not isinstance(store, ResponseStore)
    opened = ResponseStore(store) if not isinstance(store, ResponseStore) else store
    owns_sdk = sdk is None
    sdk = sdk or _sdk_for(client, api_key)
    state = BatchState(opened.path)
    failures: dict[str, int] = {}
    batch_ids: list[str] = []
    answered = failed = 0
    try:
        max_rounds = (int(judge_options.get("max_reasks", 2)) + 1) * (max_line_retries + 1) + 1
        for round_number in range(1, max_rounds + 1):
            give_up = frozenset(h for h, n in failures.items() if n > max_line_retries)
            pending = await collect_pending(items, rubric, client, opened, give_up, **judge_options)
            if not pending:
                break
            by_hash = {p.key.hash: p for p in pending}
            work = _Round(sdk, opened, state, by_hash, poll, notify)
            where = {"base_url": getattr(client, "base_url", ""), "round": round_number}
            where["provider"] = getattr(getattr(client, "preset", None), "name", "")
            ids = await _run_round(work, limits, completion_window, where)
            batch_ids += ids
            for request_hash in by_hash:
                stored = opened.lookup(request_hash)
                if stored is None or stored.reply is None:
                    failures[request_hash] = failures.get(request_hash, 0) + 1
                    failed += 1
                else:
                    answered += 1
        else:
            raise RuntimeError("Batch API rounds did not settle; this is a bug in batch_api")
        table = await ajudge(
            items, rubric, client, store=opened, offline=True, progress=False, **judge_options
        )
    finally:
        if owns_sdk:
            await sdk.close()
        if owns_store:
            opened.close()
    table.attrs.update(batch_ids=batch_ids, api_calls=answered + failed, failed_calls=failed)
    return table


async def _run_round(
    work: _Round, limits: BatchLimits, completion_window: str, where: Mapping[str, Any]
) -> list[str]:
    """Resume the saved batches holding pending requests, submit the rest (split), record all.

    Returns:
        The IDs of the round's batches.
    """
    resumed: list[dict[str, Any]] = []
    covered: set[str] = set()
    for entry in work.state.unrecorded():
        if set(entry.get("hashes", ())) & set(work.pending) and await _still_known(work, entry):
            resumed.append(entry)
            covered |= set(entry["hashes"])
            work.notify(
                f"resuming batch {entry['batch_id']} ({entry['requests']} requests, "
                f"{entry.get('status', '?')})"
            )
    to_submit = [p for h, p in work.pending.items() if h not in covered]
    for chunk in split_for_limits(to_submit, limits) if to_submit else []:
        hashes = [p.key.hash for p in chunk]
        for p in chunk:
            work.store.record_request(p.key)
        batch_id = await submit_batch(work.sdk, chunk, completion_window=completion_window)
        work.state.add(batch_id, hashes, **where)
        resumed.append({"batch_id": batch_id, "hashes": hashes, "requests": len(hashes)})
        work.notify(f"submitted batch {batch_id} ({len(hashes)} requests)")
    await asyncio.gather(*(_finish_batch(work, entry) for entry in resumed))
    return [entry["batch_id"] for entry in resumed]


async def _still_known(work: _Round, entry: Mapping[str, Any]) -> bool:
    """Whether the endpoint still knows a saved batch (else its requests are submitted again)."""
    try:
        await work.sdk.batches.retrieve(entry["batch_id"])
    except openai.NotFoundError:
        work.notify(f"saved batch {entry['batch_id']} is unknown to the endpoint; submitting again")
        work.state.update(entry["batch_id"], recorded=True, status="unknown to the endpoint")
        return False
    return True


async def _finish_batch(work: _Round, entry: Mapping[str, Any]) -> None:
    """Wait for one batch, then record its results (or fail on a batch rejected whole)."""
    batch_id = entry["batch_id"]

    def on_poll(batch: SDKBatch) -> None:
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        if work.state.update(batch_id, status=batch.status, counts=counts):
            done = f"{counts.get('completed', 0)}/{counts.get('total', 0)} done" if counts else ""
            work.notify(f"batch {batch_id}: {batch.status} {done}".rstrip())

    batch = await wait_for_batch(work.sdk, batch_id, work.poll, on_poll)
    if batch.status == "failed":
        problems = "; ".join(
            e.message or "" for e in (batch.errors.data if batch.errors else None) or []
        )
        work.state.update(batch_id, recorded=True)
        raise ValueError(f"batch {batch_id} was rejected: {problems or 'no reason given'}")
    lines = await download_results(work.sdk, batch)
    replies, errors = record_results(work.store, work.pending, batch, lines, entry["hashes"])
    work.state.update(batch_id, recorded=True)
    work.notify(f"batch {batch_id} {batch.status}: {replies} replies, {errors} failed lines")


#: Blocking :func:`abatch_judge` (safe inside a running event loop, e.g. a notebook).
batch_judge = blocking(abatch_judge)
batch_judge.__name__ = batch_judge.__qualname__ = "batch_judge"
