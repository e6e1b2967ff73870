"""Is the jury worth it? Jury against the best single judge, and every cheaper panel.

:func:`jury_vs_best` compares each jury's agreement with the human to the best single judge's,
paired on the same items. "Best" is picked by looking at the same data, which flatters it: the
maximum of k noisy kappas is biased upwards and its sampling variation is larger than any one
judge's. So the bootstrap picks the best judge *again inside every resample*
(``diff*_b = kappa*_jury,b - max_j kappa*_j,b``), the interval a winner chosen after looking
deserves; the naive interval, with the judge chosen once on the full data, is shown beside it.
Resampling draws whole clusters when ``columns.cluster`` is set (one-stage cluster bootstrap,
Davison & Hinkley 1997, 3.8; on selection and the bootstrap of a maximum: Efron & Tibshirani
1993, ch. 7 and 17; Hall & Miller 2010, "Bootstrap confidence intervals and hypothesis tests
for extrema of parameters", Biometrika 97(4)).

:func:`panel_subsets` scores every non-empty subset of the panel (a single judge, every pair,
...) with the same jury rule, its agreement with the human and its cost, and marks the Pareto
front: the subsets no other subset beats on both cost and agreement (the PoLL question of
Verga et al. 2024: is a cheap panel as good as the strongest judge?).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import CI, as_generator, interval, unit_weights
from judgekit.stats._panel import panel_scores, require_judges
from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    ScaleLike,
    level_codes,
    order_columns,
    result_row,
)
from judgekit.stats.agreement import WeightBasis, Weights, disagreement_weights, kappa_stat
from judgekit.stats.jury import jury_name, jury_scores, with_juries
from judgekit.stats.panel import versus_human


def jury_vs_best(
    df: pd.DataFrame,
    judges: Sequence[object],
    juries: Sequence[object],
    *,
    human: object,
    scale: ScaleLike = None,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("percentile", n_boot=2000, seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Paired difference in kappa with the human: each jury minus the best single judge.

    ``estimate = kappa(jury, human) - max_j kappa(judge_j, human)`` on the items the human,
    every judge and the jury all scored (weighted kappa as :func:`~.agreement.cohen_kappa`).
    ``ci_low``/``ci_high``: percentile bootstrap of ``kappa*_jury - max_j kappa*_j`` with the
    maximum taken in each resample (selection-aware); ``naive_ci_low``/``naive_ci_high`` keep
    the judge chosen on the full data. ``best_judge_share`` says how often each judge won a
    resample, ``share_jury_ahead`` the share of resamples where the jury beat the best judge.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> truth = rng.integers(0, 3, 60)
        >>> def noisy() -> np.ndarray:
        ...     return np.where(rng.random(60) < 0.3, rng.integers(0, 3, 60), truth)
        >>> noisy = {r: noisy() for r in "abc"}
        >>> rows = [(i, "h", t) for i, t in enumerate(truth)]
        >>> rows += [(i, r, s[i]) for r, s in noisy.items() for i in range(60)]
        >>> long = pd.DataFrame(rows, columns=["item", "rater", "score"])
        >>> long = with_juries(long, jury_scores(long, list("abc"), methods=["majority"]))
        >>> table = jury_vs_best(long, list("abc"), ["jury:majority"], human="h",
        ...                      ci=CI("percentile", n_boot=200, seed=1))
        >>> bool(table["ci_high"].iloc[0] - table["ci_low"].iloc[0] > 0)
        True
    """
    names = require_judges(judges, 2, "jury versus the best judge")
    boot = ci.offered(("percentile",), "jury_vs_best")
    rng = as_generator(boot.seed)
    rows = []
    for jury in juries:
        panel = panel_scores(df, [human, *names, jury], scale=scale, columns=columns)
        raters = [*names, jury]
        complete = panel.complete([human, *raters])
        kept = panel.scores[complete]
        if kept.empty:
            reason = "undefined: no item scored by the human, every judge and the jury"
            rows.append(result_row(jury=jury, n=0, note=reason, method="kappa difference"))
            continue
        k = len(panel.levels)
        stat = kappa_stat(disagreement_weights(panel.levels, weights, weight_basis))
        reference = level_codes(kept[human].to_numpy(float), panel.levels) * k
        cells = np.stack(
            [
                np.eye(k * k)[reference + level_codes(kept[r].to_numpy(float), panel.levels)]
                for r in raters
            ]
        )  # fmt: skip  (raters, items, cells)
        clusters = panel.cluster_codes(list(kept.index))
        draws = unit_weights(len(kept), clusters, boot.n_boot, rng)
        full = np.array([stat(cell.sum(axis=0)[None])[0] for cell in cells])
        replicated = np.stack([stat(draws @ cell) for cell in cells], axis=1)  # (boot, raters)
        # As cohen_kappa: with a constant rater (or human) kappa measures nothing: undefined.
        flat = np.array([np.ptp(kept[r].to_numpy(float)) == 0 for r in raters])
        flat |= np.ptp(kept[human].to_numpy(float)) == 0
        full[flat], replicated[:, flat] = np.nan, np.nan
        if np.isnan(full[:-1]).all():
            reason = "undefined: no judge's kappa is defined on the shared items"
            rows.append(result_row(jury=jury, n=len(kept), note=reason, method="kappa difference"))
            continue
        best = int(np.nanargmax(full[:-1]))
        with np.errstate(invalid="ignore"):
            chosen = np.nanargmax(
                np.where(np.isnan(replicated[:, :-1]), -np.inf, replicated[:, :-1]), axis=1
            )
        aware = replicated[:, -1] - replicated[np.arange(len(draws)), chosen]
        naive = replicated[:, -1] - replicated[:, best]
        estimate = float(full[-1] - full[best])
        low, high = interval(estimate, aware, level=boot.level, method="percentile")
        naive_low, naive_high = interval(estimate, naive, level=boot.level, method="percentile")
        wins = pd.Series(np.asarray(names, dtype=object)[chosen]).value_counts(normalize=True)
        share = "; ".join(f"{judge}: {wins.get(judge, 0.0):.2f}" for judge in names)
        n_dropped = int((~complete).sum())
        extra: dict[str, object] = {}
        if clusters is not None:
            extra["n_clusters"] = int(clusters.max()) + 1
        rows.append(
            result_row(
                jury=jury, best_judge=names[best], jury_estimate=float(full[-1]),
                best_judge_estimate=float(full[best]), estimate=estimate, ci_low=low,
                ci_high=high, se=float(np.nanstd(aware, ddof=1)), n=len(kept),
                method=f"kappa(jury) - max kappa(judge) [{weights or 'unweighted'}-{weight_basis}]",
                ci_method="percentile" + (", cluster bootstrap" if clusters is not None else "")
                + ", best judge re-chosen in each resample",
                naive_ci_low=naive_low, naive_ci_high=naive_high, best_judge_share=share,
                share_jury_ahead=float(np.mean(aware > 0)), n_dropped=n_dropped,
                dropped_reason=f"items some rater did not score: {n_dropped}" if n_dropped else "",
                **extra,
            )
        )  # fmt: skip
    return order_columns(pd.DataFrame(rows), ["jury", "best_judge"])


