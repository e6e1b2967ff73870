"""A judging job the resume and store-sharing tests run (and kill) in a child process.

Usage: ``python judge_job.py BASE_URL STORE OUT N_ITEMS [--mode M] [--runs N]
[--concurrency N] [--endpoint NAME]``; writes the judgments table to OUT as parquet.
The tests import :func:`run_job` too, for the uninterrupted reference run.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.types import Item


def riddle_items(n_items: int) -> list[Item]:
    """Items 1..n of a made-up riddle set."""
    fields = {"Question": "Riddle {}?", "Answer": "Answer {}", "Ref_Answer": "Ref {}"}
    return [
        Item(str(i), {name: text.format(i) for name, text in fields.items()})
        for i in range(1, n_items + 1)
    ]


def run_job(
    base_url: str,
    store: str | Path,
    n_items: int,
    *,
    mode: str = "independent",
    runs: int = 1,
    concurrency: int = 8,
    endpoint: str | None = None,
    offline: bool = False,
) -> pd.DataFrame:
    """Judge the riddle items on the simulator at ``base_url`` (plain prompts, batches of 2)."""
    client = OpenAIJudge(
        "sim-judge",
        base_url=base_url,
        provider="simulator",
        max_concurrency=concurrency,
        endpoint=endpoint,
    )
    return judge(
        riddle_items(n_items),
        load_rubric("riddle_accuracy"),
        client,
        batch_size=2,
        store=store,
        progress=False,
        structured=False,
        runs=runs,
        mode=mode,
        offline=offline,
    )


def kill_when(job: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """SIGKILL ``job`` as soon as ``ready()`` holds; fail if it dies or a minute passes first."""
    deadline = time.monotonic() + 60
    while not ready():
        assert job.poll() is None, job.stderr.read().decode() if job.stderr else ""
        assert time.monotonic() < deadline, "the job never stored a reply"
        time.sleep(0.01)
    job.send_signal(signal.SIGKILL)
    job.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("base_url", "store", "out"):
        parser.add_argument(name)
    parser.add_argument("n_items", type=int)
    parser.add_argument("--mode", default="independent")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--endpoint", default=None)
    args = parser.parse_args()
    table = run_job(
        args.base_url,
        args.store,
        args.n_items,
        mode=args.mode,
        runs=args.runs,
        concurrency=args.concurrency,
        endpoint=args.endpoint,
    )
    table.to_parquet(args.out)


if __name__ == "__main__":
    main()
