"""The batch-size probe: judge the same items at several batch sizes and compare the runs.

It runs the judge (engine) and summarises each run with :mod:`judgekit.stats.position`, so it
lives above both.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgekit.engine import judge
from judgekit.stats import CI, Columns
from judgekit.stats.position import JUDGMENT_ITEMS, Human
from judgekit.stats.run_summary import batch_run_summary
from judgekit.study.items import with_context
from judgekit.types import Item, JudgeClient, Rubric


def batch_size_sensitivity(
    items: Sequence[Item],
    rubric: Rubric,
    client: JudgeClient,
    human: Human,
    *,
    sizes: Sequence[int] = (1, 10, 60),
    weights: Literal["linear", "quadratic"] | None = "quadratic",
    ci: CI = CI("analytic", seed=0),
    columns: Columns = JUDGMENT_ITEMS,
    **judge_options: Any,
) -> pd.DataFrame:
    """Judge the same items at several batch sizes and compare agreement, failures and cost.

    Each size is one ``judge()`` call (``judge_options`` passed on: ``store``, ``mode``,
    ``max_reasks``, ``seed``, ...); with a store, sizes never share replies since their prompts
    differ. Wall time includes replays, so time a fresh store (or none) for real costs.
    Each table carries the items' context columns (``question``, ...), so ``columns.cluster``
    (e.g. ``"question"``) makes each size's kappa interval a cluster bootstrap with ``ci``'s
    method, replicates and seed (see :func:`batch_run_summary`).

    Returns:
        One row per size: ``batch_size``, ``wall_time_s``, ``api_calls`` and the columns of
        :func:`batch_run_summary`.
    """
    records = []
    for size in sizes:
        started = time.perf_counter()
        table = judge(items, rubric, client, batch_size=size, progress=False, **judge_options)
        table = with_context(table, items)
        elapsed = time.perf_counter() - started
        summary = batch_run_summary(
            table,
            human,
            rubric.scale.allowed,
            weights=weights,
            ci=ci,
            columns=columns,
        )
        records.append(
            {
                "batch_size": size,
                "wall_time_s": elapsed,
                "api_calls": table.attrs.get("api_calls", np.nan),
                **summary,
            }
        )
    return pd.DataFrame(records)
