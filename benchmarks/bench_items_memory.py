"""Memory of ``judgekit judge`` against its items file: reading, ``--dry-run`` and the run.

Run from the repository root: ``python3 -m benchmarks.bench_items_memory`` (``--items N`` for
the file's size, ``--run-items N`` for the run's; the run of 10^5 items takes minutes).

An items CSV of ``--items`` rows (10^5 by default, about 160 MB) with riddle-sized texts: a
question, a 1-2 KB answer, a reference answer and the answering model, as
``benchmarks/bench_scale.py`` judges them. Each measurement runs in a fresh process; its peak
resident set is its own ``VmHWM`` as it exits (``ru_maxrss`` would include the parent's,
copied at the fork), in MiB, and its ratio to the file's size is shown beside it:

* ``read_table``: the file read as ``judgekit judge`` reads it (the rubric's required columns);
* ``--dry-run``: ``judgekit judge ITEMS --rubric riddle_accuracy --study DIR --dry-run``, every
  check, the first request and the estimate, against the simulator (which it asks once for
  its models listing);
* ``run``: the same command judging a file of ``--run-items`` rows (the first rows of the big
  one) into a fresh study against the simulator (no latency, 8 requests in flight; the
  rubric's own batching, 60 items per request, or ``--batch-size``). "Before first reply" is
  the process's peak resident set (``VmHWM``) when the simulator received its first request:
  what reading, checking and planning cost before any reply came back. The simulator runs in
  this (the parent) process, so its memory is not counted;
* ``run --batch-api``: the same run through the Batch API (the simulator's files and batches
  endpoints), into its own study: its input file uploaded and its results downloaded.

Targets (issue 36): the peak at most 2.5x the file, and 600 MB for the 160 MB file; before
the first reply at most 1.5x the file; the Batch API run's peak within 1.2x the online run's.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._common import markdown_table, write_metrics
from judgekit.simulator import SimulatorConfig, run_simulator

ITEMS = 100_000
RUBRIC = "riddle_accuracy"
MIB = 2**20

#: Runs ``-m MODULE ARGS`` or ``-c CODE ARGS`` as python would and writes the peak resident
#: set (kB) of the process to argv[1] as it exits.
_PEAK = """
import atexit, runpy, sys
from pathlib import Path
out, kind, target = sys.argv[1:4]
def peak():
    hwm = [l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM")]
    Path(out).write_text(hwm[0].split()[1])
atexit.register(peak)
sys.argv = [target, *sys.argv[4:]]
if kind == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    exec(compile(target, "<benchmark>", "exec"), {"__name__": "__main__"})
"""
_READ = """
import sys
from judgekit.data import read_table
from judgekit.rubrics import load_rubric
table = read_table(sys.argv[1], required=load_rubric({rubric!r}).required_columns)
assert len(table.frame) == int(sys.argv[2]), len(table.frame)
"""


def write_items(path: Path, count: int) -> None:
    """``count`` rows of riddle-sized text, written as they are made (nothing held)."""
    sentence = "A válasz indoklása egy mondatban, ahogy egy modell írná a talány megoldásához. "
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ID", "Question", "Answer", "Ref_Answer", "Model"])
        for i in range(count):
            writer.writerow(
                [
                    f"S{i:06d}",
                    f"Melyik magyar találmány forog hat színes oldalon? ({i})",
                    f"Válasz {i}: " + sentence * (12 + i % 12),  # 1.0-2.0 KB in UTF-8
                    "Rubik-kocka",
                    f"model-{i % 4}",
                ]
            )


def _head(source: Path, target: Path, rows: int) -> None:
    """The header and first ``rows`` rows of ``source`` (one line per row: no quoted newline)."""
    with source.open("rb") as read, target.open("wb") as write:
        for number, line in enumerate(read):
            if number > rows:
                break
            write.write(line)


def _hwm_mib(pid: int) -> float:
    """A live process's peak resident set so far (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / MIB
    raise RuntimeError(f"no VmHWM for process {pid}")


def run_measured(
    kind: str, target: str, args: list[str], first_request: Callable[[], int] | None = None
) -> dict[str, float]:
    """Run ``python KIND TARGET ARGS``: its peak MiB, seconds and MiB at the first request.

    ``first_request`` returns the number of requests the endpoint has received; the child's
    ``VmHWM`` is read as soon as it is non-zero.
    """
    started = time.perf_counter()
    env = {**os.environ, "TQDM_DISABLE": "1", "OPENAI_API_KEY": "not-needed"}
    with tempfile.NamedTemporaryFile(suffix=".kb") as out:
        command = [sys.executable, "-c", _PEAK, out.name, kind, target, *args]
        child = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        before: list[float] = []

        def watch(requests: Callable[[], int]) -> None:
            while child.poll() is None:
                if requests() > 0:
                    with contextlib.suppress(OSError, RuntimeError):  # it ended meanwhile
                        before.append(_hwm_mib(child.pid))
                    return
                time.sleep(0.005)

        watcher = None
        if first_request is not None:
            watcher = threading.Thread(target=watch, args=(first_request,), daemon=True)
            watcher.start()
        _, errors = child.communicate()
        if watcher:
            watcher.join()
        if child.returncode != 0:
            raise RuntimeError(f"{args} failed ({child.returncode}): {errors.decode()[-2000:]}")
        peak = int(Path(out.name).read_text()) * 1024 / MIB
    result = {"peak_mib": peak, "seconds": time.perf_counter() - started}
    if before:
        result["first_reply_mib"] = before[0]
    return result


def _judge(items: Path, study: Path, url: str, *extra: str) -> list[str]:
    return [
        "judge", str(items), "--rubric", RUBRIC, "--study", str(study), "--base-url", url,
        "--model", "sim-judge", "--max-concurrency", "8", *extra,
    ]  # fmt: skip


def main() -> None:
    """Print the table; with ``--metrics FILE`` also write the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=ITEMS, help="rows of the items file")
    parser.add_argument("--run-items", type=int, default=ITEMS, help="rows the run judges")
    parser.add_argument("--batch-size", type=int, help="items per request in the run")
    parser.add_argument("--metrics", type=Path, help="write the measured figures as JSON here")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        items = folder / "items.csv"
        write_items(items, args.items)
        size = items.stat().st_size / MIB
        run_items = items
        if args.run_items < args.items:
            run_items = folder / "run_items.csv"
            _head(items, run_items, args.run_items)
        run_size = run_items.stat().st_size / MIB
        config = SimulatorConfig(keep_log=False)
        with run_simulator(config) as simulator:
            counted = lambda: simulator.stats()["requests"]  # noqa: E731
            code = _READ.format(rubric=RUBRIC)
            read = run_measured("-c", code, [str(items), str(args.items)])
            dry_run = _judge(items, folder / "dry", simulator.base_url, "--dry-run")
            dry = run_measured("-m", "judgekit", dry_run)
            batching = ["--batch-size", str(args.batch_size)] if args.batch_size else []
            judge = _judge(run_items, folder / "run", simulator.base_url, *batching)
            judged = run_measured("-m", "judgekit", judge, counted)
            batch_api = [*batching, "--batch-api"]
            batch = _judge(run_items, folder / "batch", simulator.base_url, *batch_api)
            batched = run_measured("-m", "judgekit", batch)
    rows = [
        ("read_table", args.items, size, read),
        ("judge --dry-run", args.items, size, dry),
        ("judge (run)", args.run_items, run_size, judged),
        ("judge --batch-api (run)", args.run_items, run_size, batched),
    ]
    table = [
        [
            name, f"{count:,}", f"{mib:.0f}", f"{r['peak_mib']:.0f}", f"{r['peak_mib'] / mib:.2f}",
            f"{r['first_reply_mib']:.0f}" if "first_reply_mib" in r else "-",
            f"{r['seconds']:.1f}",
        ]
        for name, count, mib, r in rows
    ]  # fmt: skip
    header = ["step", "items", "file MiB", "peak MiB", "peak / file", "before first reply MiB"]
    print(markdown_table([*header, "seconds"], table))
    print(f"\n1-minute load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    metrics = {
        "items": args.items,
        "file_mib": size,
        "run_items": args.run_items,
        "run_file_mib": run_size,
        "read_table_peak_mib": read["peak_mib"],
        "dry_run_peak_mib": dry["peak_mib"],
        "run_peak_mib": judged["peak_mib"],
        "run_first_reply_mib": judged.get("first_reply_mib", float("nan")),
        "run_seconds": judged["seconds"],
        "batch_api_peak_mib": batched["peak_mib"],
        "load_start": load,
    }
    write_metrics(args.metrics, metrics)


if __name__ == "__main__":
    main()
