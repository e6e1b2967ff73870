"""Bradley-Terry with a clustered bootstrap: 1,000 replicates on 10^5 comparisons, 50 models.

Run from the repository root: ``python3 -m benchmarks.bench_pairwise [--metrics PATH]``.

Games are drawn from known strengths (evenly spaced on [-2, 2], 10 % ties) on 500 prompts
(Arena-Hard's size), so each replicate draws 500 whole prompts with replacement. Timed:
:func:`judgekit.stats.bradley_terry` (ties as half wins, ``CI("percentile", n_boot=1000)``),
best of ``REPEATS`` runs, wall clock on this machine. Target (issue 33): under 10 s. Also
reported: the largest distance of the point strengths from an independent MM loop (Hunter
2004) and how many of the 50 intervals (95 %) hold the generating strength.

The judging part (issue 33: a pairwise study's per-request cost within 10 % of a direct one's)
runs two ``judgekit judge`` client processes AT THE SAME TIME against one in-process simulator
(no latency, same ``--max-concurrency``): a direct study (``riddle_accuracy``, one item per
request) of ``REQUESTS`` items and a pairwise study (``mtbench_pairwise``, both orders) of
``REQUESTS / 2`` pairs, answers of the same lengths. Each client reports its own CPU time (user +
system, ``resource.getrusage``) from after its imports to the end of the study's writing,
divided by the requests it sent; ``ROUNDS`` rounds, the median ratio pairwise / direct.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import markdown_table, write_metrics
from judgekit import config
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.stats import CI, bradley_terry

GAMES, MODELS, PROMPTS, REPLICATES, REPEATS = 100_000, 50, 500, 1000, 3
TARGET_S = 10.0
REQUESTS, ROUNDS, CONCURRENCY, CPU_TARGET = 400, 3, 8, 1.10
#: A judging client: CPU seconds from after the imports to the end, as one JSON line.
CLIENT = """
import json, resource, sys
from judgekit.cli.main import main
import judgekit.judging.judge, judgekit.judging.pairs, judgekit.engine, pandas, pyarrow
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start = cpu()
code = main(sys.argv[1:])
print(json.dumps({"code": code, "cpu_s": cpu() - start}))
"""


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


def study_files(folder: Path) -> tuple[Path, Path]:
    """A direct items file of ``REQUESTS`` items and a pairs file of ``REQUESTS / 2`` pairs."""
    text = [f"Answer {k}: " + "words " * (10 + k % 30) for k in range(REQUESTS)]
    direct = pd.DataFrame(
        {"ID": [f"d{k}" for k in range(REQUESTS)], "Question": "What is it?",
         "Answer": text, "Ref_Answer": "It is this."}
    )  # fmt: skip
    half = REQUESTS // 2
    pairs = pd.DataFrame(
        {"ID": [f"p{k}" for k in range(half)], "Question": "What is it?",
         "Answer_A": text[:half], "Answer_B": text[half:], "Model_A": "x", "Model_B": "y"}
    )  # fmt: skip
    direct.to_csv(folder / "direct.csv", index=False)
    pairs.to_csv(folder / "pairs.csv", index=False)
    return folder / "direct.csv", folder / "pairs.csv"


def cpu_per_request() -> dict[str, float]:
    """Both clients at once, ``ROUNDS`` times: CPU ms per request each, the median ratio."""
    ratios, direct_ms, pair_ms = [], [], []
    with (
        tempfile.TemporaryDirectory() as tmp,
        run_simulator(SimulatorConfig(keep_log=False)) as sim,
    ):
        folder = Path(tmp)
        direct, pairs = study_files(folder)
        env = {"PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1", "PATH": "/usr/bin:/bin"}
        for k in range(ROUNDS):
            common = ["--provider", "simulator", "--model", "sim-judge", "--base-url",
                      sim.base_url, "--max-concurrency", str(CONCURRENCY)]  # fmt: skip
            runs = {
                "direct": [str(direct), "--rubric", "riddle_accuracy", "--batch-size", "1",
                           "--no-labels"],
                "pairwise": [str(pairs), "--rubric", "mtbench_pairwise"],
            }  # fmt: skip
            started = {
                name: subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        CLIENT,
                        "judge",
                        *args,
                        *common,
                        "--study",
                        str(folder / f"{name}{k}"),
                    ],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                for name, args in runs.items()
            }
            results = {
                name: json.loads(process.communicate()[0].strip().splitlines()[-1])
                for name, process in started.items()
            }
            for name, result in results.items():
                if result["code"] != 0:
                    raise SystemExit(f"the {name} client exited {result['code']}")
            d = results["direct"]["cpu_s"] / REQUESTS * 1000
            p = results["pairwise"]["cpu_s"] / REQUESTS * 1000
            direct_ms.append(d)
            pair_ms.append(p)
            ratios.append(p / d)
    return {
        "direct_cpu_ms_per_request": statistics.median(direct_ms),
        "pairwise_cpu_ms_per_request": statistics.median(pair_ms),
        "cpu_ratio": statistics.median(ratios),
        "cpu_ratios": ratios,  # type: ignore[dict-item]
    }


def main() -> None:
    """Time the fit and bootstrap and the two judging clients; print tables; write metrics."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, default=None)
    parser.add_argument("--part", choices=("all", "bradley_terry", "judging"), default="all")
    options = parser.parse_args()
    metrics: dict[str, object] = {}
    if options.part in ("all", "judging"):
        cpu = cpu_per_request()
        print(markdown_table(
            ["requests each", "concurrency", "rounds", "direct CPU ms/request",
             "pairwise CPU ms/request", "ratio (median)", "ratios", "target"],
            [[REQUESTS, CONCURRENCY, ROUNDS, f"{cpu['direct_cpu_ms_per_request']:.2f}",
              f"{cpu['pairwise_cpu_ms_per_request']:.2f}", f"{cpu['cpu_ratio']:.3f}",
              ", ".join(f"{r:.3f}" for r in cpu["cpu_ratios"]),  # type: ignore[attr-defined]
              f"<= {CPU_TARGET:.2f}"]],
        ))  # fmt: skip
        metrics.update(cpu)
    if options.part in ("all", "bradley_terry"):
        metrics.update(bradley_terry_timing())
    write_metrics(options.metrics, metrics)


def bradley_terry_timing() -> dict[str, float]:
    """The Bradley-Terry fit and bootstrap, best of ``REPEATS``; printed as a table."""
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
    return {"seconds": best, "max_abs_vs_mm": gap, "covered": covered}


if __name__ == "__main__":
    main()
