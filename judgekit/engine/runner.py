"""``judge()``: score items with a rubric and a judge client into a tidy table.

For every (variant, run) the items are cut into batches, each batch is rendered into one
request (the run index goes into the store key, never into the prompt, so at temperature 0
repeats are honest re-measurements), answered from the store or the judge, parsed, and its
failed rows re-asked. How the batches of one run are sent is a *mode*: ``"independent"``
sends each batch as its own conversation; other modes (e.g. one running conversation per run)
register themselves with :func:`register_mode` and reuse the same steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import logging
import sys
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pandas as pd
from tqdm import tqdm  # plain bar: tqdm.auto warns in kernels without ipywidgets

from judgekit.data import Batch, make_batches
from judgekit.engine.conversation import planned_turns
from judgekit.engine.estimate import CostEstimate, estimate_cost
from judgekit.engine.ordering import order_items
from judgekit.engine.rows import ALL_COLUMNS, judge_items
from judgekit.engine.session import JudgeSession, JudgeSettings, describe_options
from judgekit.engine.store import ResponseStore
from judgekit.types import ChatRequest, Item, JudgeClient, Rubric

logger = logging.getLogger(__name__)

Row = dict[str, Any]
P = ParamSpec("P")
T = TypeVar("T")

#: The most alternatives per token OpenAI's chat API returns (``top_logprobs`` limit).
MAX_TOP_LOGPROBS = 20

#: Seconds an interrupted ``judge()`` waits for the cancelled run to close its store and client.
CANCEL_GRACE_S = 5.0


@dataclass(frozen=True)
class RunPlan:
    """The batches of one (variant, run), in the order the judge will see them, and mode options."""

    variant: str
    run: int
    batches: tuple[Batch, ...]
    context_tokens: int | None = None  # conversation mode's per-request token budget


#: A judging mode: sends the batches of one run and returns their final rows in order.
ModeRunner = Callable[[JudgeSession, RunPlan], Coroutine[Any, Any, list[Row]]]


def _first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first


async def run_independent(session: JudgeSession, plan: RunPlan) -> list[Row]:
    """Send every batch of a run as its own request, concurrently (the client throttles)."""
    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(
                judge_items(
                    session,
                    batch.items,
                    variant=plan.variant,
                    run=plan.run,
                    batch_index=batch.index,
                    batch_label=batch.label,
                )
            )
            for batch in plan.batches
        ]
    return [row for task in tasks for row in task.result()]


MODES: dict[str, ModeRunner] = {"independent": run_independent}


def register_mode(name: str, runner: ModeRunner) -> None:
    """Make a judging mode available to ``judge(..., mode=name)``."""
    MODES[name] = runner


def _check_inputs(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    *,
    runs: int,
    variants: Sequence[str],
    batch_size: int | None,
    max_reasks: int,
    structured: bool | None,
    logprobs: bool,
    top_logprobs: int,
    mode: str,
    context_tokens: int | None,
    offline: bool,
    store: object,
) -> None:
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    if max_reasks < 0:
        raise ValueError(f"max_reasks must be >= 0, got {max_reasks}")
    unknown = [v for v in variants if v not in rubric.variants]
    if unknown or not variants:
        raise ValueError(
            f"rubric {rubric.name}: unknown variant(s) {unknown}; it has {rubric.variants}"
        )
    repeated = sorted({v for v in variants if list(variants).count(v) > 1})
    if repeated:
        raise ValueError(f"variants must be distinct; repeated: {repeated}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(
            f"batch_size must be at least 1 (or None for the default), got {batch_size}"
        )
    if not 0 <= top_logprobs <= MAX_TOP_LOGPROBS:
        raise ValueError(f"top_logprobs must be within 0..{MAX_TOP_LOGPROBS}, got {top_logprobs}")
    if not rubric.batched and batch_size not in (None, 1):
        raise ValueError(f"rubric {rubric.name} judges one item per request, not {batch_size}")
    if structured and client.structured_mode == "none":
        raise ValueError(f"{client.model}: this endpoint has no structured mode (structured=True)")
    if logprobs and not client.supports_logprobs:
        raise ValueError(f"{client.model}: this endpoint is not assumed to return logprobs")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; available: {sorted(MODES)}")
    if context_tokens is not None and mode != "conversation":
        raise ValueError(f"context_tokens applies to mode='conversation' only, not {mode!r}")
    if offline and store is None:
        raise ValueError("offline=True needs a store to answer from")
    if not offline and isinstance(store, ResponseStore) and store.readonly:
        raise ValueError(f"{store.path} is open read-only; use offline=True to replay it")
    required = getattr(rubric, "required_columns", rubric.input_columns)
    for row, item in enumerate(items, start=1):
        absent = [column for column in required if column not in item.fields]
        if absent:
            raise ValueError(f"item {item.id!r} (row {row}): missing column(s) {absent}")


def _planned_requests(
    session: JudgeSession, plan: RunPlan, mode: str
) -> list[tuple[ChatRequest, int]]:
    """A run's first asks as they will be sent (conversation turns carry their history)."""
    if mode == "conversation":
        return planned_turns(session, plan)
    return [
        (
            session.build_request(
                batch.items, variant=plan.variant, run=plan.run, batch_label=batch.label
            ),
            len(batch.items),
        )
        for batch in plan.batches
    ]


