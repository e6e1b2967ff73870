"""``judgekit import`` and the meta-evaluation tables at scale (issue #34's speed targets).

Run from the repository root as ``python3 -m benchmarks.bench_import``: it generates a long
judgments CSV of 10^6 rows (about 200 MB: 250,000 items x 4 judges, a score and a distinct
reply of about 190 characters per row) in a temporary folder, imports it in a child process
(wall and CPU time, peak resident memory from ``getrusage``), then times
:func:`judgekit.stats.meta_correlation` with 2,000 document-resampling replicates on 10^5
items (16 per document, 3 human raters, Likert 1-5). Prints one markdown table;
``--metrics PATH`` writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROWS, JUDGES = 1_000_000, 4


def long_csv(path: Path, rows: int = ROWS, seed: int = 0) -> Path:
    """Write the generated long table (item, judge, score, question, answer_model, reply)."""
    rng = np.random.default_rng(seed)
    items = rows // JUDGES
    ids = np.char.add("item-", np.arange(items).astype(str))
    reply = "The answer addresses the question directly and is mostly correct, but it omits "
    reply += "one step that a careful reader would expect, and cites no source for it. SCORE: "
    frames = []
    for j in range(JUDGES):
        scores = rng.integers(1, 6, items)
        frames.append(pd.DataFrame({
            "item_id": ids, "judge": f"judge-{j}", "score": scores,
            "question": np.char.add("doc-", (np.arange(items) // 16).astype(str)),
            "answer_model": np.char.add("system-", (np.arange(items) % 16).astype(str)),
            "reply": [f"{reply}{s} (item {i}, judge {j}, calibrated)"
                      for i, s in enumerate(scores)],
        }))  # fmt: skip
    pd.concat(frames, ignore_index=True).to_csv(path, index=False)
    return path


def time_import(source: Path, study: Path) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak resident MiB of ``judgekit import --from long`` (a child).

    The CPU time says what the import costs when the machine is shared (wall time then
    includes waiting for a core).
    """
    start = time.perf_counter()
    command = [
        sys.executable,
        "-m",
        "judgekit",
        "import",
        "--from",
        "long",
        str(source),
        "--study",
        str(study),
    ]
    subprocess.run(command, check=True)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def time_correlations(items: int = 100_000, n_boot: int = 2000, seed: int = 0) -> float:
    """Seconds for the six meta-correlation rows of one judge with 2,000 replicates."""
    from judgekit.stats import CI, meta_correlation

    rng = np.random.default_rng(seed)
    truth = rng.normal(size=items)
    ids = np.char.add("i", np.arange(items).astype(str))
    doc = np.arange(items) // 16
    judged = np.clip(np.round(3 + truth + rng.normal(0, 0.8, items)), 1, 5)
    frames = [pd.DataFrame({"item": ids, "rater": "judge", "question": doc, "score": judged})]
    for h in range(3):
        human = np.clip(np.round(3 + truth + rng.normal(0, 0.7, items)), 1, 5)
        frames.append(
            pd.DataFrame({"item": ids, "rater": f"h{h}", "question": doc, "score": human})
        )
    long = pd.concat(frames, ignore_index=True)
    start = time.perf_counter()
    meta_correlation(
        long, ["judge"], ["h0", "h1", "h2"], ci=CI("percentile", n_boot=n_boot, seed=seed)
    )
    return time.perf_counter() - start


def main() -> None:
    """Run both measurements and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metrics", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = long_csv(Path(tmp) / "judgments.csv")
        size_mb = source.stat().st_size / 1e6
        wall, cpu, peak = time_import(source, Path(tmp) / "study")
    corr = time_correlations()
    print("| measurement | value | target |\n|---|---|---|")
    print(f"| import 10^6 long rows ({size_mb:.0f} MB CSV): wall | {wall:.1f} s | < 120 s |")
    print(f"| import: CPU time | {cpu:.1f} s | |")
    print(f"| import: peak resident memory | {peak:.0f} MiB | < 2048 MiB |")
    print(f"| meta_correlation, 10^5 items, 2,000 replicates, 6 rows | {corr:.1f} s | < 30 s |")
    if args.metrics:
        metrics = {
            "import_s": wall,
            "import_peak_mib": peak,
            "csv_mb": size_mb,
            "correlation_s": corr,
        }
        args.metrics.write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
