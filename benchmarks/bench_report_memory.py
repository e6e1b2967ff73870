"""Memory of the report at 250,000 items: the seed-004 minimum-kappa bootstrap and load_study.

Run from the repository root: ``python3 -m benchmarks.bench_report_memory`` (about five
minutes). Each measurement runs in a fresh Python process and reports its peak resident set
(``ru_maxrss``) and what it still holds afterwards (``/proc/self/statm``), both in MiB:

* ``min_kappa_interval`` (notebook 02's and 04's paraphrase check) on 250,000 items judged
  with three prompt variants, 2,000 replicates, unclustered and clustered by question (four
  items each). It counts drawn patterns in chunks; before, it built dense
  replicates x items weight matrices (about 16 GB at this size, extrapolated from 1.5 GB
  measured at 25,000 items);
* ``load_study`` of 250,000 one-item replies of about 1.4 KB, each in ``raw_reply``,
  ``verdict_raw`` and (most of it) ``reason``: read as every text of every column
  (``read_frame``, what ``load_study`` did), with each text held once (``replies=True``), and
  as the report reads it (``replies=False``);
* ``judgekit report``'s parent process planning the notebooks on that study: before, it loaded
  the study (``load_study(replies=False)``) to plan; now it reads a few dictionary-encoded
  columns and the label tables (``read_contents``), the kernels alone load the study;
* notebook 02 (human agreement, with the seed-004 report) executed by papermill on a study of
  250,000 items x 3 variants with human labels, 2,000 replicates: the peak of its kernel
  (``RUSAGE_CHILDREN`` of the process that ran papermill). Before, it was killed at 18.9 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

N_ITEMS = 250_000
N_BOOT = 2000

_MEASURE = """
import resource, time
start = time.perf_counter()
{body}
held = int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{{peak:.0f}} {{held:.0f}} {{time.perf_counter() - start:.1f}}")
"""

_MIN_KAPPA = """
import numpy as np, pandas as pd
from judgekit.stats import CI
from judgekit.stats._prep import Columns
from judgekit.stats.consistency import min_kappa_interval
rng = np.random.default_rng(1)
n = {n}
base = rng.integers(0, 4, n)
frames = [
    pd.DataFrame({{
        "item": [f"i{{i}}" for i in range(n)], "rater": variant,
        "score": np.where(rng.random(n) < 0.85, base, rng.integers(0, 4, n)).astype(float),
        "question": [f"q{{i // 4}}" for i in range(n)],
    }})
    for variant in ("base", "paraphrase_1", "paraphrase_2")
]
columns = Columns(cluster="question") if {clustered} else Columns()
min_kappa_interval(
    pd.concat(frames, ignore_index=True), scale=[0, 1, 2, 3], weights="quadratic",
    weight_basis="rank", ci=CI("percentile", seed=0, n_boot={n_boot}), columns=columns,
)
"""

_STUDY = """
import numpy as np, pandas as pd
from judgekit.data import write_table
n = {n}
rng = np.random.default_rng(0)
words = np.array("the answer names the capital but omits the date the reference gives".split())
replies = [
    " ".join(rng.choice(words, 250)) + f" item {{i}}. SCORE: {{1 + i % 4}}" for i in range(n)
]
frame = pd.DataFrame({{
    "item_id": [f"i{{i}}" for i in range(n)], "rubric": "factual_accuracy", "variant": "base",
    "model": "judge", "run": 1, "attempt": 1, "status": "ok",
    "score": (1 + np.arange(n) % 4).astype(float), "expected_score": np.nan,
    "reason": [r.rsplit(" SCORE", 1)[0] for r in replies], "batch_index": np.arange(n),
    "position": 0, "request_hash": [f"{{i:064x}}" for i in range(n)], "prompt_tokens": 700,
    "completion_tokens": 400, "latency_s": 0.5, "tolerances": "", "raw_reply": replies,
    "structured": False, "cached_tokens": 0, "finish_reason": "stop", "http_attempts": 1,
    "error": "", "verdict_raw": replies, "details": "{{}}",
}})
write_table(frame, {path!r})
"""

_LOADS = {  # metric key -> row name
    "before": "every text of every column (before)",
    "once": "load_study, each text once",
    "report": "load_study(replies=False), the report",
}
_LOAD_CODE = {
    "before": ("from judgekit.data.frames import read_frame\nf = read_frame({path!r})"),
    "once": ("from judgekit.study.folder import load_study\ns = load_study({path!r})"),
    "report": (
        "from judgekit.study.folder import load_study\ns = load_study({path!r}, replies=False)"
    ),
}

_PLANS = {  # metric key -> (row name, code)
    "before": (
        "load_study(replies=False), as the parent did (before)",
        "import judgekit.reporting.report\nfrom judgekit.study.folder import load_study\n"
        "s = load_study({folder!r}, replies=False)\n"
        "s.judgments.groupby('request_hash')['item_id'].nunique().max()",
    ),
    "after": (
        "read_contents + plan_report (now)",
        "from judgekit.reporting.report import plan_report, read_contents\n"
        "steps = plan_report(read_contents(__import__('pathlib').Path({folder!r})))",
    ),
}


_PANEL = """
import numpy as np, pandas as pd
from judgekit.data import write_table
n = {n}
rng = np.random.default_rng(0)
human = rng.integers(1, 5, n)
frames = []
for v, variant in enumerate(("base", "paraphrase_1", "paraphrase_2")):
    score = np.where(rng.random(n) < 0.8, human, rng.integers(1, 5, n)).astype(float)
    replies = [f"Judged item {{i}} ({{variant}}). SCORE: {{int(s)}}" for i, s in enumerate(score)]
    frames.append(pd.DataFrame({{
        "item_id": [f"i{{i}}" for i in range(n)], "rubric": "factual_accuracy",
        "variant": variant, "model": "judge", "run": 1, "attempt": 1, "status": "ok",
        "score": score, "expected_score": np.nan, "reason": replies,
        "batch_index": np.arange(n), "position": 0,
        "request_hash": [f"{{v}}{{i:063x}}" for i in range(n)], "prompt_tokens": 700,
        "completion_tokens": 40, "latency_s": 0.5, "tolerances": "", "raw_reply": replies,
        "answer_model": [f"m{{i % 5}}" for i in range(n)],
        "question": [f"q{{i // 4}}" for i in range(n)],
    }}))