def _estimate(
    session: JudgeSession, plans: Sequence[RunPlan], prices: Mapping[str, float] | None, mode: str
) -> CostEstimate:
    first_asks = []
    unsent = []
    for plan in plans:
        for request, n_items in _planned_requests(session, plan, mode):
            first_asks.append((request, n_items))
            key = session.request_key(request, variant=plan.variant, run=plan.run, attempt=1)
            stored = session.stored(key)
            unsent.append(stored is None or (stored.reply is None and not session.settings.offline))
    return estimate_cost(
        first_asks,
        unsent=unsent,
        output_format=session.rubric.output_format,
        max_tokens=session.settings.max_tokens,
        model=session.model,
        prices=prices,
    )


def _table(rows: list[Row], shuffle_seed: int | None) -> pd.DataFrame:
    """The judgments table: the contract columns, then any a mode added, then the shuffle seed."""
    extra = list(dict.fromkeys(k for row in rows for k in row if k not in ALL_COLUMNS))
    frame = pd.DataFrame(rows, columns=[*ALL_COLUMNS, *extra])
    for column in ("score", "expected_score", "latency_s"):
        frame[column] = frame[column].astype("float64")
    for column in ("run", "attempt", "batch_index", "prompt_tokens", "completion_tokens"):
        frame[column] = frame[column].astype("int64")
    for column in ("cached_tokens", "http_attempts"):
        frame[column] = frame[column].astype("int64")
    frame["position"] = frame["position"].astype("Int64")
    frame["structured"] = frame["structured"].astype(bool)
    if shuffle_seed is not None:
        frame["shuffle_seed"] = shuffle_seed
    return frame


