"""Speed of the offline judge (llama-cpp-python + SmolLM2-135M) on 60-row riddle batches.

Run from the repository root: ``python3 -m benchmarks.bench_local [--metrics PATH]``.

The local server is started exactly as ``default_judge_client`` starts it (all cores, 16k
context). The accuracy rubric judges rows 1-120 of the riddles in two 60-row batches, in
structured mode (grammar-constrained JSON), with no re-asks. Per request the table reports
llama.cpp's own timers, read from the server log (prompt-processing and generation tokens per
second), and the wall time the client waited. The second batch shares the first one's system
prompt, which llama-cpp-python keeps cached, so only its rows are processed.

Speeds on a shared machine depend on what else runs: the load average is printed with them.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._common import (
    Stopwatch,
    begin_benchmark,
    markdown_table,
    rubric_items,
    write_metrics,
)
from judgekit.engine import judge
from judgekit.judging.clients import local_judge_client
from judgekit.local import LocalJudgeServer, LocalJudgeUnavailable

BATCH = 60
BATCHES = 2
MAX_TOKENS = 1500
_PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_GENERATION = re.compile(r"perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs")


def llama_timings(log_text: str) -> list[dict[str, float]]:
    """Per request, llama.cpp's prompt and generation times as printed in the server log."""
    prompts = _PROMPT.findall(log_text)
    generations = _GENERATION.findall(log_text)
    return [
        {
            "prompt_ms": float(p_ms),
            "prompt_tokens": int(p_tokens),
            "generation_ms": float(g_ms),
            "generated_tokens": int(g_runs),
        }
        for (p_ms, p_tokens), (g_ms, g_runs) in zip(prompts, generations, strict=True)
    ]


def _rate(tokens: float, milliseconds: float) -> float:
    return tokens / (milliseconds / 1000.0) if milliseconds > 0 else float("nan")


def main() -> None:
    options, source = begin_benchmark(__doc__ or "")
    rubric, items, _ = rubric_items("riddle_accuracy", limit=BATCH * BATCHES)
    load_before = os.getloadavg()
    with (
        tempfile.TemporaryDirectory(prefix="bench-local-") as log_dir,
        LocalJudgeServer(log_dir=Path(log_dir)) as server,
    ):
        assert server.log_path is not None
        log_start = server.log_path.stat().st_size
        with Stopwatch() as clock:
            table = judge(
                items,
                rubric,
                local_judge_client(server),
                batch_size=BATCH,
                structured=True,
                max_tokens=MAX_TOKENS,
                max_reasks=0,
                progress=False,
            )
        memory = server.memory_mb()
        log_text = server.log_path.read_bytes()[log_start:].decode("utf-8", errors="replace")
    load_after = os.getloadavg()
    timings = llama_timings(log_text)
    requests = table.drop_duplicates("batch_index").sort_values("batch_index")
    rows = []
    for timing, request in zip(timings, requests.itertuples(), strict=True):
        batch_rows = table[table["batch_index"] == request.batch_index]
        statuses = batch_rows["status"].value_counts().to_dict()
        rows.append(
            [
                f"{request.batch_index + 1}",
                f"{request.prompt_tokens} ({timing['prompt_tokens']} processed)",
                f"{_rate(timing['prompt_tokens'], timing['prompt_ms']):.0f}",
                f"{request.completion_tokens}",
                f"{_rate(timing['generated_tokens'], timing['generation_ms']):.1f}",
                f"{request.latency_s:.1f}",
                ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
            ]
        )
    header = [
        "batch (60 rows)",
        "prompt tokens",
        "prompt tok/s",
        "reply tokens",
        "generation tok/s",
        "seconds",
        "row statuses",
    ]
    print(f"# Local judge speed: {server.model_alias}, {os.cpu_count()} threads\n")
    print(f"Items: {source}; rubric riddle_accuracy, structured (json_object + schema).\n")
    print(markdown_table(header, rows))
    print(
        f"\nWall time for {len(requests)} batches: {clock.seconds:.1f} s. "
        f"Server memory: {memory.get('rss_mb', float('nan')):.0f} MiB resident, "
        f"peak {memory.get('peak_rss_mb', float('nan')):.0f} MiB (n_ctx "
        f"{server.settings.n_ctx}). Load average before/after: "
        f"{load_before[0]:.1f} / {load_after[0]:.1f} on {os.cpu_count()} cores."
    )
    first = timings[0]
    metrics: dict[str, Any] = {
        "local_prompt_tokens_per_s": _rate(first["prompt_tokens"], first["prompt_ms"]),
        "local_generation_tokens_per_s": _rate(
            sum(t["generated_tokens"] for t in timings), sum(t["generation_ms"] for t in timings)
        ),
        "local_seconds_per_60_row_batch_uncached": float(requests["latency_s"].iloc[0]),
        "local_seconds_per_60_row_batch_cached_prefix": float(requests["latency_s"].iloc[-1]),
        "local_rows_ok": int((table["status"] == "ok").sum()),
        "local_rows": len(table),
        "local_peak_rss_mb": memory.get("peak_rss_mb"),
        "load_average_before": load_before[0],
        "load_average_after": load_after[0],
    }
    write_metrics(options.metrics, metrics)


if __name__ == "__main__":
    try:
        main()
    except LocalJudgeUnavailable as error:
        sys.exit(f"bench_local: {error}")
