"""``judge()``: score items with a rubric and a judge client into a tidy table.

For every (variant, run) the items are cut into batches, each batch is rendered into one
request (the run index goes into the store key, never into the prompt, so at temperature 0
repeats are honest re-measurements), answered from the store or the judge, parsed, and its
failed rows re-asked. How the batches of one run are sent, and how its first asks are
foreseen for the estimate, is a *mode* (:mod:`judgekit.engine.modes`: ``"independent"``,
``"conversation"``, and any an extension registers); every mode reuses the same steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import inspect
import logging
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pandas as pd
from tqdm import tqdm  # plain bar: tqdm.auto warns in kernels without ipywidgets

from judgekit.data import make_batches
from judgekit.engine.estimate import CostEstimate, estimate_cost
from judgekit.engine.modes import MODES
from judgekit.engine.options import JudgeOptions, check_items
from judgekit.engine.ordering import order_items
from judgekit.engine.plan import ModeRunner, Row, RunPlan
from judgekit.engine.rows import ALL_COLUMNS
from judgekit.engine.session import JudgeSession, describe_options
from judgekit.engine.store import ResponseStore
from judgekit.types import ChatRequest, Item, JudgeClient, Rubric

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

#: Seconds an interrupted ``judge()`` waits for the cancelled run to close its store and client.
CANCEL_GRACE_S = 5.0


def _first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first


def _estimate(
    session: JudgeSession, plans: Sequence[RunPlan], prices: Mapping[str, float] | None, mode: str
) -> tuple[CostEstimate, ChatRequest | None]:
    """The run's estimate and its first request as it will be sent (the mode foresees both)."""
    asks, stored, first = MODES[mode].first_asks(session, plans)
    estimate = estimate_cost(
        asks,
        stored=stored,
        output_format=session.rubric.format,
        max_tokens=session.settings.max_tokens,
        prices=prices,
    )
    return estimate, first


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


def _run_plans(items: Sequence[Item], rubric: Rubric, options: JudgeOptions) -> list[RunPlan]:
    size = options.batch_size_for(rubric)
    return [
        RunPlan(
            variant,
            run,
            tuple(make_batches(order_items(items, run, options.shuffle_seed), size)),
            options.context_tokens,
        )
        for variant in options.variants
        for run in range(1, options.runs + 1)
    ]


def preview(
    items: Sequence[Item], rubric: Rubric, client: JudgeClient, options: JudgeOptions
) -> tuple[ChatRequest | None, CostEstimate]:
    """The first request exactly as ``judge()`` would send it, and the run's estimate; no call.

    A store file, if there is one, is opened read-only, only to count the replies it holds.

    Raises:
        judgekit.types.UsageError: As :func:`ajudge`.
    """
    options.check(rubric, client, MODES)
    check_items(items, rubric)
    plans = _run_plans(items, rubric, options)
    store = options.store
    if isinstance(store, str | Path):
        store = ResponseStore.open_readonly(store) if Path(store).is_file() else None
    session = JudgeSession(rubric, client, options.settings(client, rubric), store)
    try:
        estimate, first = _estimate(session, plans, options.prices, options.mode)
        return first, estimate
    finally:
        if store is not None and store is not options.store:
            store.close()


async def _run_plans_in_order(
    session: JudgeSession, plans: Sequence[RunPlan], runner: ModeRunner
) -> list[Row]:
    """Every plan's rows, in plan order; the variants of one run go concurrently."""
    rows_by_plan: dict[int, list[Row]] = {}
    for run in sorted({plan.run for plan in plans}):
        # Runs go one after another: repeats send identical bodies, and an endpoint (or the
        # simulator) should see run r's requests before run r+1's, not interleaved at random.
        in_run = [(i, plan) for i, plan in enumerate(plans) if plan.run == run]
        try:
            async with asyncio.TaskGroup() as group:
                tasks = {i: group.create_task(runner(session, p)) for i, p in in_run}
        except BaseExceptionGroup as group_error:
            raise _first_error(group_error) from None
        rows_by_plan.update((i, task.result()) for i, task in tasks.items())
    return [row for i in range(len(plans)) for row in rows_by_plan[i]]


