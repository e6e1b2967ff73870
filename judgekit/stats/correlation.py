"""Pearson, Spearman and Kendall (tau-b) correlations between two raters, with intervals.

``CI("fisher")`` uses ``tanh(atanh(r) -/+ z * se)`` with ``se = 1 / sqrt(n - 3)`` for Pearson
(Fisher 1921) and the Fieller, Hartley & Pearson (1957, Biometrika 44, 470-481) approximations
``sqrt(1.06 / (n - 3))`` for Spearman and ``sqrt(0.437 / (n - 4))`` for Kendall; those two are
approximations made for continuous, untied data, so with heavily tied scale scores prefer
``CI("bca")`` or ``CI("percentile")``, which resample items (ties are re-ranked in every replicate).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse, stats

from judgekit.stats._bootstrap import CI, PatternStat, unique_patterns, unit_ci
from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    FloatArray,
    IntArray,
    paired_scores,
    result_row,
    two_rater_table,
)
from judgekit.types import UsageError

CorrMethod = Literal["pearson", "spearman", "kendall"]
_FISHER_VARIANCE = {"pearson": (1.0, 3), "spearman": (1.06, 3), "kendall": (0.437, 4)}
_MAX_KENDALL_PATTERNS = 3000


def _weighted_pearson(x: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    """Row-wise weighted Pearson r; x, y broadcast against weights of shape (B, P)."""
    total = w.sum(axis=1, keepdims=True)
    dx = x - (w * x).sum(axis=1, keepdims=True) / total
    dy = y - (w * y).sum(axis=1, keepdims=True) / total
    num = (w * dx * dy).sum(axis=1)
    den = np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _midranks(codes: IntArray, weights: FloatArray) -> FloatArray:
    """Per replicate, the mid-rank of every pattern's value (ties share the average rank)."""
    levels = int(codes.max()) + 1
    onehot = sparse.csr_matrix(
        (np.ones(codes.size), (np.arange(codes.size), codes)), shape=(codes.size, levels)
    )
    counts = np.asarray((onehot.T @ weights.T).T)
    mid = np.cumsum(counts, axis=1) - (counts - 1) / 2
    result: FloatArray = mid[:, codes]
    return result


