"""Timing of judgekit.stats against loop-based baselines.

Run from the repository root:
``python3 -m benchmarks.bench_stats``. For each size (pairs of ratings by two raters on a
0-5 scale) it times:

* quadratic kappa with a 2,000-replicate bootstrap CI (percentile and BCa): judgekit draws
  confusion-cell counts; the baseline calls ``sklearn.metrics.cohen_kappa_score`` on resampled
  rows in a Python loop (fewer replicates, scaled to 2,000);
* Krippendorff's alpha (interval): judgekit vs the ``krippendorff`` package, point estimate, and
  a 2,000-replicate bootstrap (the package in a loop, scaled);
* quadratic kappa with a 2,000-replicate *cluster* bootstrap (clusters of 10 pairs, so 10,000
  clusters at 100,000 pairs; percentile), against judgekit's own item bootstrap as the
  baseline: the price of resampling clusters. Target: under 1 s at 100,000 pairs.

Timings are best of ``REPEATS`` runs (wall clock, this machine).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from judgekit.stats import CI, krippendorff_alpha
from judgekit.stats.agreement import kappa_from_pairs

SIZES = (1_000, 10_000, 100_000)
N_BOOT = 2000
REPEATS = 3
SCALE = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
CLUSTER_SIZE = 10


def best_time(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def ratings(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n).astype(float)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 5).astype(float)
    return a, b


def sklearn_loop(a: np.ndarray, b: np.ndarray, reps: int) -> None:
    rng = np.random.default_rng(1)
    for _ in range(reps):
        pick = rng.integers(0, a.size, a.size)
        cohen_kappa_score(a[pick], b[pick], weights="quadratic")


def package_loop(data: np.ndarray, reps: int) -> None:
    rng = np.random.default_rng(1)
    for _ in range(reps):
        pick = rng.integers(0, data.shape[1], data.shape[1])
        krippendorff.alpha(reliability_data=data[:, pick], level_of_measurement="interval")


def bench_size(n: int) -> list[tuple[int, str, float, float, str]]:
    """Time every task at ``n`` pairs: (pairs, task, judgekit s, baseline s, baseline)."""
    a, b = ratings(n)
    long = pd.DataFrame(
        {"item": np.r_[np.arange(n), np.arange(n)], "rater": ["a"] * n + ["b"] * n,
         "score": np.r_[a, b]}
    )  # fmt: skip
    data = np.vstack([a, b])
    reps = max(3, 20_000 // n)
    scale = N_BOOT / reps
    sk = best_time(lambda: sklearn_loop(a, b, reps), 1) * scale
    rows = []
    for method in ("percentile", "bca"):
        ours = best_time(
            lambda m=method: kappa_from_pairs(
                a, b, SCALE, weights="quadratic", ci=CI(m, n_boot=N_BOOT, seed=0)
            )
        )
        rows.append((n, f"kappa_q + {N_BOOT} boot ({method})", ours, sk, "sklearn loop"))
    ours = best_time(lambda: krippendorff_alpha(long, level_of_measurement="interval"))
    pkg = best_time(
        lambda: krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    )
    rows.append((n, "alpha interval (point, from long table)", ours, pkg, "krippendorff pkg"))
    ours = best_time(
        lambda: krippendorff_alpha(
            long, level_of_measurement="interval", ci=CI("bca", n_boot=N_BOOT, seed=0)
        )
    )
    pkg_boot = best_time(lambda: package_loop(data, reps), 1) * scale
    rows.append((n, f"alpha interval + {N_BOOT} boot (bca)", ours, pkg_boot, "krippendorff loop"))
    clusters = np.arange(n) // CLUSTER_SIZE
    item_boot = best_time(
        lambda: kappa_from_pairs(
            a, b, SCALE, weights="quadratic", ci=CI("percentile", n_boot=N_BOOT, seed=0)
        )
    )
    ours = best_time(
        lambda: kappa_from_pairs(
            a, b, SCALE, weights="quadratic", ci=CI("percentile", n_boot=N_BOOT, seed=0),
            clusters=clusters,
        )
    )  # fmt: skip
    task = f"kappa_q + {N_BOOT} cluster boot ({n // CLUSTER_SIZE} clusters)"
    rows.append((n, task, ours, item_boot, "judgekit item boot"))
    return rows


def main() -> None:
    """Print the timing table; with ``--metrics FILE`` also write the clustered-kappa figures."""
    parser = argparse.ArgumentParser(description="Timing of judgekit.stats")
    parser.add_argument("--metrics", type=Path, help="write the measured figures as JSON here")
    args = parser.parse_args()
    rows = [row for n in SIZES for row in bench_size(n)]
    table = pd.DataFrame(rows, columns=["pairs", "task", "judgekit_s", "baseline_s", "baseline"])
    table["speedup"] = table["baseline_s"] / table["judgekit_s"]
    with pd.option_context("display.width", 140, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    if args.metrics:
        clustered = table[
            table["task"].str.contains("cluster boot") & (table["pairs"] == SIZES[-1])
        ]
        metrics = {
            "cluster_kappa_pairs": int(SIZES[-1]),
            "cluster_kappa_clusters": int(SIZES[-1] // CLUSTER_SIZE),
            "cluster_kappa_s": float(clustered["judgekit_s"].iloc[0]),
            "item_kappa_s": float(clustered["baseline_s"].iloc[0]),
        }
        args.metrics.write_text(json.dumps(metrics, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
