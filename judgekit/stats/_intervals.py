"""Closed-form intervals (normal, Wilson, Student-t) and the one interval of a share.

A share (agreement rate, flip rate, hallucination rate) gets its interval from
:func:`share_interval` alone, whatever asks for it: Wilson's, cluster-robust when items
cluster, or a bootstrap of items or clusters (:mod:`judgekit.stats._bootstrap`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from judgekit.stats._bootstrap import CI, unit_ci
from judgekit.stats._prep import FloatArray, IntArray
from judgekit.stats.regression import clustered_ols


def normal_ci(estimate: float, se: float, level: float) -> tuple[float, float]:
    """Return ``estimate -/+ z_{1-alpha/2} * se``."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    return float(estimate - z * se), float(estimate + z * se)


def wilson_ci(successes: float, n: float, level: float) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998, method 3).

    Examples:
        >>> low, high = wilson_ci(8, 10, 0.95)
        >>> print(round(low, 3), round(high, 3))
        0.49 0.943
    """
    if n <= 0:
        return np.nan, np.nan
    z = stats.norm.ppf(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def share_stat(weights: FloatArray) -> FloatArray:
    """Share of pattern 1 ("hit") among two patterns (miss, hit)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = weights[:, 1] / weights.sum(axis=1)
    return result


def share_interval(
    hits: npt.NDArray[np.bool_], clusters: IntArray | None, ci: CI
) -> dict[str, object]:
    """A share of ``hits`` with the interval ``ci`` asks for: the one rule for every share.

    * ``None``: no interval.
    * ``"analytic"``: Wilson's score interval (Wilson 1927). With ``clusters`` it is Wilson's
      interval at the effective sample size ``n / deff`` (Korn & Graubard 1998), ``deff`` the
      cluster-robust variance of the share (:func:`~judgekit.stats.clustered_ols`, intercept
      only) over the binomial one, never below 1: the cluster-robust analytic interval.
    * ``"percentile"`` / ``"bca"``: a bootstrap of items, or of whole clusters.

    Reference: Korn, E. L., & Graubard, B. I. (1998). Confidence intervals for proportions
    with small expected number of positive counts estimated from survey data. Survey
    Methodology 24(2), 193-201.

    Returns:
        ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``ci_method``; clustered also
        ``n_clusters``, ``naive_ci_low``, ``naive_ci_high``, ``design_effect`` (clustered
        width over the independent-items width).

    Examples:
        >>> import numpy as np
        >>> hits = np.array([True] * 16 + [False] * 4)
        >>> row = share_interval(hits, None, CI("analytic"))
        >>> round(row["estimate"], 2), round(row["ci_low"], 3), round(row["ci_high"], 3)
        (0.8, 0.584, 0.919)
        >>> clustered = share_interval(hits, np.repeat(np.arange(10), 2), CI("analytic"))
        >>> clustered["ci_method"], round(clustered["design_effect"], 2)
        ('wilson, cluster-robust effective n', 1.41)
    """
    n = int(hits.size)
    share = float(hits.mean()) if n else np.nan
    if ci.method is None or not n:
        return {"estimate": share, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                "ci_method": "none"}  # fmt: skip
    binomial_se = float(np.sqrt(share * (1 - share) / n))
    low, high = wilson_ci(float(hits.sum()), n, ci.level)
    naive = {"estimate": share, "se": binomial_se, "ci_low": low, "ci_high": high}
    if ci.method != "analytic":
        boot = unit_ci(share_stat, hits.astype(np.int64), 2, clusters, estimate=share, ci=ci)
        where = "items" if clusters is None else "cluster"
        return {"estimate": share, **boot, "ci_method": f"{ci.method}, {where} bootstrap"}
    if clusters is None:
        return {**naive, "ci_method": "wilson"}
    robust = clustered_ols(hits.astype(float), pd.DataFrame(index=range(n)), clusters)
    se = float(robust["se"].iloc[0])
    deff = max(1.0, se**2 / binomial_se**2) if binomial_se > 0 and np.isfinite(se) else 1.0
    n_eff = n / deff
    low_c, high_c = wilson_ci(share * n_eff, n_eff, ci.level) if np.isfinite(se) else (np.nan,) * 2
    width = high - low
    return {
        "estimate": share,
        "se": se,
        "ci_low": low_c,
        "ci_high": high_c,
        "ci_method": "wilson, cluster-robust effective n",
        "n_clusters": int(np.unique(clusters).size),
        "naive_ci_low": low,
        "naive_ci_high": high,
        "design_effect": (high_c - low_c) / width if width > 0 else np.nan,
    }


def t_ci(values: FloatArray, level: float) -> tuple[float, float, float]:
    """Mean, and Student-t interval of the mean: ``(se, ci_low, ci_high)``.

    Examples:
        >>> import numpy as np
        >>> se, low, high = t_ci(np.array([2.0, 3.0, 4.0, 5.0]), 0.95)
        >>> print(round(se, 3), round(low, 3), round(high, 3))
        0.645 1.446 5.554
    """
    n = values.size
    if n < 2:
        return np.nan, np.nan, np.nan
    se = float(np.std(values, ddof=1) / np.sqrt(n))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * se
    mean = float(np.mean(values))
    return se, mean - half, mean + half
