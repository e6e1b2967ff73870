"""Two-rater agreement: Cohen's kappa (weighted), exact / within-one agreement.

The confusion tables of two raters are in :mod:`judgekit.stats.confusion`.

Weights on an explicit ordered scale. A scale such as ``(0, 3, 5)`` is ordinal with uneven gaps,
so the distance between two levels can be read two ways:

* ``weight_basis="rank"`` (default): levels are equally spaced steps, distance ``|i - j|`` of
  their positions. This is what ``sklearn.metrics.cohen_kappa_score`` does (it weights by label
  index) and what the published riddles kappas used.
* ``weight_basis="value"``: distance ``|x - y|`` of the actual scores, so 0 vs 3 counts more
  than 3 vs 5.

Disagreement weights are ``d`` (linear) or ``d**2`` (quadratic), divided by their maximum;
kappa is ``1 - sum(v * O) / sum(v * E)`` with observed and chance-expected cell shares O, E
(Cohen 1968). Unweighted kappa uses ``v = 1`` off the diagonal.
"""

from __future__ import annotations

from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import CI, PatternStat, unit_ci
from judgekit.stats._intervals import normal_ci, share_interval
from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    FloatArray,
    IntArray,
    ScaleLike,
    level_codes,
    order_columns,
    paired_scores,
    result_row,
    two_rater_table,
)
from judgekit.types import UsageError

Weights = Literal["linear", "quadratic"] | None
WeightBasis = Literal["rank", "value"]


