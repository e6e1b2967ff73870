"""Coverage of 95 % kappa intervals when items come in clusters: cluster bootstrap vs naive.

Run from the repository root: ``python3 -m benchmarks.bench_coverage [--metrics FILE]``.

Each simulated study has 100 clusters (questions) of 10 rated pairs on a 0/3/5 scale. A
cluster first draws one of three types, which sets the first rater's score distribution
(mostly 0, balanced, mostly 5) and how often the second rater copies the first (0.95, 0.6,
0.2; otherwise it picks a level at random): easy questions everyone agrees on, hard ones where
they do not. Because the type is shared within a cluster, items of one cluster are alike: a
strong cluster effect. The population confusion
table is the average of the three types' tables, so the true quadratic kappa is known exactly.

For every study it records whether the 95 % interval contains the true kappa, for the
percentile cluster bootstrap (clusters resampled), the percentile bootstrap over items and the
large-sample analytic interval (both treat the 1,000 pairs as independent). Target: the
cluster bootstrap covers 92-97 %; the naive ones fall visibly short.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from judgekit.stats import CI
from judgekit.stats.agreement import disagreement_weights, kappa_from_pairs, kappa_stat

SCALE = (0.0, 3.0, 5.0)
TYPES = np.array([[0.8, 0.15, 0.05], [0.34, 0.33, 0.33], [0.05, 0.15, 0.8]])
COPY = np.array([0.95, 0.6, 0.2])
CLUSTERS, PER_CLUSTER = 100, 10
N_STUDIES, N_BOOT, SEED = 1000, 1000, 20251201


def type_table(marginal: np.ndarray, copy: float) -> np.ndarray:
    """Confusion-cell probabilities of one cluster type: b copies a, or is uniform."""
    k = marginal.size
    return marginal[:, None] * (copy * np.eye(k) + (1 - copy) / k)


def true_kappa() -> float:
    """Quadratic kappa of the population table (the average of the types' tables)."""
    population = np.mean([type_table(m, c) for m, c in zip(TYPES, COPY, strict=True)], axis=0)
    stat = kappa_stat(disagreement_weights(SCALE, "quadratic"))
    return float(stat(population.reshape(1, -1))[0])


def study(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simulated study: scores of raters a and b, and each pair's cluster."""
    kinds = rng.integers(0, len(TYPES), CLUSTERS)
    cluster = np.repeat(np.arange(CLUSTERS), PER_CLUSTER)
    marginals = TYPES[kinds[cluster]]
    a = (rng.random((cluster.size, 1)) > np.cumsum(marginals, axis=1)).sum(axis=1)
    copied = rng.random(cluster.size) < COPY[kinds[cluster]]
    b = np.where(copied, a, rng.integers(0, len(SCALE), cluster.size))
    levels = np.asarray(SCALE)
    return levels[np.minimum(a, 2)], levels[b], cluster


def main() -> None:
    """Simulate, print the coverage table, and write metrics when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, help="write the measured figures as JSON here")
    args = parser.parse_args()
    truth = true_kappa()
    rng = np.random.default_rng(SEED)
    hits = {"cluster bootstrap": 0, "item bootstrap": 0, "analytic": 0}
    effects = []
    for _ in range(N_STUDIES):
        a, b, cluster = study(rng)
        boot = CI("percentile", n_boot=N_BOOT, seed=rng)
        clustered = kappa_from_pairs(a, b, SCALE, weights="quadratic", ci=boot, clusters=cluster)
        analytic = kappa_from_pairs(a, b, SCALE, weights="quadratic")
        intervals = {
            "cluster bootstrap": (clustered["ci_low"], clustered["ci_high"]),
            "item bootstrap": (clustered["naive_ci_low"], clustered["naive_ci_high"]),
            "analytic": (analytic["ci_low"], analytic["ci_high"]),
        }
        for name, (low, high) in intervals.items():
            hits[name] += int(low <= truth <= high)  # type: ignore[operator]
        effects.append(float(clustered["design_effect"]))  # type: ignore[arg-type]
    coverage = {name: count / N_STUDIES for name, count in hits.items()}
    print(
        f"true quadratic kappa {truth:.4f}; {N_STUDIES} studies of {CLUSTERS} clusters x "
        f"{PER_CLUSTER} pairs; {N_BOOT} bootstrap replicates; median design effect "
        f"{np.median(effects):.2f}"
    )
    for name, share in coverage.items():
        print(f"  95% {name:<18} covers {share:.3f}")
    if args.metrics:
        metrics = {
            "true_kappa": truth,
            "studies": N_STUDIES,
            "coverage_cluster": coverage["cluster bootstrap"],
            "coverage_item_bootstrap": coverage["item bootstrap"],
            "coverage_analytic": coverage["analytic"],
            "median_design_effect": float(np.median(effects)),
        }
        args.metrics.write_text(json.dumps(metrics, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
