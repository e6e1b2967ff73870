"""Token cost of batching, and the cost of re-running a finished study from the response store.

Run from the repository root: ``python3 -m benchmarks.bench_tokens_cache``.

Token cost: the 600 riddle rows are judged with each riddle rubric twice, in 60-row batches and
one item per call; prompt tokens are the counts the endpoint reported (the simulator's own
count), divided by the rows judged. "Cached" are prompt tokens the endpoint reported as served
from its prefix cache (the shared instructions of the batches after the first).

Cache: a study (600 rows x 3 runs, accuracy rubric, 300 ms latency) is run with a response
store, then run again with the same store. API calls are counted by the simulator (the HTTP
requests it received) and by ``judge()``; the second run must send none and return the same
table.

The saving from batching is bounded: every row's own text is sent once whatever the batch size,
so tokens per row cannot fall below it; the script prints that ceiling per rubric. With the
endpoint's prefix cache, the repeated instructions of one-item calls are mostly billed as cached
tokens, which narrows the gap in cost (not in tokens processed).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks._common import (
    LATENCY_S,
    Stopwatch,
    begin_benchmark,
    markdown_table,
    scored_items,
    write_metrics,
)
from judgekit.engine import OpenAIJudge, judge
from judgekit.simulator import SimulatorConfig, run_simulator

RUBRICS = ("riddle_accuracy", "riddle_reasoning")
RUNS = 3


def token_cost(rubric_name: str) -> list[dict[str, Any]]:
    """Prompt tokens per row with the rubric's batches and with one item per call."""
    rubric, items, oracle = scored_items(rubric_name)
    rows = []
    for batch in (rubric.default_batch_size, 1):
        with run_simulator(SimulatorConfig(oracle=oracle)) as sim:
            client = OpenAIJudge(
                "sim-judge", base_url=sim.base_url, provider="simulator", max_concurrency=16
            )
            table = judge(items, rubric, client, batch_size=batch, structured=False, progress=False)
            stats = sim.stats()
        rows.append(
            {
                "rubric": rubric_name,
                "batch": batch,
                "requests": stats["requests"],
                "ok_rows": int((table["status"] == "ok").sum()),
                "per_row": stats["prompt_tokens"] / len(items),
                "cached_per_row": stats["cached_tokens"] / len(items),
            }
        )
    return rows


def rerun_cost() -> dict[str, Any]:
    """Wall time and API calls of a study run, then re-run from its store."""
    rubric, items, oracle = scored_items("riddle_accuracy")
    tables: list[pd.DataFrame] = []
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "store.sqlite"
        with run_simulator(SimulatorConfig(oracle=oracle, latency_s=LATENCY_S)) as sim:
            for label in ("first", "rerun"):
                sim.reset_stats()
                client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
                with Stopwatch() as clock:
                    table = judge(
                        items,
                        rubric,
                        client,
                        runs=RUNS,
                        store=store,
                        structured=False,
                        progress=False,
                    )
                tables.append(table)
                result[f"{label}_s"] = clock.seconds
                result[f"{label}_http"] = sim.stats()["requests"]
                result[f"{label}_api_calls"] = table.attrs["api_calls"]
                result[f"{label}_replayed"] = table.attrs["replayed"]
    measured = ["latency_s"]
    result["identical"] = tables[0].drop(columns=measured).equals(tables[1].drop(columns=measured))
    result["rows"] = len(tables[1])
    return result


def main() -> None:
    args, source = begin_benchmark(__doc__ or "")
    cost_rows = [row for name in RUBRICS for row in token_cost(name)]
    print(f"Items: {source}.\n")
    print(
        markdown_table(
            [
                "rubric",
                "rows per call",
                "requests",
                "ok rows",
                "prompt tokens per row",
                "of which cached",
                "× fewer than 1/call",
            ],
            [
                [
                    r["rubric"],
                    r["batch"],
                    r["requests"],
                    r["ok_rows"],
                    f"{r['per_row']:.1f}",
                    f"{r['cached_per_row']:.1f}",
                    f"{next(s['per_row'] for s in cost_rows if s['rubric'] == r['rubric'] and s['batch'] == 1) / r['per_row']:.1f}",  # noqa: E501
                ]
                for r in cost_rows
            ],
        )
    )
    for name in RUBRICS:
        batched, single = (
            next(r["per_row"] for r in cost_rows if r["rubric"] == name and r["batch"] == b)
            for b in (60, 1)
        )
        # per row: batched = I/60 + x, single = I + x (I: instructions, x: the row's own text)
        instructions = (single - batched) * 60 / 59
        own = single - instructions
        print(
            f"\n{name}: instructions ≈ {instructions:.0f} tokens per request, the row itself "
            f"≈ {own:.0f} tokens; no batch size can beat {single / own:.1f}× fewer tokens per row."
        )
    rerun = rerun_cost()
    print(
        f"\nRe-running a finished study ({rerun['rows']} rows: 600 rows x {RUNS} runs, accuracy, "
        f"{LATENCY_S * 1000:.0f} ms latency) from its response store:\n"
    )
    print(
        markdown_table(
            ["run", "wall s", "HTTP requests received", "API calls (judge)", "replayed"],
            [
                [
                    label,
                    f"{rerun[f'{key}_s']:.2f}",
                    rerun[f"{key}_http"],
                    rerun[f"{key}_api_calls"],
                    rerun[f"{key}_replayed"],
                ]
                for label, key in (("first run", "first"), ("rerun", "rerun"))
            ],
        )
    )
    print(
        f"\nRerun time = {rerun['rerun_s'] / rerun['first_s']:.3f} × first run; tables identical "
        f"(latency column aside): {rerun['identical']}."
    )
    ratios = {}
    for name in RUBRICS:
        batched, single = (
            next(r["per_row"] for r in cost_rows if r["rubric"] == name and r["batch"] == b)
            for b in (60, 1)
        )
        ratios[name] = single / batched
    write_metrics(
        args.metrics,
        {
            "token_ratio": ratios,
            "rerun_http": rerun["rerun_http"],
            "rerun_api_calls": rerun["rerun_api_calls"],
            "rerun_identical": rerun["identical"],
            "rerun_fraction": rerun["rerun_s"] / rerun["first_s"],
        },
    )


if __name__ == "__main__":
    main()