def disagreement_weights(
    levels: tuple[float, ...], weights: Weights = None, basis: WeightBasis = "rank"
) -> FloatArray:
    """Return the k x k disagreement weights (0 on the diagonal, maximum 1).

    Examples:
        >>> disagreement_weights((0.0, 3.0, 5.0), "linear")
        array([[0. , 0.5, 1. ],
               [0.5, 0. , 0.5],
               [1. , 0.5, 0. ]])
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if basis not in ("rank", "value"):
        raise ValueError(f"weight_basis must be 'rank' or 'value', got {basis!r}")
    pos = np.arange(len(levels), dtype=float) if basis == "rank" else np.asarray(levels, float)
    dist = np.abs(pos[:, None] - pos[None, :])
    if weights is None:
        dist = (dist > 0).astype(float)
    elif weights == "quadratic":
        dist = dist**2
    top = dist.max()
    return dist / top if top > 0 else dist


def kappa_stat(v: FloatArray) -> PatternStat:
    """Weighted kappa as a function of confusion-cell counts (rows: replicates, cols: k*k)."""
    k = v.shape[0]
    flat = v.ravel()

    def stat(cells: FloatArray) -> FloatArray:
        n = cells.sum(axis=1)
        table = cells.reshape(-1, k, k)
        rows, cols = table.sum(axis=2), table.sum(axis=1)
        observed = cells @ flat / n
        expected = np.einsum("bi,ij,bj->b", rows, v, cols) / n**2
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected > 0, 1.0 - observed / expected, np.nan)

    return stat


def kappa_se(table: FloatArray, v: FloatArray) -> float:
    """Large-sample (non-null) SE of weighted kappa, Fleiss, Cohen & Everitt (1969), eq. 13.

    With agreement weights ``w = 1 - v``, cell shares ``p``, margins ``r``, ``c``:
    ``var = [sum p_ij (w_ij - (wbar_i. + wbar_.j)(1 - k))^2 - (k - pe (1 - k))^2] / (n (1 - pe)^2)``
    where ``wbar_i. = sum_j c_j w_ij``, ``wbar_.j = sum_i r_i w_ij`` and ``pe = sum w r c``.
    """
    n = table.sum()
    w = 1.0 - v
    p = table / n
    r, c = p.sum(axis=1), p.sum(axis=0)
    po, pe = float(np.sum(w * p)), float(r @ w @ c)
    if pe >= 1.0:
        return np.nan
    kappa = (po - pe) / (1 - pe)
    wbar = (w @ c)[:, None] + (r @ w)[None, :]
    spread = np.sum(p * (w - wbar * (1 - kappa)) ** 2) - (kappa - pe * (1 - kappa)) ** 2
    return float(np.sqrt(max(spread, 0.0) / (n * (1 - pe) ** 2)))


def undefined_reason(a: FloatArray, b: FloatArray, names: tuple[str, str]) -> str:
    """Why a chance-corrected agreement of two score arrays is undefined (empty when it is not).

    With one rater constant, observed and chance agreement coincide, so kappa is 0 whatever the
    scores: it measures nothing and is reported as undefined.
    """
    if a.size == 0:
        return "undefined: no usable pairs"
    flat = [name for name, x in zip(names, (a, b), strict=True) if np.ptp(x) == 0]
    if len(flat) == 2:
        return "undefined: both raters constant"
    return f"undefined: rater {flat[0]} constant" if flat else ""


def kappa_from_pairs(
    a: FloatArray,
    b: FloatArray,
    levels: tuple[float, ...],
    *,
    weights: Weights = None,
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("analytic"),
    clusters: IntArray | None = None,
    names: tuple[str, str] = ("A", "B"),
) -> dict[str, object]:
    """Cohen's kappa of two aligned score arrays on ``levels``; returns one result row.

    ``clusters`` (0-based cluster index per pair) makes the bootstrap resample whole clusters
    (see :func:`~judgekit.stats._bootstrap.unit_ci`); it needs a bootstrap ``ci``.
    ``CI(None)`` asks for no interval (nor a standard error).

    Examples:
        >>> import numpy as np
        >>> judge, human = np.array([1.0, 2, 3, 3]), np.array([1.0, 2, 3, 2])
        >>> row = kappa_from_pairs(judge, human, (1.0, 2.0, 3.0))
        >>> round(row["estimate"], 3), row["method"]
        (0.636, 'cohen_kappa[unweighted]')
    """
    method = ci.offered((None, "analytic", "percentile", "bca"), "cohen_kappa").method
    if clusters is not None and method == "analytic":
        raise UsageError("a clustered kappa interval needs CI('percentile') or CI('bca')")
    name = "unweighted" if weights is None else f"{weights}-{weight_basis}"
    row = result_row(n=int(a.size), method=f"cohen_kappa[{name}]", ci_method=method or "none")
    reason = undefined_reason(a, b, names)
    if reason:
        row["note"] = reason
        return row
    k = len(levels)
    v = disagreement_weights(levels, weights, weight_basis)
    codes = level_codes(a, levels) * k + level_codes(b, levels)
    cells = np.bincount(codes, minlength=k * k)
    stat = kappa_stat(v)
    estimate = float(stat(cells[None].astype(float))[0])
    se = kappa_se(cells.reshape(k, k).astype(float), v)
    if method is None:
        interval: dict[str, object] = {}
    elif method == "analytic":
        # The normal interval can cross kappa's bounds; kappa never exceeds 1 (or falls below -1).
        bounds = normal_ci(estimate, se, ci.level)
        low, high = (float(np.clip(bound, -1.0, 1.0)) for bound in bounds)
        interval = {"ci_low": low, "ci_high": high, "se": se}
    else:
        interval = unit_ci(stat, codes, k * k, clusters, estimate=estimate, ci=ci)
        if clusters is None:
            interval["se"] = se
        else:
            interval["ci_method"] = f"{method}, cluster bootstrap"
    return result_row(**{**row, "estimate": estimate, **interval})


def cohen_kappa(
    df: pd.DataFrame,
    rater_a: object,
    rater_b: object,
    *,
    scale: ScaleLike = None,
    weights: Weights = None,
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("analytic"),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Cohen's (weighted) kappa between two raters of a long table, with a CI.

    ``kappa_w = 1 - sum(v_ij p_ij) / sum(v_ij p_i. p_.j)`` (Cohen 1968). Pairs are formed by
    joining the two raters on item first; a pair is then dropped when either side is not ``ok``,
    abstains or is missing (counted in ``n_dropped`` / ``dropped_reason``).

    ``se`` is the Fleiss, Cohen & Everitt (1969) large-sample SE (the cluster-bootstrap SE when
    ``columns.cluster`` is set). ``CI("analytic")`` gives ``kappa -/+ z se``; ``"percentile"``
    and ``"bca"`` resample items, or whole clusters when ``columns.cluster`` names a column
    (``n_boot`` replicates, explicit ``seed``; same seed, same interval). An undefined kappa
    (no pairs, a constant rater) is NaN with the reason in ``note``.

    Args:
        df: Long table with item, rater and score columns (status, cluster optional).
        rater_a: Value of the rater column for the first rater (rows of the confusion table).
        rater_b: Value of the rater column for the second rater.
        scale: Ordered levels (or a :class:`~judgekit.types.Scale`); default: observed values.
        weights: None (unweighted), "linear" or "quadratic".
        weight_basis: "rank" (equally spaced steps, sklearn's convention) or "value".
        ci: Interval (:class:`CI`): "analytic", "percentile" or "bca"; level, replicates, seed
            (``CI(None)``: none).
        columns: Column names, cluster and abstention values (:class:`Columns`).

    Returns:
        One row: rater_a, rater_b, estimate, se, ci_low, ci_high, n, method, ci_method,
        n_dropped, dropped_reason, note; clustered also n_clusters, naive_ci_low,
        naive_ci_high, design_effect.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> row = cohen_kappa(long, "judge", "human", weights="quadratic").iloc[0]
        >>> print(round(row["estimate"], 3), round(row["ci_low"], 3), round(row["ci_high"], 3))
        0.893 0.781 1.0
    """
    joined = paired_scores(df, rater_a, rater_b, scale, columns)
    pairs = joined.pairs
    row = kappa_from_pairs(
        pairs.a,
        pairs.b,
        joined.levels,
        weights=weights,
        weight_basis=weight_basis,
        ci=ci,
        clusters=joined.clusters,
        names=(str(rater_a), str(rater_b)),
    )
    return two_rater_table(row, rater_a, rater_b, pairs)


