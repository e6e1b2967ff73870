"""Scale: judgekit's command line and ``judge()`` against a bare SDK loop run at the same time.

Run from the repository root: ``python3 -m benchmarks.bench_scale`` (``--sizes 1000,10000``, or
``BENCH_SCALE_SIZES=1000,10000,100000:CLI`` for ``judgekit bench scale``: ``:CLI`` runs only the
CLI's pairs at that size; ``BENCH_SCALE_REPEATS`` sets the pairs of each kind).

One item per request, items with realistic text sizes (a question, a 1-2 KB answer) in a CSV
file, judged with ``riddle_accuracy`` (instructions of about 4 KB) at concurrency 8, by an
endpoint with no latency and no rate limit. Each contender runs *at the same time* as the
minimal ``openai.AsyncOpenAI`` loop a user would write, each client against its own
simulator process, so both see the same load on this 2-core machine (whose speed drifts by a
third over minutes, which defeats runs taken in turn). The contenders:

* ``CLI``: ``judgekit judge ITEMS --study DIR --batch-size 1`` as a subprocess, with
  ``--provider generic`` (plain text) or ``--provider simulator`` (the preset's ``json_schema``
  response format);
* ``judge()``: the library function on the items read with judgekit's reader, a store,
  ``structured=False`` or ``True``;
* ``loop``: 8 workers reading the CSV with the ``csv`` module, each rendering an item's messages
  with the same rubric and awaiting ``chat.completions.create``, with the same
  ``response_format`` for ``json_schema``; nothing stored, nothing parsed.

Every client is its own process: its CPU time (user + system) comes from ``wait4``. Each
simulator prints how many requests it has answered every 20 ms; at each tick the client's CPU
time and peak RSS so far (``VmHWM``) are read from ``/proc``, which gives its CPU per request
in each quarter of the requests (from the first reply on) and its peak memory without
instrumenting the client. "CPU ms/request"
is the whole process's CPU (start-up and the writing of results included) over the items.
Items/s is counted while both clients of a pair are being answered (one finishes first, and
then the other runs alone). "First reply" is the first tick at which the client's simulator
had answered a request: its time and the client's peak RSS until then. Ratios are contender /
its own loop, from the same run. By quarter: each client's own CPU per request in each quarter
of its requests against its first quarter's; and the contender's over the loop's in each
quarter (by time) of the span both were answered in, against the first quarter's ratio (the same
moments for both, so the machine's drift cancels and a cost growing with the study remains).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import markdown_table, write_metrics
from benchmarks._scale_clients import CONCURRENCY, OUTPUTS, RUBRIC, cli_command, write_items
from benchmarks._scale_measure import overlap_quarters, overlap_rates, run_together, summary

SIZES = (1_000, 10_000)  # 100_000 runs when asked for (about 10 minutes per pair)
CONTENDERS = ("CLI", "judge()")
LOOP = "loop"


def repeats(count: int) -> int:
    """Pairs of each kind at ``count`` items (``BENCH_SCALE_REPEATS`` overrides)."""
    told = os.environ.get("BENCH_SCALE_REPEATS")
    return int(told) if told else 3 if count <= 1_000 else 1


def _client(what: str, items: Path, output: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks._scale_clients", what, str(items), "{url}", output]


def _relative(values: Sequence[float]) -> list[float]:
    """Each value over the first; none when a quarter took no measurable CPU (a tiny run)."""
    return [v / values[0] for v in values] if len(values) == 4 and all(values) else []


def measure_pair(
    contender: str, output: str, count: int, items: Path, folder: Path
) -> dict[str, Any]:
    """One contender and a loop at the same time, each against its own simulator."""
    study = folder / "study"
    command = (
        cli_command(items, "{url}", output, study)
        if contender == "CLI"
        else _client("judge", items, output)
    )
    load = [os.getloadavg()[0]]
    traces = run_together(
        [(contender, command), (LOOP, _client("loop", items, output))],
        count,
        folder,
        folder / "clients.log",
    )
    load.append(os.getloadavg()[0])
    shutil.rmtree(study, ignore_errors=True)
    items_mb = items.stat().st_size / 2**20
    rates, overlap_s = overlap_rates(traces)
    ours, loop = (
        {**summary(trace, items_mb), "items_per_s": rate}
        for trace, rate in zip(traces, rates, strict=True)
    )
    ours_q, loop_q = overlap_quarters(traces)
    paired = [a / b for a, b in zip(ours_q, loop_q, strict=True) if b]
    return {
        "contender": contender,
        "output": output,
        "items": count,
        "items_mb": items_mb,
        "load": load,
        "overlap_s": overlap_s,
        "ours": ours,
        "loop": loop,
        "cpu_ratio": ours["cpu_ms_per_request"] / loop["cpu_ms_per_request"],
        "rate_ratio": ours["items_per_s"] / loop["items_per_s"],
        "quarter_ratios": _relative(paired),
        "own_quarter_ratios": _relative(ours["quarters_ms"]),
        "loop_quarter_ratios": _relative(loop["quarters_ms"]),
    }


def measure_size(
    count: int, folder: Path, contenders: Sequence[str] = CONTENDERS
) -> list[dict[str, Any]]:
    """Each contender and output at ``count`` items, ``repeats(count)`` times, in turn."""
    items = write_items(folder / f"items_{count}.csv", count)
    pairs = []
    for repeat in range(repeats(count)):
        for output in OUTPUTS:
            for contender in contenders:
                print(f"{count:,} {output} {contender} #{repeat + 1}", file=sys.stderr, flush=True)
                pair = measure_pair(contender, output, count, items, folder)
                pairs.append({**pair, "repeat": repeat})
    items.unlink()
    return pairs


def _quarters(ratios: Sequence[float]) -> str:
    return " / ".join(f"{r:.2f}" for r in ratios) or "-"


def _worst(runs: Sequence[dict[str, Any]], key: str) -> float | None:
    """The largest departure from the first quarter over the pairs (None: none measured)."""
    return max((abs(q - 1) for p in runs for q in p[key]), default=None)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _mb(value: float | None, items_mb: float) -> str:
    return "-" if value is None else f"{value:.0f} ({value / items_mb:.1f}×)"


def _rows(pair: dict[str, Any]) -> list[list[str]]:
    """The contender's row (with its ratios to the loop) and its loop's row."""
    rows = []
    for side, ratios in (("ours", True), ("loop", False)):
        r = pair[side]
        first_s = "-" if r["first_reply_s"] is None else f"{r['first_reply_s']:.1f}"
        quarters = pair["own_quarter_ratios"] if ratios else pair["loop_quarter_ratios"]
        rows.append(
            [
                f"{pair['items']:,}",
                pair["output"],
                f"{pair['contender']} #{pair['repeat'] + 1}",
                r["client"],
                f"{pair['load'][0]:.1f} → {pair['load'][1]:.1f}",
                f"{r['seconds']:.1f}",
                f"{r['items_per_s']:.0f}",
                f"{r['cpu_ms_per_request']:.2f}",
                f"**{pair['cpu_ratio']:.2f}**" if ratios else "",
                f"{pair['rate_ratio']:.2f}" if ratios else "",
                _quarters(quarters),
                _quarters(pair["quarter_ratios"]) if ratios else "",
                _mb(r["peak_mb"], pair["items_mb"]),
                f"{first_s} s, {_mb(r['first_reply_mb'], pair['items_mb'])}",
                f"{r['endpoint_cpu_share']:.2f}",
            ]
        )
    return rows


HEADER = [
    "items",
    "output",
    "pair",
    "client",
    "1-min load, start → end",
    "wall s",
    "items/s (both running)",
    "CPU ms/request",
    "CPU/request vs loop",
    "items/s vs loop",
    "CPU/request by quarter, vs the first",
    "CPU/request vs loop by quarter of the overlap, vs the first",
    "peak RSS MB (× items file)",
    "first reply: time, peak RSS MB (× file)",
    "endpoint CPU / wall",
]


def headline(pairs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per ``items/output/contender``: median ratios over the pairs, worst quarter, memory."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for pair in pairs:
        kinds.setdefault(f"{pair['items']}/{pair['output']}/{pair['contender']}", []).append(pair)
    return {
        kind: {
            "items": runs[0]["items"],
            "output": runs[0]["output"],
            "contender": runs[0]["contender"],
            "items_mb": runs[0]["items_mb"],
            "cpu_ratio": statistics.median(p["cpu_ratio"] for p in runs),
            "rate_ratio": statistics.median(p["rate_ratio"] for p in runs),
            "worst_quarter": _worst(runs, "quarter_ratios"),
            "own_worst_quarter": _worst(runs, "own_quarter_ratios"),
            "loop_worst_quarter": _worst(runs, "loop_quarter_ratios"),
            "peak_vs_file": max(p["ours"]["peak_vs_file"] for p in runs),
            "first_reply_vs_file": max(
                (p["ours"]["first_reply_mb"] or 0.0) / p["items_mb"] for p in runs
            ),
            "pairs": len(runs),
        }
        for kind, runs in kinds.items()
    }


def _headline_rows(kinds: dict[str, dict[str, Any]]) -> list[list[str]]:
    return [
        [
            f"{k['items']:,}",
            f"{k['items_mb']:.1f}",
            k["output"],
            k["contender"],
            str(k["pairs"]),
            f"{k['cpu_ratio']:.2f}",
            f"{k['rate_ratio']:.2f}",
            _percent(k["worst_quarter"]),
            f"{_percent(k['own_worst_quarter'])} (loop {_percent(k['loop_worst_quarter'])})",
            f"{k['peak_vs_file']:.1f}×",
            f"{k['first_reply_vs_file']:.1f}×",
        ]
        for k in kinds.values()
    ]


HEADLINE = [
    "items",
    "items file MB",
    "output",
    "contender",
    "pairs",
    "CPU/request vs loop (median)",
    "items/s vs loop (median)",
    "worst quarter of CPU/request vs loop, vs the first",
    "worst quarter of own CPU/request vs the first",
    "peak RSS / file",
    "peak RSS before first reply / file",
]


def _size(spec: str) -> tuple[int, tuple[str, ...]]:
    """``10000`` (every contender) or ``100000:CLI`` (the CLI's pairs only) -> size, contenders."""
    count, _, only = spec.partition(":")
    contenders = tuple(only.split("+")) if only else CONTENDERS
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        raise SystemExit(f"unknown contender(s) {unknown} in {spec!r}; known: {CONTENDERS}")
    return int(count), contenders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metrics", type=Path, default=None)
    told = os.environ.get("BENCH_SCALE_SIZES") or ",".join(str(s) for s in SIZES)
    parser.add_argument("--sizes", default=told)
    args = parser.parse_args()
    plan = [_size(spec) for spec in args.sizes.split(",")]
    sizes = [count for count, _ in plan]
    pairs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for count, contenders in plan:
            pairs += measure_size(count, Path(folder), contenders)
    kinds = headline(pairs)
    loads = [value for pair in pairs for value in pair["load"]]
    print(
        f"Rubric {RUBRIC}, one item per request, answers of 1-2 KB, concurrency {CONCURRENCY}, "
        "each client against its own simulator (no latency, no limit), each contender at the "
        f"same time as its loop; 1-minute load average {min(loads):.1f}-{max(loads):.1f} on "
        f"{os.cpu_count()} cores over the pairs. Medians over the pairs of each kind:\n"
    )
    print(markdown_table(HEADLINE, _headline_rows(kinds)))
    print("\nEvery pair, in the order run (ratios on the contender's row):\n")
    print(markdown_table(HEADER, [row for pair in pairs for row in _rows(pair)]))
    write_metrics(args.metrics, {"sizes": sizes, "kinds": kinds, "pairs": pairs})


if __name__ == "__main__":
    main()
