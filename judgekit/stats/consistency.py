"""A judge's agreement with itself: over repeated runs, and over paraphrases of its prompt.

Seed 004 asks three runs at temperature 0 to agree 100 % and three prompt paraphrases to agree
at kappa > 0.8; the pass/fail report that applies those thresholds is
:mod:`judgekit.stats.protocol`. Both estimators take a long table whose rater column is the
run (or the variant) and accept a cluster column like every other statistic here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import (
    CI,
    as_generator,
    cluster_table,
    cluster_weights,
    unique_patterns,
)
from judgekit.stats._intervals import share_interval
from judgekit.stats._prep import (
    Columns,
    ScaleLike,
    cluster_codes,
    describe_drops,
    item_clusters,
    level_codes,
    order_columns,
    result_row,
    scale_values,
    usable_scores,
)
from judgekit.stats.agreement import (
    WeightBasis,
    Weights,
    disagreement_weights,
    kappa_matrix,
    kappa_stat,
    pairwise_kappa,
)
from judgekit.stats.multirater import AlphaLevel, fleiss_kappa, krippendorff_alpha

RUN_COLUMNS = Columns(rater="run")
VARIANT_COLUMNS = Columns(rater="variant")


def passes(value: float, threshold: float, strict: bool = False) -> bool | None:
    """``value >= threshold`` (``>`` when strict), or None when the value is undefined."""
    if not np.isfinite(value):
        return None
    return bool(value > threshold) if strict else bool(value >= threshold)


@dataclass(frozen=True)
class RunConsistency:
    """Run-to-run consistency of one judge.

    Attributes:
        summary: Rows ``statistic`` = share_identical (headline, with pass/fail against the
            target), share_identical_among_complete, mean_flip_rate, fleiss_kappa,
            krippendorff_alpha.
        per_item: item, n_runs (usable), n_distinct, modal_score, flip_rate, identical.
    """

    summary: pd.DataFrame
    per_item: pd.DataFrame


def _per_item(df: pd.DataFrame, columns: Columns, scale: ScaleLike) -> pd.DataFrame:
    """One row per item: usable runs, distinct scores, modal score, flip rate, identical."""
    usable = usable_scores(df, columns, scale)
    runs = pd.unique(df[columns.rater])
    if len(runs) < 2:
        raise ValueError(
            f"run consistency needs at least two values of {columns.rater!r}, got {runs}"
        )
    wide = usable.scores.pivot(index="item", columns="rater", values="score")
    wide = wide.reindex(index=pd.unique(df[columns.item]), columns=runs)
    n_runs = wide.notna().sum(axis=1)
    modal = wide.mode(axis=1)[0] if len(wide.mode(axis=1).columns) else n_runs * np.nan
    modal_count = wide.eq(modal, axis=0).sum(axis=1)
    per_item = pd.DataFrame(
        {
            "item": wide.index,
            "n_runs": n_runs.to_numpy(),
            "n_distinct": wide.nunique(axis=1).to_numpy(),
            "modal_score": modal.to_numpy(),
            "flip_rate": (1 - modal_count / n_runs.where(n_runs > 0)).to_numpy(),
        }
    )
    complete = per_item["n_runs"] == len(runs)
    per_item["identical"] = complete & (per_item["n_distinct"] == 1)
    return per_item


def _share_row(
    hits: np.ndarray,
    clusters: np.ndarray | None,
    ci: CI,
    **row: object,
) -> dict[str, object]:
    """Share of ``hits`` with its analytic interval (:func:`~judgekit.stats.share_interval`)."""
    share = share_interval(hits, clusters, replace(ci, method="analytic"))
    return result_row(**share, n=hits.size, **row)


def run_consistency(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    target: float = 1.0,
    alpha_level: AlphaLevel = "interval",
    ci: CI = CI("bca", seed=0),
    columns: Columns = RUN_COLUMNS,
) -> RunConsistency:
    """Agreement of one judge with itself over k runs of the same items.

    Headline ``share_identical`` = items scored identically in every run / all items: an item
    that failed (or abstained) in some run is not a consistent one and counts as not identical.
    ``share_identical_among_complete`` beside it restricts to items usable in every run. Seed
    004's target is 1.0 (passes when the headline share >= target). An item's flip rate is the
    share of its usable runs that differ from its modal score. Fleiss' kappa and Krippendorff's
    alpha treat runs as raters (``ci``: None, "percentile" or "bca"). The two shares carry their
    analytic interval whatever ``ci`` says (:func:`~judgekit.stats.share_interval`: Wilson's,
    with ``columns.cluster`` at the cluster-robust effective sample size), because a bootstrap
    of a share at 1.0, seed 004's target, collapses onto it. ``columns.rater`` is the run
    column; with ``columns.cluster`` the kappa and alpha intervals resample clusters, drawing
    in turn from one generator built from ``ci.seed``.

    Examples:
        >>> from judgekit.stats.examples import three_runs
        >>> result = run_consistency(three_runs(), ci=CI(None))
        >>> shown = result.summary[["statistic", "estimate", "ci_low", "ci_high"]]
        >>> print(shown.round(3).to_string(index=False))
                             statistic  estimate  ci_low  ci_high
                       share_identical     0.833   0.436     0.97
        share_identical_among_complete     0.833   0.436     0.97
                        mean_flip_rate     0.056     NaN      NaN
                          fleiss_kappa     0.841     NaN      NaN
                    krippendorff_alpha     0.935     NaN      NaN
    """
    per_item = _per_item(df, columns, scale)
    n_runs = int(per_item["n_runs"].max()) if len(per_item) else 0
    complete = per_item[per_item["n_runs"] == len(pd.unique(df[columns.rater]))]
    n_incomplete, why = describe_drops(
        ["not usable in every run"] * (len(per_item) - len(complete))
    )
    clusters = item_clusters(df, columns)
    ci = ci.offered((None, "percentile", "bca"), "run_consistency").shared()
    headline = _share_row(
        per_item["identical"].to_numpy(bool),
        cluster_codes(per_item["item"], clusters),
        ci,
        threshold=target,
        statistic="share_identical",
        method=f"identical across {n_runs} runs; an item failed in a run counts as not identical",
        note=f"{n_incomplete} item(s) not usable in every run counted as not identical"
        if n_incomplete
        else "",
    )
    headline["passed"] = passes(float(headline["estimate"]), target)  # type: ignore[arg-type]
    among = _share_row(
        complete["identical"].to_numpy(bool),
        cluster_codes(complete["item"], clusters),
        ci,
        statistic="share_identical_among_complete",
        method="identical across runs, among items usable in every run",
        n_dropped=n_incomplete,
        dropped_reason=why,
    )
    rows = [
        headline,
        among,
        result_row(
            statistic="mean_flip_rate",
            estimate=float(complete["flip_rate"].mean()) if len(complete) else np.nan,
            n=len(complete),
            method="share of runs off the modal score",
            ci_method="none",
            n_dropped=n_incomplete,
            dropped_reason=why,
        ),
    ]
    fleiss = fleiss_kappa(df, scale=scale, ci=ci, columns=columns)
    alpha = krippendorff_alpha(
        df, level_of_measurement=alpha_level, scale=scale, ci=ci, columns=columns
    )
    for name, table in (("fleiss_kappa", fleiss), ("krippendorff_alpha", alpha)):
        rows.append({"statistic": name, **{str(k): v for k, v in table.iloc[0].items()}})
    summary = order_columns(pd.DataFrame(rows), ["statistic"])
    return RunConsistency(summary=summary, per_item=per_item)


@dataclass(frozen=True)
class ParaphraseSensitivity:
    """Agreement of one judge with itself across prompt paraphrases (variants).

    Attributes:
        pairwise: One row per variant pair (rater_a, rater_b = variants) with kappa and CI.
        matrix: The same kappas as a symmetric variant x variant table.
        summary: Rows ``statistic`` = min_kappa (with pass/fail) and mean_kappa.
    """

    pairwise: pd.DataFrame
    matrix: pd.DataFrame
    summary: pd.DataFrame


def min_kappa_interval(
    df: pd.DataFrame,
    *,
    scale: ScaleLike,
    weights: Weights,
    weight_basis: WeightBasis,
    ci: CI,
    columns: Columns,
) -> tuple[float, float]:
    """Percentile interval of the *minimum* pairwise kappa, from a bootstrap of the minimum.

    Every replicate resamples items (or clusters) once, recomputes every variant pair's kappa
    on that same resample and keeps the smallest, so the choice of the weakest pair is redone
    in each replicate instead of being fixed after seeing the data. The minimum is not a
    smooth statistic, so the interval's coverage is approximate (``ci``: level, replicates,
    seed; its method is not used).
    """
    usable = usable_scores(df, columns, scale)
    wide = usable.scores.pivot(index="item", columns="rater", values="score")
    levels = scale_values(scale, usable.scores["score"])
    k = len(levels)
    stat = kappa_stat(disagreement_weights(levels, weights, weight_basis))
    clusters = cluster_codes(wide.index, item_clusters(df, columns))
    # Each item as its variants' level codes (-1: not scored); the replicates count how often
    # each distinct row is drawn, cluster by cluster (each item its own cluster when
    # unclustered), in chunks: no (replicates x items) matrix, the draws of the dense one.
    codes = np.full(wide.shape, -1, dtype=np.int64)
    for j, column in enumerate(wide.columns):
        scored = wide[column].notna().to_numpy()
        codes[scored, j] = level_codes(wide.loc[scored, column], levels)
    patterns, _, pattern_of_item = unique_patterns(codes)
    groups = np.arange(len(wide)) if clusters is None else clusters
    table = cluster_table(pattern_of_item.astype(np.int64), groups, len(patterns))
    draws = cluster_weights(table, ci.n_boot, as_generator(ci.seed))
    replicates = []
    for first, second in combinations(range(len(wide.columns)), 2):
        both = (patterns[:, first] >= 0) & (patterns[:, second] >= 0)
        onehot = np.zeros((len(patterns), k * k))
        onehot[np.flatnonzero(both), patterns[both, first] * k + patterns[both, second]] = 1.0
        replicates.append(stat(draws @ onehot))
    if not replicates:
        return np.nan, np.nan
    minimum = np.min(np.vstack(replicates), axis=0)
    finite = minimum[np.isfinite(minimum)]
    if finite.size < max(2, minimum.size // 2):
        return np.nan, np.nan
    low, high = np.quantile(finite, [(1 - ci.level) / 2, (1 + ci.level) / 2])
    return float(low), float(high)


def paraphrase_sensitivity(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    threshold: float = 0.8,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("bca", seed=0),
    columns: Columns = VARIANT_COLUMNS,
) -> ParaphraseSensitivity:
    """Pairwise kappa between prompt variants; passes when the smallest kappa exceeds threshold.

    Seed 004: "verify that agreement across variants is high (kappa > 0.8)", so the test is a
    strict ``min_kappa > threshold``. The minimum's interval comes from a bootstrap of the
    minimum itself (:func:`min_kappa_interval`), not from the weakest pair's own interval.
    ``columns.rater`` is the variant column.

    Examples:
        >>> import pandas as pd
        >>> variants = pd.DataFrame({
        ...     "item": list(range(1, 9)) * 2,
        ...     "variant": ["base"] * 8 + ["paraphrase_1"] * 8,
        ...     "score": [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 4, 4],
        ... })
        >>> result = paraphrase_sensitivity(variants, ci=CI("analytic"))
        >>> shown = result.summary[["statistic", "estimate", "passed"]]
        >>> print(shown.round(3).to_string(index=False))
         statistic  estimate passed
         min_kappa     0.955   True
        mean_kappa     0.955    NaN
    """
    ci = ci.shared()
    pairwise = pairwise_kappa(
        df,
        columns=columns,
        ci=ci,
        scale=scale,
        weights=weights,
        weight_basis=weight_basis,
    )
    kappas = pairwise["estimate"]
    defined = kappas.notna().all()
    worst = pairwise.iloc[int(np.nanargmin(kappas))] if kappas.notna().any() else pairwise.iloc[0]
    low, high = (np.nan, np.nan)
    if defined and ci.method != "analytic":
        low, high = min_kappa_interval(
            df, scale=scale, weights=weights, weight_basis=weight_basis, ci=ci, columns=columns
        )
    summary = pd.DataFrame(
        [
            result_row(
                statistic="min_kappa",
                estimate=float(kappas.min()) if defined else np.nan,
                ci_low=low,
                ci_high=high,
                n=int(pairwise["n"].min()),
                method=f"min over {len(pairwise)} variant pairs",
                ci_method="percentile of the bootstrapped minimum" if np.isfinite(low) else "none",
                threshold=threshold,
                passed=passes(float(kappas.min()), threshold, strict=True) if defined else None,
                note=f"weakest pair: {worst['rater_a']} vs {worst['rater_b']}"
                if defined
                else "undefined: a variant pair's kappa is undefined (see pairwise)",
            ),
            result_row(
                statistic="mean_kappa",
                estimate=float(kappas.mean()),
                n=int(pairwise["n"].min()),
                method=f"mean over {len(pairwise)} variant pairs",
                ci_method="none",
            ),
        ]
    )
    return ParaphraseSensitivity(
        pairwise=pairwise,
        matrix=kappa_matrix(pairwise),
        summary=order_columns(summary, ["statistic"]),
    )