def pairwise_kappa(
    df: pd.DataFrame,
    raters: list[object] | None = None,
    *,
    columns: Columns = DEFAULT_COLUMNS,
    ci: CI = CI("analytic"),
    **kappa_options: object,
) -> pd.DataFrame:
    """Cohen's kappa for every pair of raters (or variants, runs: set ``columns.rater``).

    Bootstrap pairs draw in turn from one generator built from ``ci.seed``, so the table
    reproduces. Other keyword arguments go to :func:`cohen_kappa`. Returns one row per pair.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> import pandas as pd
        >>> three = pd.concat([long, long[long["rater"] == "human"].assign(rater="other")])
        >>> table = pairwise_kappa(three)[["rater_a", "rater_b", "estimate", "n"]]
        >>> print(table.round(3).to_string(index=False))
        rater_a rater_b  estimate  n
          judge   human     0.667 12
          judge   other     0.667 12
          human   other     1.000 12
    """
    names = list(pd.unique(df[columns.rater])) if raters is None else list(raters)
    ci = ci.shared()
    rows = [
        cohen_kappa(df, a, b, columns=columns, ci=ci, **kappa_options)  # type: ignore[arg-type]
        for a, b in combinations(names, 2)
    ]
    if not rows:
        raise ValueError(f"need at least two values of {columns.rater!r}, got {names}")
    return pd.concat(rows, ignore_index=True)


def kappa_matrix(pairwise: pd.DataFrame) -> pd.DataFrame:
    """Wide symmetric matrix of a :func:`pairwise_kappa` table (diagonal 1).

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> print(kappa_matrix(pairwise_kappa(long)).round(3))
               judge  human
        judge  1.000  0.667
        human  0.667  1.000
    """
    names = list(pd.unique(pd.concat([pairwise["rater_a"], pairwise["rater_b"]])))
    wide = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
    for a, b, value in pairwise[["rater_a", "rater_b", "estimate"]].itertuples(index=False):
        wide.loc[a, b] = wide.loc[b, a] = value
    return wide


def agreement_rates(
    df: pd.DataFrame,
    rater_a: object,
    rater_b: object,
    *,
    scale: ScaleLike = None,
    ci: CI = CI("analytic"),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Exact and within-one-step agreement, each a share with its interval.

    Within-one counts pairs at most one *scale step* apart (on ``(0, 3, 5)``, 0 vs 3 is within
    one, 0 vs 5 is not), so it depends on the scale passed, not on the raw score gap. The
    interval is :func:`~judgekit.stats.share_interval`'s: ``CI("analytic")`` is Wilson's, and
    with ``columns.cluster`` set Wilson's at the cluster-robust effective sample size;
    ``"percentile"`` and ``"bca"`` bootstrap items, or whole clusters.

    Returns:
        Two rows (``statistic`` = "exact", "within_one"): estimate, se, ci_low, ci_high, n,
        method, ci_method, n_dropped, dropped_reason, note (clustered: also the design effect).

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> rates = agreement_rates(long, "judge", "human", scale=(1, 2, 3, 4))
        >>> shown = rates[["statistic", "estimate", "ci_low", "ci_high", "ci_method"]]
        >>> print(shown.round(3).to_string(index=False))
         statistic  estimate  ci_low  ci_high ci_method
             exact      0.75   0.468    0.911    wilson
        within_one      1.00   0.758    1.000    wilson
    """
    joined = paired_scores(df, rater_a, rater_b, scale, columns)
    pairs, levels = joined.pairs, joined.levels
    steps = np.abs(level_codes(pairs.a, levels) - level_codes(pairs.b, levels))
    n = steps.size
    ci = ci.offered((None, "analytic", "percentile", "bca"), "agreement_rates").shared()
    rows = []
    for name, hits in (("exact", steps == 0), ("within_one", steps <= 1)):
        rows.append(
            result_row(
                statistic=name,
                rater_a=rater_a,
                rater_b=rater_b,
                **share_interval(hits, joined.clusters, ci),
                n=n,
                method=f"{name}_agreement",
                n_dropped=pairs.n_dropped,
                dropped_reason=pairs.dropped_reason,
                note="" if n else "undefined: no usable pairs",
            )
        )
    return order_columns(pd.DataFrame(rows), ["statistic", "rater_a", "rater_b"])
