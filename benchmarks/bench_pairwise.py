"""Bradley-Terry with a clustered bootstrap: 1,000 replicates on 10^5 comparisons, 50 models.

Run from the repository root: ``python3 -m benchmarks.bench_pairwise [--metrics PATH]``.

Games are drawn from known strengths (evenly spaced on [-2, 2], 10 % ties) on 500 prompts
(Arena-Hard's size), so each replicate draws 500 whole prompts with replacement. Timed:
:func:`judgekit.stats.bradley_terry` (ties as half wins, ``CI("percentile", n_boot=1000)``),
best of ``REPEATS`` runs, wall clock on this machine. Target (issue 33): under 10 s. Also
reported: the largest distance of the point strengths from an independent MM loop (Hunter
2004) and how many of the 50 intervals (95 %) hold the generating strength.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import markdown_table, write_metrics
from judgekit.stats import CI, bradley_terry

GAMES, MODELS, PROMPTS, REPLICATES, REPEATS = 100_000, 50, 500, 1000, 3
TARGET_S = 10.0


def games(seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Comparisons among ``MODELS`` models of known strength, on ``PROMPTS`` prompts."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(-2, 2, MODELS)
    a = rng.integers(0, MODELS, GAMES)
    b = (a + rng.integers(1, MODELS, GAMES)) % MODELS
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    winner = np.where(rng.random(GAMES) < p, "a", "b")
    names = np.array([f"model_{k:02d}" for k in range(MODELS)])
    frame = pd.DataFrame(
        {"model_a": names[a], "model_b": names[b], "winner": winner,
         "prompt": rng.integers(0, PROMPTS, GAMES)}
    )  # fmt: skip
    return frame, strength


def mm_strengths(frame: pd.DataFrame) -> pd.Series:
    """Hunter's (2004) MM iteration, an independent fit of the same model."""
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    index = {m: k for k, m in enumerate(models)}
    i, j = frame["model_a"].map(index).to_numpy(), frame["model_b"].map(index).to_numpy()
    s = frame["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    wins = np.zeros((len(models),) * 2)
    np.add.at(wins, (i, j), s)
    np.add.at(wins, (j, i), 1 - s)
    played, p = wins + wins.T, np.ones(len(models))
    for _ in range(100_000):
        new = wins.sum(1) / (played / (p[:, None] + p[None, :])).sum(1)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < 1e-14:
            break
        p = new
    return pd.Series(np.log(p) - np.log(p).mean(), index=models)


def main() -> None:
    """Time the fit and bootstrap; print a markdown table; write ``--metrics``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, default=None)
    options = parser.parse_args()
    frame, strength = games()
    ci = CI("percentile", n_boot=REPLICATES, seed=0)
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        table = bradley_terry(frame, cluster="prompt", ci=ci)
        times.append(time.perf_counter() - start)
    by_model = table.set_index("model").sort_index()
    gap = float((by_model["strength"] - mm_strengths(frame)).abs().max())
    truth = pd.Series(strength - strength.mean(), index=sorted(by_model.index))
    covered = int(((by_model["ci_low"] <= truth) & (truth <= by_model["ci_high"])).sum())
    best = min(times)
    print(markdown_table(
        ["comparisons", "models", "prompts (clusters)", "replicates", "best of 3 (s)", "target",
         "max |BT - MM|", "intervals holding the truth"],
        [[f"{GAMES:,}", MODELS, PROMPTS, REPLICATES, f"{best:.2f}", f"< {TARGET_S:g} s",
          f"{gap:.1e}", f"{covered} / {MODELS}"]],
    ))  # fmt: skip
    write_metrics(options.metrics, {"seconds": best, "max_abs_vs_mm": gap, "covered": covered})


if __name__ == "__main__":
    main()