@contextlib.contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """Keep the objects that exist before a run out of the garbage collector's full passes.

    A full collection walks every tracked object, so the items, the plan and the imported
    libraries would make each pause longer as the study grows (0.34 s at 10^5 single-item
    requests, a window of 1,000 replies 16 % slower). ``gc.freeze`` sets them aside for the
    run and ``gc.unfreeze`` hands them back; a caller that froze objects itself is left alone.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def ajudge(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    options: JudgeOptions | None = None,
    *,
    checked: bool = False,
    **changes: Any,
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
        options: How to judge (:class:`JudgeOptions`; default: its defaults).
        checked: The caller has run these very checks already (``JudgeOptions.check`` with
            this client, ``check_items`` on these items), as the CLI does before any server
            starts: they are not run twice.
        **changes: Fields of :class:`JudgeOptions` to change (``runs=3``, ``store=path``, ...).

    Returns:
        One row per (variant, run, item) with the final verdict, plus one row per foreign ID a
        reply scored, in the order judged; columns :data:`judgekit.types.JUDGMENT_COLUMNS`,
        then :data:`judgekit.engine.rows.EXTRA_COLUMNS`, then any columns the mode adds, then
        ``shuffle_seed`` when the items were shuffled. Token counts and latency are per request
        (repeated on each row of a batch; deduplicate by ``request_hash`` before summing).
        ``table.attrs`` holds ``api_calls``, ``replayed``, ``failed_calls`` and ``estimate``.

    Raises:
        judgekit.types.UsageError: On inconsistent options or items lacking rubric columns.
        judgekit.engine.OfflineStoreMissError: Offline, when a reply is not in the store.
        judgekit.engine.JudgeCallError: When a failure ends the whole run (e.g. a bad key).
    """
    chosen = (options or JudgeOptions()).updated(**changes)
    if not checked:
        chosen.check(rubric, client, MODES)
        check_items(items, rubric)
    store = chosen.store
    owns_store = isinstance(store, str | Path)
    if isinstance(store, str | Path):
        store = ResponseStore.open_readonly(store) if chosen.offline else ResponseStore(store)
    plans = _run_plans(items, rubric, chosen)
    bar = tqdm(
        total=len(items) * len(plans),
        disable=not chosen.progress,
        unit="item",
        desc=f"{rubric.name} / {client.model}",
    )

    def advance(count: int) -> None:
        bar.update(count)

    session = JudgeSession(
        rubric, client, chosen.settings(client, rubric), store, on_items_done=advance
    )
    try:
        estimate, _ = _estimate(session, plans, chosen.prices, chosen.mode)
        first_batch = next((batch for plan in plans for batch in plan.batches), None)
        if chosen.progress and first_batch is not None:
            described = describe_options(session.options(first_batch.ids, 1))
            print(f"{estimate.describe()} Options: {described}.", file=sys.stderr)
        with _older_objects_frozen():
            rows = await _run_plans_in_order(session, plans, MODES[chosen.mode].run)
    finally:
        bar.close()
        if owns_store and store is not None:
            store.close()
    table = _table(rows, chosen.shuffle_seed)
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

        return run_sync(run_then_close())

    return run_blocking


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end from synchronous code: the engine's one sync bridge.

    Without a running loop (a script, the CLI) on a loop of its own; inside one (Jupyter) on a
    worker thread's loop, cancelled on interrupt (:func:`_run_in_worker_thread`).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    return _run_in_worker_thread(work)


#: Blocking :func:`ajudge` for scripts and notebooks (same arguments, same table).
judge = blocking(ajudge)
judge.__name__ = judge.__qualname__ = "judge"
