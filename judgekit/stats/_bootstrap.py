"""Seeded bootstrap over item patterns, confidence intervals, and interval helpers.

Every agreement statistic here depends on the data only through how many items show each
distinct *pattern* (a confusion-matrix cell for two raters; a row of per-category counts for
many raters). Resampling n items with replacement is therefore the same as drawing the pattern
counts from ``Multinomial(n, counts / n)``: one draw per replicate, whatever n is, so a 2,000
replicate bootstrap of 100,000 pairs costs 2,000 small multinomial draws and one matrix product.
The statistic is written once as a function of a ``(replicates, patterns)`` weight matrix.

References:
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185 (BCa).
    Efron, B., & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 14.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from judgekit.stats._prep import FloatArray, IntArray

SeedLike = int | np.random.Generator
CIMethod = Literal["analytic", "percentile", "bca"]
#: A statistic of pattern weights: ``(replicates, patterns)`` counts -> one value per replicate.
PatternStat = Callable[[FloatArray], FloatArray]

_CELLS_PER_CHUNK = 20_000_000


def as_generator(seed: SeedLike | None) -> np.random.Generator:
    """Return a generator for an explicit seed; global random state is never used.

    Raises:
        ValueError: when no seed is given.
        TypeError: for anything but an int or a ``numpy.random.Generator``.
    """
    if seed is None:
        raise ValueError("a bootstrap needs an explicit seed (int or numpy.random.Generator)")
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    raise TypeError(f"seed must be an int or numpy.random.Generator, got {type(seed).__name__}")


def _chunked(
    stat: PatternStat, weights: Callable[[int, int], FloatArray], rows: int, width: int
) -> FloatArray:
    step = max(1, _CELLS_PER_CHUNK // max(width, 1))
    parts = [stat(weights(lo, min(lo + step, rows))) for lo in range(0, rows, step)]
    return np.concatenate(parts) if parts else np.empty(0)


def bootstrap_distribution(
    stat: PatternStat, counts: IntArray, n_boot: int, rng: np.random.Generator
) -> FloatArray:
    """Return ``n_boot`` replicates of ``stat`` with items resampled via pattern counts."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    n = int(counts.sum())
    draws = rng.multinomial(n, counts / n, size=n_boot).astype(float)
    result: FloatArray = _chunked(stat, lambda lo, hi: draws[lo:hi], n_boot, counts.size)
    return result


def jackknife(stat: PatternStat, counts: IntArray) -> tuple[FloatArray, FloatArray]:
    """Leave-one-item-out values, one per non-empty pattern, with the pattern counts as weights."""
    present = np.flatnonzero(counts > 0)
    base = counts.astype(float)

    def rows(lo: int, hi: int) -> FloatArray:
        block = np.tile(base, (hi - lo, 1))
        block[np.arange(hi - lo), present[lo:hi]] -= 1.0
        return block

    values: FloatArray = _chunked(stat, rows, present.size, counts.size)
    return values, counts[present].astype(float)


def interval(
    estimate: float,
    boot: FloatArray,
    *,
    level: float,
    method: Literal["percentile", "bca"],
    jack: tuple[FloatArray, FloatArray] | None = None,
) -> tuple[float, float]:
    """Percentile or BCa interval from bootstrap replicates (non-finite replicates ignored).

    BCa: bias ``z0 = Phi^-1(P(theta* < theta) + P(theta* = theta) / 2)``, acceleration
    ``a = sum w d^3 / (6 (sum w d^2)^1.5)`` with ``d`` the weighted jackknife deviations, and the
    interval's quantiles ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = Phi^-1(alpha/2)``
    and ``Phi^-1(1 - alpha/2)`` (Efron 1987).
    """
    finite = boot[np.isfinite(boot)]
    if not np.isfinite(estimate) or finite.size < max(2, boot.size // 2):
        return np.nan, np.nan
    alpha = 1.0 - level
    probs = np.array([alpha / 2, 1 - alpha / 2])
    if method == "bca":
        if jack is None:
            raise ValueError("BCa needs jackknife values")
        below = np.mean(finite < estimate) + 0.5 * np.mean(finite == estimate)
        z0 = stats.norm.ppf(np.clip(below, 1e-12, 1 - 1e-12))
        values, weights = jack
        ok = np.isfinite(values)
        values, weights = values[ok], weights[ok]
        dev = np.average(values, weights=weights) - values
        spread = float(np.sum(weights * dev**2))
        accel = float(np.sum(weights * dev**3)) / (6 * spread**1.5) if spread > 0 else 0.0
        z = stats.norm.ppf(probs)
        probs = stats.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(finite, probs)
    return float(low), float(high)


def pattern_ci(
    stat: PatternStat,
    counts: IntArray,
    *,
    estimate: float,
    n_boot: int,
    seed: SeedLike | None,
    level: float,
    method: Literal["percentile", "bca"],
) -> tuple[float, float, float]:
    """Bootstrap ``stat`` over items and return ``(ci_low, ci_high, bootstrap_se)``."""
    rng = as_generator(seed)
    boot = bootstrap_distribution(stat, counts, n_boot, rng)
    jack = jackknife(stat, counts) if method == "bca" else None
    low, high = interval(estimate, boot, level=level, method=method, jack=jack)
    finite = boot[np.isfinite(boot)]
    se = float(np.std(finite, ddof=1)) if finite.size > 1 else np.nan
    return low, high, se


def normal_ci(estimate: float, se: float, level: float) -> tuple[float, float]:
    """Return ``estimate -/+ z_{1-alpha/2} * se``."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    return float(estimate - z * se), float(estimate + z * se)


def wilson_ci(successes: float, n: float, level: float) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998, method 3)."""
    if n <= 0:
        return np.nan, np.nan
    z = stats.norm.ppf(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def t_ci(values: FloatArray, level: float) -> tuple[float, float, float]:
    """Mean, and Student-t interval of the mean: ``(se, ci_low, ci_high)``."""
    n = values.size
    if n < 2:
        return np.nan, np.nan, np.nan
    se = float(np.std(values, ddof=1) / np.sqrt(n))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * se
    mean = float(np.mean(values))
    return se, mean - half, mean + half


def unique_patterns(rows: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], IntArray, IntArray]:
    """Return distinct rows, how many times each occurs, and each input row's pattern index.

    Rows are encoded as one integer (mixed radix over each column's distinct values) so that a
    1-D ``np.unique`` does the work; a row-wise ``np.unique(axis=0)`` is the fallback when the
    code would overflow.
    """
    key = np.zeros(len(rows), dtype=np.int64)
    radix = 1
    for column in rows.T:
        _, codes = np.unique(column, return_inverse=True)
        width = int(codes.max()) + 1 if codes.size else 1
        if radix * width >= 2**62:
            patterns, inverse, counts = np.unique(
                rows, axis=0, return_inverse=True, return_counts=True
            )
            return patterns, counts, inverse.ravel()
        key += codes.ravel().astype(np.int64) * radix
        radix *= width
    _, first, inverse, counts = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    return rows[first], counts, inverse.ravel()