async def ajudge(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    *,
    runs: int = 1,
    variants: Sequence[str] = ("base",),
    batch_size: int | None = None,
    store: ResponseStore | str | Path | None = None,
    max_reasks: int = 2,
    temperature: float = 0.0,
    seed: int | None = 0,
    seed_per_run: bool = False,
    max_tokens: int | None = None,
    structured: bool | None = None,
    logprobs: bool = False,
    top_logprobs: int = 20,
    mode: str = "independent",
    context_tokens: int | None = None,
    shuffle_seed: int | None = None,
    progress: bool = True,
    prices: Mapping[str, float] | None = None,
    offline: bool = False,
) -> pd.DataFrame:
    """Judge ``items`` with ``rubric`` on ``client`` and return the tidy judgments table.

    ``await ajudge(...)`` in async code; ``judge(...)`` (same arguments) blocks until the table
    is ready, in scripts and inside Jupyter, then closes the client's connections. Under a
    running event loop ``judge`` works in a thread with its own loop; interrupting it (e.g.
    Jupyter's stop button) cancels the run at once, and replies already received stay stored.

    Args:
        items: What to judge (unique IDs, with the rubric's input columns).
        rubric: The scoring instrument.
        client: The judge endpoint (e.g. :class:`judgekit.engine.OpenAIJudge`).
        runs: Independent repeats of every request (distinct store entries, same prompt),
            sent one run after another.
        variants: Prompt variants of the rubric to run.
        batch_size: Items per request (default: the rubric's; 1 for single-item rubrics).
        store: A :class:`ResponseStore` or a path to one; replies are replayed from it.
        max_reasks: Re-asks of missing/unparseable/out-of-range/duplicate rows per batch.
        temperature: Sampling temperature.
        seed: Seed, sent where the endpoint honours seeds (``None`` = never sent).
        seed_per_run: Send ``seed + run - 1`` so runs differ on purpose.
        max_tokens: Output cap (not sent when ``None``).
        structured: Enforce the rubric's JSON schema; ``None`` = when the endpoint can.
        logprobs: Ask for top logprobs and record a logprob-weighted ``expected_score`` on ok
            rows (single-score formats and ``ID,score`` lines; the ``score`` is never
            replaced; NaN where the score token cannot be resolved).
        top_logprobs: Alternatives per token when ``logprobs`` is on.
        mode: ``"independent"`` (each batch its own chat), ``"conversation"`` (one running
            chat per run, see :mod:`judgekit.engine.conversation`), or a registered mode.
        context_tokens: Conversation mode's estimated token budget per request (a new chat
            starts when the next turn would not fit); ``None`` = one chat per run.
        shuffle_seed: Shuffle the items per run with this seed (``None`` = table order).
        progress: Show the estimate and a progress bar on stderr.
        prices: USD per 1M tokens, ``{"input": ..., "output": ...}``, for the estimate.
        offline: Answer only from the store; fail if a reply is missing.

    Returns:
        One row per (variant, run, item) with the final verdict, plus one row per foreign ID a
        reply scored, in the order judged; columns :data:`judgekit.types.JUDGMENT_COLUMNS`,
        then :data:`judgekit.engine.rows.EXTRA_COLUMNS`, then any columns the mode adds, then
        ``shuffle_seed`` when the items were shuffled. Token counts and latency are per request
        (repeated on each row of a batch; deduplicate by ``request_hash`` before summing).
        ``table.attrs`` holds ``api_calls``, ``replayed``, ``failed_calls`` and ``estimate``.

    Raises:
        ValueError: On inconsistent arguments or items lacking rubric columns.
        judgekit.engine.OfflineStoreMissError: Offline, when a reply is not in the store.
        judgekit.engine.JudgeCallError: When a failure ends the whole run (e.g. a bad key).
    """
    _check_inputs(
        items,
        rubric,
        client,
        runs=runs,
        variants=variants,
        batch_size=batch_size,
        max_reasks=max_reasks,
        structured=structured,
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        mode=mode,
        context_tokens=context_tokens,
        offline=offline,
        store=store,
    )
    if not rubric.batched:
        size = 1
    else:
        size = rubric.default_batch_size if batch_size is None else batch_size
    settings = JudgeSettings(
        temperature=temperature,
        seed=seed,
        seed_per_run=seed_per_run,
        max_tokens=max_tokens,
        structured=client.structured_mode != "none" if structured is None else structured,
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        max_reasks=max_reasks,
        offline=offline,
    )
    owns_store = isinstance(store, str | Path)
    if isinstance(store, str | Path):
        store = ResponseStore.open_readonly(store) if offline else ResponseStore(store)
    plans = [
        RunPlan(
            variant,
            run,
            tuple(make_batches(order_items(items, run, shuffle_seed), size)),
            context_tokens,
        )
        for variant in variants
        for run in range(1, runs + 1)
    ]
    bar = tqdm(
        total=len(items) * len(plans),
        disable=not progress,
        unit="item",
        desc=f"{rubric.name} / {client.model}",
    )

    def advance(count: int) -> None:
        bar.update(count)

    session = JudgeSession(rubric, client, settings, store, on_items_done=advance)
    try:
        estimate = _estimate(session, plans, prices, mode)
        first_batch = next((batch for plan in plans for batch in plan.batches), None)
        if progress and first_batch is not None:
            options = describe_options(session.options(first_batch.ids, 1))
            print(f"{estimate.describe()} Options: {options}.", file=sys.stderr)
        rows_by_plan: dict[int, list[Row]] = {}
        for run in range(1, runs + 1):
            # Runs go one after another: repeats send identical bodies, and an endpoint (or the
            # simulator) should see run r's requests before run r+1's, not interleaved at random.
            in_run = [(i, plan) for i, plan in enumerate(plans) if plan.run == run]
            try:
                async with asyncio.TaskGroup() as group:
                    tasks = {i: group.create_task(MODES[mode](session, p)) for i, p in in_run}
            except BaseExceptionGroup as group_error:
                raise _first_error(group_error) from None
            rows_by_plan.update((i, task.result()) for i, task in tasks.items())
    finally:
        bar.close()
        if owns_store and store is not None:
            store.close()
    table = _table([row for i in range(len(plans)) for row in rows_by_plan[i]], shuffle_seed)
    table.attrs.update(
        api_calls=session.counters.api_calls,
        replayed=session.counters.replayed,
        failed_calls=session.counters.failed,
        estimate=dataclasses.asdict(estimate),
    )
    logger.info(
        "judged %d rows: %d API calls, %d replayed from the store, %d failed",
        len(table),
        session.counters.api_calls,
        session.counters.replayed,
        session.counters.failed,
    )
    return table