write_table(pd.concat(frames, ignore_index=True), {folder!r} + "/judgments.parquet")
labels = pd.DataFrame({{
    "item_id": [f"i{{i}}" for i in range(n)], "rubric": "factual_accuracy",
    "answer_model": [f"m{{i % 5}}" for i in range(n)], "score": human.astype(float),
}})
write_table(labels, {folder!r} + "/human_labels.parquet")
"""

_NOTEBOOK = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run([sys.executable, "-m", "papermill", {notebook!r}, {folder!r} + "/02.ipynb",
    "-p", "judgments_path", {folder!r} + "/judgments.parquet",
    "-p", "labels_path", {folder!r} + "/human_labels.parquet",
    "-p", "output_dir", {folder!r} + "/tables", "-p", "figures_dir", {folder!r} + "/figures"],
    check=True, capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{{peak:.0f}} {{time.perf_counter() - start:.1f}}")
"""


def measure(body: str) -> tuple[float, float, float]:
    """Peak MiB, held MiB and seconds of ``body`` in a fresh process."""
    code = _MEASURE.format(body=textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=1800
    )
    peak, held, seconds = (float(x) for x in done.stdout.split()[-3:])
    return peak, held, seconds


def main() -> None:
    """Print the two tables; with ``--metrics FILE`` also write the peaks as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, help="write the measured figures as JSON here")
    args = parser.parse_args()
    metrics: dict[str, float] = {"items": N_ITEMS}
    print(f"min_kappa_interval, {N_ITEMS:,} items x 3 variants, {N_BOOT:,} replicates\n")
    print("| resampling | peak MiB | held MiB | seconds |\n|---|---:|---:|---:|")
    for clustered in (False, True):
        body = _MIN_KAPPA.format(n=N_ITEMS, clustered=clustered, n_boot=N_BOOT)
        peak, held, seconds = measure(body)
        name = "clusters of 4 items" if clustered else "items"
        print(f"| {name} | {peak:.0f} | {held:.0f} | {seconds:.1f} |")
        metrics[f"min_kappa_peak_mib_{'clustered' if clustered else 'items'}"] = peak
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "judgments.parquet")
        subprocess.run([sys.executable, "-c", _STUDY.format(n=N_ITEMS, path=path)], check=True)
        print(f"\nload_study, {N_ITEMS:,} one-item replies of about 1.4 KB\n")
        print("| read | peak MiB | held MiB | seconds |\n|---|---:|---:|---:|")
        for key, name in _LOADS.items():
            peak, held, seconds = measure(_LOAD_CODE[key].format(path=path))
            print(f"| {name} | {peak:.0f} | {held:.0f} | {seconds:.1f} |")
            metrics[f"load_held_mib_{key}"] = held
        print(f"\nthe report's parent planning, {N_ITEMS:,} one-item replies\n")
        print("| plan | peak MiB | held MiB | seconds |\n|---|---:|---:|---:|")
        for key, (name, code) in _PLANS.items():
            peak, held, seconds = measure(code.format(folder=folder))
            print(f"| {name} | {peak:.0f} | {held:.0f} | {seconds:.1f} |")
            metrics[f"report_plan_peak_mib_{key}"] = peak
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-c", _PANEL.format(n=N_ITEMS, folder=folder)], check=True)
        notebook = str(
            Path(__file__).resolve().parent.parent / "notebooks" / "02_human_agreement.ipynb"
        )
        code = _NOTEBOOK.format(notebook=notebook, folder=folder)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=3600
        )
        peak, seconds = (float(x) for x in done.stdout.split()[-2:])
    print(
        f"\nnotebook 02, {N_ITEMS:,} items x 3 variants with human labels, {N_BOOT:,} replicates\n"
    )
    print("| run | kernel peak MiB | seconds |\n|---|---:|---:|")
    print(f"| papermill | {peak:.0f} | {seconds:.0f} |")
    metrics["notebook_02_peak_mib"] = peak
    if args.metrics:
        args.metrics.write_text(json.dumps(metrics, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
