"""Report step 03: does a judge agree with itself over repeated runs of the same prompts?

Per rubric x judge x prompt variant: the share of items scored identically in every run (seed
004 asks for 100%), each item's flip rate, and Fleiss' kappa and Krippendorff's alpha with
runs as raters; with the study's question column, the same statistics with whole questions
resampled. A combination with fewer than two items scored in two runs or more is one
``skipped`` line.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Literal

import pandas as pd

from judgekit.data.tidy import rater_table, shared_scored_items
from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns
from judgekit.stats.consistency import run_consistency
from judgekit.study.folder import Study, figure_notes
from judgekit.types import UsageError

KEYS = ["rubric", "judge", "variant"]  # the runs of each combination are compared


def _frame(rows: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows as one table (an empty one when there are none)."""
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


@step("03_run_consistency")
def consistency_analysis(
    study: Study,
    *,
    variant: str = "base",
    target: float = 1.0,
    ci_method: Literal["percentile", "bca"] = "bca",
    n_boot: int = 2000,
    seed: int = 0,
) -> Analysis:
    """How consistently each judge scores the same items over its runs.

    Args:
        study: The loaded study.
        variant: The prompt variant whose runs are compared (empty: every variant judged).
        target: The share of identical items required (seed 004: 1.0).
        ci_method: The interval of kappa and alpha: ``percentile`` or ``bca``.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        The tables ``consistency_summary``, ``consistency_per_item`` and
        ``consistency_summary_clustered`` (empty without a question column) and the figure
        ``consistency_flip_rates`` (when a combination was compared).

    Raises:
        UsageError: When no combination was judged in two runs or more, or none in ``variant``.
    """
    from judgekit import plots

    result = Analysis("03_run_consistency")
    verdicts = selected(study.verdicts, variant)
    judged_runs = verdicts.groupby(KEYS, sort=False)["run"].nunique()
    result.say(f"runs judged per {' / '.join(KEYS)}: {judged_runs.to_dict()}")
    if judged_runs.max() < 2:
        raise UsageError("run consistency needs a judgments table with runs >= 2")

    summaries, per_item, clustered_rows = [], [], []
    by_question = Columns(rater="run", cluster=study.cluster)  # the study names its cluster
    interval = CI(ci_method, n_boot=n_boot, seed=seed)
    for combination, judged in combinations(verdicts, KEYS):
        panel = label(combination)
        runs = sorted(pd.unique(judged["run"]))
        rows = rater_table(judged, rubric=combination["rubric"], rater="judge")
        if len(runs) < 2 or shared_scored_items(rows, runs, rater_col="run") < 2:
            result.say(f"skipped {panel}: fewer than two items scored in each of two or more runs")
            continue
        scale = study.rubric(combination["rubric"]).scale
        consistency = partial(run_consistency, rows, scale=scale, target=target)
        measured = consistency(ci=interval)
        summaries.append(measured.summary.assign(**combination))
        per_item.append(measured.per_item.assign(**combination, panel=panel))
        if study.cluster:  # whole questions resampled (answers to one question are alike)
            clustered = consistency(ci=replace(interval, method="percentile"), columns=by_question)
            clustered_rows.append(clustered.summary.assign(**combination))
    summary, items = _frame(summaries), _frame(per_item)
    result.tables["consistency_summary"] = summary
    result.tables["consistency_per_item"] = items
    result.tables["consistency_summary_clustered"] = _frame(clustered_rows)
    result.lines += figure_notes(summary, [*KEYS, "statistic"])
    if summaries:
        result.figures["consistency_flip_rates"] = plots.plot_consistency(items, panel=KEYS)
    if not clustered_rows:
        result.say(
            "the study's items share no question: the intervals above treat items as independent"
        )
    return result
