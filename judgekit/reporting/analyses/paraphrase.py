"""Report step 04: does a judge's score depend on the wording of the prompt?

Per rubric x judge x run: the quadratic weighted kappa between every pair of prompt variants
(seed 004 requires each to exceed a gate, 0.8), the smallest of them with its interval, and
with the study's question column the pairwise kappas with whole questions resampled. A
combination with fewer than two items scored under two variants or more is one ``skipped``
line.
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
from judgekit.stats.consistency import paraphrase_sensitivity
from judgekit.study.folder import Study, figure_notes
from judgekit.types import UsageError

KEYS = ["rubric", "judge", "run"]  # the variants of each combination are compared


def _frame(rows: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows as one table (an empty one when there are none)."""
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


@step("04_paraphrase_sensitivity")
def paraphrase_analysis(
    study: Study,
    *,
    run: int = 1,
    gate: float = 0.8,
    ci_method: Literal["analytic", "percentile", "bca"] = "bca",
    n_boot: int = 2000,
    seed: int = 0,
) -> Analysis:
    """How far each judge's scores under one wording of the prompt agree with another's.

    Args:
        study: The loaded study.
        run: The run whose variants are compared (0: every run judged).
        gate: The kappa every pair of variants must exceed (seed 004: 0.8).
        ci_method: The kappa interval: ``analytic``, ``percentile`` or ``bca``.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        The tables ``paraphrase_pairwise`` (a row per pair of variants), ``paraphrase_summary``
        and ``paraphrase_pairwise_clustered`` (empty without a question column), and a kappa
        matrix per combination compared (``paraphrase_kappa_RUBRIC_JUDGE``, ``_runN`` added
        when several runs are compared).

    Raises:
        UsageError: When no combination was judged under two variants or more, or none in
            ``run``.
    """
    from judgekit import plots

    result = Analysis("04_paraphrase_sensitivity")
    verdicts = selected(study.verdicts, run=run)
    judged_variants = verdicts.groupby(KEYS, sort=False)["variant"].unique()
    result.say(f"variants judged per {' / '.join(KEYS)}: {judged_variants.map(list).to_dict()}")
    if judged_variants.map(len).max() < 2:
        raise UsageError("paraphrase sensitivity needs >= 2 variants")

    measured, clustered_rows = {}, []
    by_question = Columns(rater="rater", cluster=study.cluster)  # the study names its cluster
    interval = CI(ci_method, n_boot=n_boot, seed=seed)
    keys, variants = {}, {}
    for combination, judged in combinations(verdicts, KEYS):
        name = label(combination)
        variants[name] = list(pd.unique(judged["variant"]))
        long = rater_table(judged, rubric=combination["rubric"], rater="variant")
        if len(variants[name]) < 2 or shared_scored_items(long, variants[name]) < 2:
            result.say(f"skipped {name}: fewer than two items scored under two or more variants")
            continue
        keys[name] = combination
        scale = study.rubric(combination["rubric"]).scale
        sensitivity = partial(paraphrase_sensitivity, long, scale=scale, threshold=gate)
        measured[name] = sensitivity(ci=interval)
        if study.cluster:  # whole questions resampled (answers to one question are alike)
            clustered = sensitivity(ci=replace(interval, method="percentile"), columns=by_question)
            clustered_rows.append(clustered.pairwise.assign(**combination))
    pairwise = _frame([m.pairwise.assign(**keys[n]) for n, m in measured.items()])
    summary = _frame([m.summary.assign(**keys[n]) for n, m in measured.items()])
    result.tables["paraphrase_pairwise"] = pairwise
    result.tables["paraphrase_summary"] = summary
    result.tables["paraphrase_pairwise_clustered"] = _frame(clustered_rows)
    result.lines += figure_notes(pairwise, [*KEYS, "rater_a", "rater_b"])
    result.lines += figure_notes(summary, [*KEYS, "statistic"])

    several_runs = verdicts["run"].nunique() > 1  # then each figure's name says its run
    for name, sensitivity_of in measured.items():
        combination = keys[name]
        shown = [combination["rubric"], combination["judge"]]
        shown += [f"run{combination['run']}"] if several_runs else []
        result.figures[plots.figure_name("paraphrase_kappa", *shown)] = (
            plots.plot_paraphrase_matrix(
                sensitivity_of.pairwise, order=variants[name], gate=gate, title=name
            )
        )
    if not clustered_rows:
        result.say(
            "the study's items share no question: the intervals above treat items as independent"
        )
    return result
