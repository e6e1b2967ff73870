"""A judging job the resume and store-sharing tests run (and kill) in a child process.

Usage: ``python judge_job.py BASE_URL STORE OUT N_ITEMS [--mode M] [--runs N]
[--concurrency N] [--endpoint NAME]``; writes the judgments table to OUT as parquet.
"""

from __future__ import annotations

import argparse

from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.types import Item


def riddle_items(n_items: int) -> list[Item]:
    """Items 1..n of a made-up riddle set (the job's and the tests' reference run alike)."""
    fields = {"Question": "Riddle {}?", "Answer": "Answer {}", "Ref_Answer": "Ref {}"}
    return [
        Item(str(i), {name: text.format(i) for name, text in fields.items()})
        for i in range(1, n_items + 1)
    ]


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
    items = [
        Item(
            str(i), {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": f"Ref {i}"}
        )
        for i in range(1, args.n_items + 1)
    ]
    client = OpenAIJudge(
        "sim-judge",
        base_url=args.base_url,
        provider="simulator",
        max_concurrency=args.concurrency,
        endpoint=args.endpoint,
    )
    table = judge(
        items,
        load_rubric("riddle_accuracy"),
        client,
        batch_size=2,
        store=args.store,
        progress=False,
        structured=False,
        runs=args.runs,
        mode=args.mode,
    )
    table.to_parquet(args.out)


if __name__ == "__main__":
    main()