def _run_in_worker_thread(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` on a new loop in a worker thread; on interrupt, cancel it and return fast.

    The caller's thread blocks in ``Future.result()``. If that wait is interrupted (Ctrl-C,
    Jupyter's stop button), the worker's main task is cancelled from this thread, given
    :data:`CANCEL_GRACE_S` to run its cleanup (store and client closed), and the interrupt is
    re-raised; the rest of the run is never waited for.
    """
    started = threading.Lock()
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    interrupted = threading.Event()

    async def cancellable() -> T:
        with started:
            if interrupted.is_set():
                work.close()
                raise asyncio.CancelledError
            task = asyncio.current_task()
            assert task is not None
            running.append((asyncio.get_running_loop(), task))
        return await work

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgekit")
    future = pool.submit(asyncio.run, cancellable())
    try:
        return future.result()
    except BaseException:
        if not future.done():  # interrupted while waiting, not a failure of the run itself
            with started:
                interrupted.set()
            for loop, task in running:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(task.cancel)
            with contextlib.suppress(BaseException):
                future.result(timeout=CANCEL_GRACE_S)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def blocking(
    run_async: Callable[P, Coroutine[Any, Any, pd.DataFrame]],
) -> Callable[P, pd.DataFrame]:
    """The blocking form of ``run_async``, which closes the client's connections when done."""
    signature = inspect.signature(run_async)

    @functools.wraps(run_async)
    def run_blocking(*args: P.args, **kwargs: P.kwargs) -> pd.DataFrame:
        client = signature.bind(*args, **kwargs).arguments["client"]

        async def run_then_close() -> pd.DataFrame:
            try:
                return await run_async(*args, **kwargs)
            finally:
                await client.aclose()

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run_then_close())
        return _run_in_worker_thread(run_then_close())

    return run_blocking


#: Blocking :func:`ajudge` for scripts and notebooks (same arguments, same table).
judge = blocking(ajudge)
judge.__name__ = judge.__qualname__ = "judge"
