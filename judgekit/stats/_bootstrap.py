"""Seeded bootstrap over item patterns, and the ``CI`` spec every interval is asked with.

The closed-form intervals (normal, Wilson, Student-t) and the one rule for a share's interval
are in :mod:`judgekit.stats._intervals`.

Every agreement statistic here depends on the data only through how many items show each
distinct *pattern* (a confusion-matrix cell for two raters; a row of per-category counts for
many raters). Resampling n items with replacement is therefore the same as drawing the pattern
counts from ``Multinomial(n, counts / n)``: one draw per replicate, whatever n is, so a 2,000
replicate bootstrap of 100,000 pairs costs 2,000 small multinomial draws and one matrix product.
The statistic is written once as a function of a ``(replicates, patterns)`` weight matrix.

With clusters (items that share a question, say) the resampling unit is the cluster, not the
item: a one-stage cluster bootstrap draws G clusters with replacement and keeps every item of a
drawn cluster. Each cluster contributes a fixed row of pattern counts, so a replicate's pattern
weights are ``(times each cluster was drawn) @ (cluster rows)``: the draws are G integer indices
per replicate, counted with one ``bincount`` and multiplied by the cluster table. One stage is
chosen over two (re-drawing items inside each drawn cluster): with many clusters the one-stage
variance is nearly unbiased, while the two-stage one counts the within-cluster variance twice
(Davison & Hinkley 1997, section 3.8; Field & Welsh 2007).

References:
    Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their Application, 3.8.
    Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3), 369-390.
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185 (BCa).
    Efron, B., & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 14.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
from scipy import stats

from judgekit.stats._prep import FloatArray, IntArray

SeedLike = int | np.random.Generator
CIMethod = Literal["analytic", "fisher", "percentile", "bca"]
BootMethod = Literal["percentile", "bca"]
#: A statistic of pattern weights: ``(replicates, patterns)`` counts -> one value per replicate.
PatternStat = Callable[[FloatArray], FloatArray]

_CELLS_PER_CHUNK = 20_000_000


@dataclass(frozen=True)
class CI:
    """How a statistic's confidence interval is computed; one object serves a whole analysis.

    Each statistic takes it as ``ci=`` and says which methods it offers. Like scipy's
    ``BootstrapMethod``, the resampling settings travel with the method instead of as keywords.

    Attributes:
        method: "analytic" (closed-form SE), "fisher" (a correlation's z transform),
            "percentile" or "bca" (bootstrap: items, or whole clusters, resampled), or None
            (no interval).
        level: Confidence level, in (0, 1).
        n_boot: Bootstrap replicates.
        seed: Seed or generator; a bootstrap needs one (same seed, same interval).

    Examples:
        >>> CI("bca", n_boot=500, seed=1)
        CI(method='bca', level=0.95, n_boot=500, seed=1)
        >>> CI("analytic").offered(("analytic", "bca"), "cohen_kappa").method
        'analytic'
    """

    method: CIMethod | None = "analytic"
    _: KW_ONLY
    level: float = 0.95
    n_boot: int = 2000
    seed: SeedLike | None = None

    def __post_init__(self) -> None:
        if self.method is not None and self.method not in get_args(CIMethod):
            names = ", ".join(repr(m) for m in get_args(CIMethod))
            raise ValueError(f"CI method must be {names} or None, got {self.method!r}")
        if not 0 < self.level < 1:
            raise ValueError(f"CI level must be between 0 and 1, got {self.level!r}")
        if self.n_boot < 1:
            raise ValueError(f"CI n_boot must be positive, got {self.n_boot!r}")

    def offered(self, methods: tuple[CIMethod | None, ...], statistic: str) -> CI:
        """Return self when ``statistic`` offers this method; else a one-line ValueError."""
        if self.method not in methods:
            names = ", ".join(repr(m) for m in methods)
            raise ValueError(f"{statistic} offers CI methods {names}; got {self.method!r}")
        return self

    def shared(self) -> CI:
        """The same settings drawing from one generator, so a family of intervals reproduces."""
        return self if self.seed is None else replace(self, seed=as_generator(self.seed))


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


@dataclass(frozen=True)
class ClusterTable:
    """Pattern counts per cluster, with identical cluster rows stored once.

    Attributes:
        rows: Distinct per-cluster pattern-count rows, shape ``(distinct, patterns)``.
        of_cluster: For each cluster (sorted label order), the index of its row.
    """

    rows: FloatArray
    of_cluster: IntArray

    @property
    def n_clusters(self) -> int:
        """Number of clusters G."""
        return int(self.of_cluster.size)


def cluster_table(
    pattern_of_unit: IntArray, cluster_of_unit: IntArray, n_patterns: int
) -> ClusterTable:
    """Aggregate units (items) into per-cluster pattern counts."""
    n_clusters = int(cluster_of_unit.max()) + 1 if cluster_of_unit.size else 0
    flat = cluster_of_unit * n_patterns + pattern_of_unit
    per_cluster = np.bincount(flat, minlength=n_clusters * n_patterns).reshape(
        n_clusters, n_patterns
    )
    rows, _, of_cluster = unique_patterns(per_cluster)
    return ClusterTable(rows=rows.astype(float), of_cluster=of_cluster.astype(np.int64))


def cluster_weights(table: ClusterTable, n_boot: int, rng: np.random.Generator) -> FloatArray:
    """``(n_boot, patterns)`` pattern weights, each replicate drawing G clusters with replacement.

    Replicate ``b`` uses the ``b``-th block of ``rng.integers(0, G, size=G)`` draws, so a loop
    drawing G cluster indices per replicate from the same generator reproduces it exactly.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    g = table.n_clusters
    # Mostly distinct cluster rows: count draws per cluster directly, skipping the row lookup.
    direct = 2 * len(table.rows) > g
    rows = table.rows[table.of_cluster] if direct else table.rows
    # Counts are integers: float32 sums stay exact while no weight can reach 2**24, and are faster.
    exact = g * float(rows.sum(axis=1).max(initial=0.0)) < 2**24
    counted_rows = rows.astype(np.float32 if exact else float)
    width = len(rows)
    step = max(1, _CELLS_PER_CHUNK // 4 // max(g, width, 1))
    parts = []
    for lo in range(0, n_boot, step):
        m = min(step, n_boot - lo)
        drawn = rng.integers(0, g, size=(m, g))
        if not direct:
            drawn = table.of_cluster[drawn]
        drawn += np.arange(m)[:, None] * width
        times = np.bincount(drawn.ravel(), minlength=m * width).reshape(m, width)
        parts.append((times.astype(counted_rows.dtype) @ counted_rows).astype(float))
    return np.concatenate(parts)


def unit_weights(
    n_units: int, cluster_of_unit: IntArray | None, n_boot: int, rng: np.random.Generator
) -> FloatArray:
    """``(n_boot, n_units)`` resampling weights: how often each unit (item) enters a replicate.

    Without clusters, units are drawn with replacement; with clusters, G clusters are drawn
    (``rng.integers(0, G, size=G)`` per replicate, as in :func:`cluster_weights`) and every unit
    of a drawn cluster enters as often as its cluster was drawn.
    """
    groups = np.arange(n_units) if cluster_of_unit is None else cluster_of_unit
    g = int(groups.max()) + 1 if groups.size else 0
    draws = rng.integers(0, g, size=(n_boot, g)) + np.arange(n_boot)[:, None] * g
    times = np.bincount(draws.ravel(), minlength=n_boot * g).reshape(n_boot, g)
    result: FloatArray = times[:, groups].astype(float)
    return result


def cluster_jackknife(stat: PatternStat, table: ClusterTable) -> tuple[FloatArray, FloatArray]:
    """Leave-one-cluster-out values, one per distinct cluster row, weighted by its multiplicity."""
    total = table.rows.T @ np.bincount(table.of_cluster, minlength=len(table.rows))
    values = stat(total[None, :] - table.rows)
    return values, np.bincount(table.of_cluster, minlength=len(table.rows)).astype(float)


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
    method: BootMethod,
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
        if ok.sum() < 2:  # one unit (or cluster): nothing to leave out, no acceleration
            return np.nan, np.nan
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
    ci: CI,
    clusters: ClusterTable | None = None,
) -> tuple[float, float, float]:
    """Bootstrap ``stat`` over items (or whole clusters) and return ``(low, high, se)``."""
    method: BootMethod = (
        "bca" if ci.offered(("percentile", "bca"), "a bootstrap").method == "bca" else "percentile"
    )
    rng = as_generator(ci.seed)
    if clusters is None:
        boot = bootstrap_distribution(stat, counts, ci.n_boot, rng)
        jack = jackknife(stat, counts) if method == "bca" else None
    else:
        boot = stat(cluster_weights(clusters, ci.n_boot, rng))
        with np.errstate(divide="ignore", invalid="ignore"):  # one cluster: leaving it out is empty
            jack = cluster_jackknife(stat, clusters) if method == "bca" else None
    low, high = interval(estimate, boot, level=ci.level, method=method, jack=jack)
    finite = boot[np.isfinite(boot)]
    se = float(np.std(finite, ddof=1)) if finite.size > 1 else np.nan
    return low, high, se


def unit_ci(
    stat: PatternStat,
    pattern_of_unit: IntArray,
    n_patterns: int,
    cluster_of_unit: IntArray | None,
    *,
    estimate: float,
    ci: CI,
) -> dict[str, object]:
    """Bootstrap interval over units, clustered when ``cluster_of_unit`` is given.

    Clustered, the result also holds the naive (item-resampling) interval drawn next from the
    same generator and the design effect, clustered width / naive width: how much wider the
    interval gets once the items are not taken as independent.

    Returns:
        ci_low, ci_high, se (bootstrap SE); clustered also n_clusters, naive_ci_low,
        naive_ci_high, design_effect.
    """
    ci = ci.shared()
    counts = np.bincount(pattern_of_unit, minlength=n_patterns)
    if cluster_of_unit is None:
        low, high, se = pattern_ci(stat, counts, estimate=estimate, ci=ci)
        return {"ci_low": low, "ci_high": high, "se": se}
    table = cluster_table(pattern_of_unit, cluster_of_unit, n_patterns)
    low, high, se = pattern_ci(stat, counts, estimate=estimate, ci=ci, clusters=table)
    naive_low, naive_high, _ = pattern_ci(stat, counts, estimate=estimate, ci=ci)
    naive_width = naive_high - naive_low
    return {
        "ci_low": low,
        "ci_high": high,
        "se": se,
        "n_clusters": table.n_clusters,
        "naive_ci_low": naive_low,
        "naive_ci_high": naive_high,
        "design_effect": (high - low) / naive_width if naive_width > 0 else np.nan,
    }


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