def correlation_stat(x: FloatArray, y: FloatArray, method: CorrMethod) -> PatternStat:
    """A correlation as a function of weights over distinct (x, y) patterns."""
    x_codes = np.unique(x, return_inverse=True)[1].ravel()
    y_codes = np.unique(y, return_inverse=True)[1].ravel()
    if method == "pearson":
        return lambda w: _weighted_pearson(x[None, :], y[None, :], w)
    if method == "spearman":
        return lambda w: _weighted_pearson(_midranks(x_codes, w), _midranks(y_codes, w), w)
    if x.size > _MAX_KENDALL_PATTERNS:
        raise ValueError(
            f"Kendall bootstrap supports at most {_MAX_KENDALL_PATTERNS} distinct pairs "
            f"(got {x.size}); use ci='fisher'"
        )
    signs = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])

    def tau_b(w: FloatArray) -> FloatArray:
        n = w.sum(axis=1)
        concord = np.einsum("bp,pq,bq->b", w, signs, w) / 2
        ties = []
        for codes in (x_codes, y_codes):
            per_level = np.stack([np.bincount(codes, weights=row) for row in w])
            ties.append((per_level * (per_level - 1)).sum(axis=1) / 2)
        pairs = n * (n - 1) / 2
        den = np.sqrt((pairs - ties[0]) * (pairs - ties[1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, concord / den, np.nan)

    return tau_b


def _fisher(estimate: float, n: int, method: CorrMethod, level: float) -> dict[str, object]:
    """Fisher-z interval (module notes); empty when too few pairs or no estimate."""
    factor, offset = _FISHER_VARIANCE[method]
    if n <= offset or not np.isfinite(estimate):
        return {}
    se_z = np.sqrt(factor / (n - offset))
    z = float(stats.norm.ppf(0.5 + level / 2))
    centre = np.arctanh(np.clip(estimate, -0.999999, 0.999999))
    return {
        "ci_low": float(np.tanh(centre - z * se_z)),
        "ci_high": float(np.tanh(centre + z * se_z)),
        "se": float(se_z * (1 - estimate**2)),
    }


def correlation_from_pairs(
    a: FloatArray,
    b: FloatArray,
    *,
    method: CorrMethod = "pearson",
    ci: CI = CI("fisher"),
    clusters: IntArray | None = None,
    names: tuple[str, str] = ("A", "B"),
) -> dict[str, object]:
    """Correlation of two aligned arrays with its interval and scipy's p-value; one result row.

    ``clusters`` (0-based cluster per pair) makes the bootstrap resample whole clusters; it
    needs ``CI("percentile")`` or ``CI("bca")`` (scipy's p-value still assumes independent pairs).

    Examples:
        >>> import numpy as np
        >>> row = correlation_from_pairs(np.array([1.0, 2, 3, 4, 5]), np.array([1.0, 3, 2, 4, 5]))
        >>> round(row["estimate"], 3), row["method"]
        (0.9, 'pearson')
    """
    if method not in _FISHER_VARIANCE:
        raise ValueError(f"method must be pearson, spearman or kendall, got {method!r}")
    ci_method = str(ci.offered(("fisher", "percentile", "bca"), "correlation").method)
    if clusters is not None and ci_method == "fisher":
        raise UsageError("a clustered correlation interval needs CI('percentile') or CI('bca')")
    n = a.size
    test = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    flat = [name for name, x in zip(names, (a, b), strict=True) if n and np.ptp(x) == 0]
    note = "undefined: fewer than 3 pairs" if n < 3 else ""
    if flat and not note:
        note = f"undefined: rater {' and '.join(flat)} constant"
    estimate = p_value = np.nan
    if not note:
        res = test[method](a, b)
        estimate, p_value = float(res.statistic), float(res.pvalue)
    interval: dict[str, object] = {}
    if ci_method == "fisher":
        interval = _fisher(estimate, n, method, ci.level)
    elif not note:
        patterns, _, pattern_of_pair = unique_patterns(np.column_stack([a, b]))
        stat = correlation_stat(patterns[:, 0], patterns[:, 1], method)
        interval = unit_ci(stat, pattern_of_pair, len(patterns), clusters, estimate=estimate, ci=ci)
    clustered = ", cluster bootstrap" if clusters is not None else ""
    return result_row(
        estimate=estimate,
        n=n,
        method=method,
        ci_method=ci_method + clustered,
        p_value=p_value,
        note=note,
        **interval,
    )


def correlation(
    df: pd.DataFrame,
    rater_a: object,
    rater_b: object,
    *,
    method: CorrMethod = "pearson",
    ci: CI = CI("fisher"),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Correlation between two raters' scores, paired on item before unusable rows are dropped.

    Args:
        df: Long table with item, rater and score columns (status, cluster optional).
        rater_a: First rater.
        rater_b: Second rater.
        method: "pearson", "spearman" or "kendall" (tau-b).
        ci: Interval (:class:`CI`): "fisher" (see module notes), "percentile" or "bca" (items,
            or clusters when ``columns.cluster`` is set, resampled); level, replicates, seed.
        columns: Column names, abstention values and the cluster column.

    Returns:
        One row: rater_a, rater_b, estimate, se, ci_low, ci_high, n, method, ci_method,
        n_dropped, dropped_reason, note, p_value (scipy's test of zero correlation).

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> row = correlation(long, "judge", "human", method="spearman").iloc[0]
        >>> print(round(row["estimate"], 3), round(row["ci_low"], 3), round(row["ci_high"], 3))
        0.905 0.679 0.974
    """
    joined = paired_scores(df, rater_a, rater_b, None, columns)
    pairs = joined.pairs
    row = correlation_from_pairs(
        pairs.a,
        pairs.b,
        method=method,
        ci=ci,
        clusters=joined.clusters,
        names=(str(rater_a), str(rater_b)),
    )
    return two_rater_table(row, rater_a, rater_b, pairs)
