"""Rows per request: prompt tokens per item and wall time at 1, 10 and 60 rows, in both modes.

Run from the repository root: ``python3 -m benchmarks.bench_batch_size``.

The riddle rows are judged with each riddle rubric on the simulator (fixed 300 ms latency,
8 requests in flight, no faults) with 1, 10 and 60 rows per request, through
:func:`judgekit.judging.batch_probe.batch_size_sensitivity`. Prompt tokens are the counts the
endpoint reported, summed over distinct requests and divided by the items; "cached" is the part
the endpoint reported as served from its prefix cache. Independent mode sends every batch as its
own request (instructions repeated, concurrently); conversation mode sends the batches as
consecutive turns of one chat, carrying the whole history (sequential, with a 128k-token
budget). Conversation mode with one row per turn is not run: 600 sequential turns of a growing
chat is not a setting anyone should use, and the 10-row line already shows the trend.
The simulator scores every row as its oracle says, so agreement is not measured here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from benchmarks._common import (
    LATENCY_S,
    begin_benchmark,
    markdown_table,
    scored_items,
    write_metrics,
)
from judgekit.engine import OpenAIJudge
from judgekit.judging.batch_probe import batch_size_sensitivity
from judgekit.simulator import SimulatorConfig, run_simulator

RUBRICS = ("riddle_accuracy", "riddle_reasoning")
SIZES = (1, 10, 60)
CONTEXT_TOKENS = 128_000


def measure(rubric_name: str, mode: str, sizes: tuple[int, ...]) -> pd.DataFrame:
    """One row per batch size: tokens per item, requests and wall time."""
    rubric, items, oracle = scored_items(rubric_name)
    extra: dict[str, Any] = {"context_tokens": CONTEXT_TOKENS} if mode == "conversation" else {}
    with run_simulator(SimulatorConfig(oracle=oracle, latency_s=LATENCY_S)) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        table = batch_size_sensitivity(
            items, rubric, client, oracle, sizes=sizes, structured=False, mode=mode, **extra
        )
    return table.assign(rubric=rubric_name, mode=mode)


def main() -> None:
    args, source = begin_benchmark(__doc__ or "")
    results = pd.concat(
        [measure(name, "independent", SIZES) for name in RUBRICS]
        + [measure(name, "conversation", SIZES[1:]) for name in RUBRICS]
    )
    print(f"Items: {source}; simulator latency {LATENCY_S * 1000:.0f} ms.\n")
    print(
        markdown_table(
            [
                "rubric",
                "mode",
                "rows per call",
                "requests",
                "prompt tokens / item",
                "of which cached",
                "wall s",
                "ms / item",
            ],
            [
                [
                    r.rubric,
                    r.mode,
                    r.batch_size,
                    r.requests,
                    f"{r.prompt_tokens_per_item:.1f}",
                    f"{r.cached_tokens_per_item:.1f}",
                    f"{r.wall_time_s:.1f}",
                    f"{1000 * r.wall_time_s / r.n_items:.1f}",
                ]
                for r in results.itertuples()
            ],
        )
    )
    independent = results[results["mode"] == "independent"].set_index(["rubric", "batch_size"])
    per_item = independent["prompt_tokens_per_item"]
    metrics: dict[str, Any] = {}
    print("\nPrompt tokens per row, one item per call vs 60 rows per call (independent):\n")
    ratio_rows = []
    for name in RUBRICS:
        ratio = per_item[(name, 1)] / per_item[(name, 60)]
        metrics[f"{name}_tokens_ratio_1_vs_60"] = ratio
        ratio_rows.append(
            [name, f"{per_item[(name, 1)]:.1f}", f"{per_item[(name, 60)]:.1f}", f"{ratio:.1f}×"]
        )
    print(markdown_table(["rubric", "1 row / call", "60 rows / call", "ratio"], ratio_rows))
    write_metrics(args.metrics, metrics)


if __name__ == "__main__":
    main()
