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

import dataclasses
import logging
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pandas as pd

from judgekit.engine.batch_endpoint import PollPolicy, Round, run_round
from judgekit.engine.batch_files import BatchLimits, BatchState, PendingRequest
from judgekit.engine.client import OpenAIJudge
from judgekit.engine.modes import Mode, register_mode
from judgekit.engine.plan import RunPlan
from judgekit.engine.rows import judge_items
from judgekit.engine.runner import ajudge, blocking
from judgekit.engine.session import CallOutcome, JudgeSession
from judgekit.engine.store import RequestKey, ResponseStore
from judgekit.types import Item, JudgeClient, Rubric

logger = logging.getLogger(__name__)

COLLECT_MODE = "batch_api_collect"


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


register_mode(COLLECT_MODE, Mode(_collect_mode))


def _sdk_for(client: OpenAIJudge, api_key: str | None) -> openai.AsyncOpenAI:
    """The files/batches client of ``client``'s endpoint, with the given key or its own."""
    if api_key:
        return openai.AsyncOpenAI(base_url=client.base_url, api_key=api_key)
    return client.new_sdk()


async def collect_pending(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    store: ResponseStore,
    give_up: frozenset[str] = frozenset(),
    *,
    checked: bool = False,
    **judge_options: Any,
) -> list[PendingRequest]:
    """The requests the store cannot answer yet, found by walking the study as ``judge()``.

    Re-asks appear once the replies they depend on are stored; ``give_up`` lists store keys
    whose stored failure is final (replayed, not collected); ``checked`` as in ``ajudge``.
    """
    collector = _Collector(give_up=set(give_up))
    token = _COLLECTOR.set(collector)
    try:
        await ajudge(
            items,
            rubric,
            client,
            store=store,
            mode=COLLECT_MODE,
            progress=False,
            checked=checked,
            **judge_options,
        )
    finally:
        _COLLECTOR.reset(token)
    return sorted(collector.pending.values(), key=lambda p: p.custom_id)


async def abatch_judge(
    items: Sequence[Item],
    rubric: Rubric,
    client: OpenAIJudge,
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
        client: The judge (its model, structured mode and options shape the requests); the
            Batch API is an OpenAI-compatible endpoint's, so an :class:`OpenAIJudge`.
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
            pending = await collect_pending(
                items, rubric, client, opened, give_up, checked=round_number > 1, **judge_options
            )
            if not pending:
                break
            by_hash = {p.key.hash: p for p in pending}
            work = Round(sdk, opened, state, by_hash, poll, notify)
            where = {"base_url": client.base_url, "round": round_number}
            where["provider"] = client.preset.name
            ids = await run_round(work, limits, completion_window, where)
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
        table = await ajudge(  # the first round checked the items and these options
            items,
            rubric,
            client,
            store=opened,
            offline=True,
            progress=False,
            checked=True,
            **judge_options,
        )
    finally:
        if owns_sdk:
            await sdk.close()
        if owns_store:
            opened.close()
    table.attrs.update(batch_ids=batch_ids, api_calls=answered + failed, failed_calls=failed)
    return table


#: Blocking :func:`abatch_judge` (safe inside a running event loop, e.g. a notebook).
batch_judge = blocking(abatch_judge)
batch_judge.__name__ = batch_judge.__qualname__ = "batch_judge"