def pareto_front(cost: pd.Series, value: pd.Series) -> pd.Series:
    """Whether each row is on the Pareto front (no cheaper-or-equal row scores at least as much).

    "Beaten" needs one of the two strictly better; a NaN score is never on the front.

    Example:
        >>> list(pareto_front(pd.Series([1, 2, 2, 3]), pd.Series([0.5, 0.7, 0.6, 0.7])))
        [True, True, False, False]
    """
    c, v = cost.to_numpy(float), value.to_numpy(float)
    front = []
    for i in range(len(c)):
        beaten = (c <= c[i]) & (v >= v[i]) & ((c < c[i]) | (v > v[i]))
        front.append(bool(np.isfinite(v[i]) and not beaten[np.isfinite(v)].any()))
    return pd.Series(front, index=cost.index)


def panel_subsets(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    human: object,
    cost: Mapping[object, float] | None = None,
    jury: str = "mean",
    min_coverage: float = 0.95,
    scale: ScaleLike = None,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("percentile", n_boot=2000, seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Every non-empty subset of the panel: its jury's kappa with the human, cost, Pareto front.

    A subset of one is that judge; larger ones are combined by ``jury`` ("mean", "median" or
    "majority", :func:`~.jury.jury_scores`). ``cost`` is each judge's cost per item (any unit;
    default 1 per judge, so the cost is the number of judges asked); a subset costs the sum.
    ``coverage`` is the share of the human-labelled items the subset's jury scored (no majority
    or a missing judge leaves an item unscored, and the kappa is over the scored ones). A jury that
    scores only the items its judges agree on looks better than it is, so only subsets with
    ``coverage >= min_coverage`` compete for the front; the others say so in ``note``.

    Returns:
        One row per subset (``subset`` = judges joined by " + ", ``size``, ``cost``,
        ``coverage``, ``pareto``) with the kappa's standard result columns.

    Example:
        >>> long = pd.DataFrame({"item": np.repeat(range(4), 3), "rater": ["h", "a", "b"] * 4,
        ...                      "score": [0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1]})
        >>> table = panel_subsets(long, ["a", "b"], human="h", weights=None, ci=CI(None),
        ...                       jury="majority")  # two judges who disagree have no majority
        >>> list(table["subset"]), list(table["coverage"])
        (['a', 'b', 'a + b'], [1.0, 1.0, 0.5])
    """
    names = require_judges(judges, 1, "panel subsets")
    prices = {judge: 1.0 for judge in names} if cost is None else dict(cost)
    missing = [judge for judge in names if judge not in prices]
    if missing:
        raise ValueError(f"no cost given for judge(s) {missing}")
    labelled = panel_scores(df, [human], scale=scale, columns=columns).scores[human].notna().sum()
    ci = ci.shared()
    rows = []
    for size in range(1, len(names) + 1):
        for subset in combinations(names, size):
            rated = df
            rater: object = subset[0]
            if size > 1:
                combined = jury_scores(
                    df, list(subset), methods=[jury], scale=scale, columns=columns
                )
                rater = f"{jury_name(jury)}[{' + '.join(map(str, subset))}]"
                renamed = combined.assign(**{columns.rater: rater})
                rated = with_juries(df, renamed, columns=columns)
            row = versus_human(
                rated, [rater], human=human, scale=scale, weights=weights,
                weight_basis=weight_basis, ci=ci, columns=columns,
            )  # fmt: skip
            rows.append(
                row.assign(
                    subset=" + ".join(map(str, subset)),
                    size=size,
                    cost=float(sum(prices[j] for j in subset)),
                    coverage=float(row["n"].iloc[0]) / labelled if labelled else np.nan,
                    jury=jury if size > 1 else "single judge",
                )
            )
    table = pd.concat(rows, ignore_index=True)
    covered = table["coverage"] >= min_coverage
    table["pareto"] = pareto_front(table["cost"], table["estimate"].where(covered))
    low = f"coverage below {min_coverage:g}: not compared for the Pareto front"
    table.loc[~covered, "note"] = [
        "; ".join(t for t in (str(note), low) if t) for note in table.loc[~covered, "note"]
    ]
    return order_columns(table, ["subset", "size", "cost", "coverage", "pareto", "jury"])
