"""Judging with every judge of a panel at once: one client each, one store, an outcome each.

Every judge gets its own client, built once for the whole command (its own throttle, its own
key, sent only to its own base URL; :func:`panel_clients`); all judges run concurrently on one
store (:func:`judge_panel`, through the engine's sync bridge). A judge whose calls fail for
good is reported with its reason and does not stop the others. Who the judges are is
:mod:`judgekit.judging.panel`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from judgekit.data.tidy import JUDGE
from judgekit.engine import (
    JudgeCallError,
    JudgeOptions,
    OfflineStoreMissError,
    ResponseStore,
    ajudge,
    run_sync,
)
from judgekit.judging.clients import default_judge_client
from judgekit.judging.panel import JudgeSpec
from judgekit.types import Item, Rubric

#: Failures that end one judge's work but not the panel's.
JUDGE_FAILURES = (JudgeCallError, OfflineStoreMissError)


@contextlib.contextmanager
def panel_clients(
    judges: Sequence[JudgeSpec],
    planned: Mapping[str, Any],
    *,
    log_dir: Path | None,
    notice_stream: TextIO | None,
) -> Iterator[dict[str, Any]]:
    """Each judge's client by label: a remote judge's ``planned`` one, the one that was checked.

    A local judge's server starts here and runs until the block ends (its planned client
    points nowhere).
    """
    with contextlib.ExitStack() as stack:
        clients = {}
        for spec in judges:
            clients[spec.label] = (
                planned[spec.label]
                if spec.endpoint.remote
                else stack.enter_context(
                    default_judge_client(
                        spec.endpoint, log_dir=log_dir, notice_stream=notice_stream
                    )
                )
            )
        yield clients


@dataclass(frozen=True)
class JudgeOutcome:
    """What one judge of a panel produced: its judgments, or why it produced none.

    Attributes:
        label: The judge.
        judgments: Its judgments table (with the ``judge`` column), ``None`` if it failed.
        failure: One line saying why it failed for good (``""`` when it did not).
        error: The error that ended it.
    """

    label: str
    judgments: pd.DataFrame | None
    failure: str = ""
    error: BaseException | None = None


async def _judge_one(
    label: str,
    items: Sequence[Item],
    rubric: Rubric,
    client: Any,
    options: JudgeOptions,
    checked: bool,
) -> JudgeOutcome:
    try:
        table = await ajudge(items, rubric, client, options, checked=checked)
    except JUDGE_FAILURES as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        return JudgeOutcome(label, None, reason, error)
    finally:
        await client.aclose()
    table[JUDGE] = label  # after the contract's columns, which keep their order
    return JudgeOutcome(label, table)


def judge_panel(
    items: Sequence[Item],
    rubric: Rubric,
    clients: Mapping[str, Any],
    options: JudgeOptions,
    prices: Mapping[str, Mapping[str, float] | None] | None = None,
    *,
    checked: bool = False,
) -> dict[str, JudgeOutcome]:
    """Judge ``items`` with every client at once, on one store; each judge within its limits.

    Args:
        items: What to judge.
        rubric: The rubric.
        clients: Each judge's client by label (:func:`panel_clients`).
        options: How to judge; ``options.store`` (a path) is opened once and shared.
        prices: Each judge's prices by label (for its estimate).
        checked: The options and items were checked against every client already (the CLI's
            :func:`~judgekit.judging.judge.check_options`): the engine does not again.

    Returns:
        Each judge's outcome by label, in the order given: its judgments (with a ``judge``
        column last) or the one-line reason it failed for good.
    """
    store = options.store
    shared = store
    if isinstance(store, str | Path):
        shared = ResponseStore.open_readonly(store) if options.offline else ResponseStore(store)

    async def everyone() -> list[JudgeOutcome]:
        return list(
            await asyncio.gather(
                *(
                    _judge_one(
                        label,
                        items,
                        rubric,
                        client,
                        options.updated(store=shared, prices=(prices or {}).get(label)),
                        checked,
                    )
                    for label, client in clients.items()
                )
            )
        )

    try:
        outcomes = run_sync(everyone())
    finally:
        if shared is not store and isinstance(shared, ResponseStore):
            shared.close()
    return {outcome.label: outcome for outcome in outcomes}
