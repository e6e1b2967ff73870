"""Scale: judgekit's cost per call stays flat as the study grows, and close to a bare SDK loop.

Run from the repository root: ``python3 -m benchmarks.bench_scale`` (``--sizes 1000,10000``, or
``BENCH_SCALE_SIZES=1000,10000`` for ``judgekit bench scale``, runs fewer).

One item per request, an endpoint with no latency and no rate limit, items with realistic text
sizes (a question, a 1-2 KB answer and its reasoning) judged with ``riddle_accuracy`` (whose
instructions are about 4 KB). The endpoint is the simulator, started as its own process
(``python -m judgekit.simulator``), so its CPU time is measured apart from the client's. For
10^3, 10^4 and 10^5 items two clients judge the same items at the same concurrency (8):

* ``judgekit``: ``judge()`` with a response store, as ``judgekit judge`` runs (every request
  recorded, rendered, parsed into the table), plain text (no schema, as the loop sends); it
  posts the rendered JSON body with the SDK's ``post`` and reads the reply's JSON;
* ``AsyncOpenAI loop``: the minimal loop a user would write: 8 workers, each renders the next
  item's messages with the same rubric and awaits ``chat.completions.create`` (the SDK's
  typed parameters and reply models); nothing stored, nothing parsed.

Each client runs in a fresh subprocess, so its peak memory (max RSS) is its own; "first
reply" is the time from the call to the first answered request (building the plan and the
estimate). Items/s is measured in windows of 1,000 finished requests. Client CPU is the client
process's user + system time per request; endpoint CPU is the simulator's over the same span.
When the endpoint's CPU time is close to the wall time (one core busy: the simulator is one
Python process), the endpoint, not the client, is the limit, and the rate ratio says only that
judgekit keeps up with it.

This machine is a 2-core virtual machine whose speed drifts by a third over minutes (the bare
loop's own windows of 1,000 and its whole-run rate move that much from one run to the next), so
two things are measured to see through it:

* the rate ratio is the median over repeated runs taken in turn (judgekit then the loop, then
  the loop then judgekit, ...; nine at 10^3 items, whose runs last about 3 s, five at 10^4,
  three at 10^5, or ``BENCH_SCALE_REPEATS``), each run paired with the one beside it;
* flat means no trend as the study grows: the least-squares line through a run's window rates
  loses at most 10 % from its first window to its last (the median over the runs at a size;
  every run's is shown). At 10^4 items a run is 10 windows over about 30 s, short enough for
  the machine's drift to tilt its line either way; at 10^5 it is 100 windows over about five
  minutes. The slowest single window against the first is shown beside it, for both clients:
  on this machine it moves with the machine's drift as much for the bare loop as for judgekit.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import markdown_table, write_metrics
from judgekit.rubrics import load_rubric
from judgekit.types import ChatReply, ChatRequest, Item

SIZES = (1_000, 10_000, 100_000)
CONCURRENCY = 8
WINDOW = 1_000
RUBRIC = "riddle_accuracy"
CONTENDERS = ("judgekit", "AsyncOpenAI loop")


def scale_items(count: int) -> list[Item]:
    """``count`` items with a riddle-sized question and a 1-2 KB answer and reasoning."""
    sentence = "A válasz indoklása egy mondatban, ahogy egy modell írná a talány megoldásához. "
    items = []
    for i in range(count):
        answer = f"Válasz {i}: " + sentence * (12 + i % 12)  # 1.0-2.0 KB in UTF-8
        items.append(
            Item(
                f"S{i:06d}",
                {
                    "Question": f"Melyik magyar találmány forog hat színes oldalon? ({i})",
                    "Answer": answer,
                    "Ref_Answer": "Rubik-kocka",
                },
            )
        )
    return items


def _windows(finished: Sequence[float], started: float) -> list[float]:
    """Items/s in each full window of :data:`WINDOW` finished requests."""
    stamps = sorted(finished)
    rates, last = [], started
    for end in range(WINDOW, len(stamps) + 1, WINDOW):
        rates.append(WINDOW / max(stamps[end - 1] - last, 1e-9))
        last = stamps[end - 1]
    return rates


def _cpu_windows(cpu: Sequence[float]) -> list[float]:
    """Client CPU ms per request in each window after the first (other load does not move it).

    ``cpu`` holds the process's CPU time at every :data:`WINDOW`-th finished request.
    """
    return [1000 * (b - a) / WINDOW for a, b in itertools.pairwise(cpu)]


def _finished(finished: list[float], cpu: list[float]) -> None:
    """Note a finished request (and the CPU time at every WINDOW-th: it is a system call)."""
    finished.append(time.perf_counter())
    if len(finished) % WINDOW == 0:
        cpu.append(time.process_time())


def _run_judgekit(
    items: list[Item], base_url: str, folder: Path, finished: list[float], cpu: list[float]
) -> None:
    from judgekit.engine import OpenAIJudge, judge

    class Timed(OpenAIJudge):
        async def complete(self, request: ChatRequest) -> ChatReply:
            reply = await super().complete(request)
            _finished(finished, cpu)
            return reply

    client = Timed(
        "sim-judge", base_url=base_url, provider="simulator", max_concurrency=CONCURRENCY
    )
    table = judge(
        items,
        load_rubric(RUBRIC),
        client,
        batch_size=1,
        structured=False,  # the loop's request: the same messages, no schema
        store=folder / "responses.sqlite",
        progress=False,
    )
    if len(table) != len(items) or (table["status"] == "error").any():
        raise SystemExit(f"judgekit: {len(table)} rows, {(table['status'] == 'error').sum()} error")


def _run_loop(items: list[Item], base_url: str, finished: list[float], cpu: list[float]) -> None:
    import openai

    rubric = load_rubric(RUBRIC)

    async def main() -> None:
        client = openai.AsyncOpenAI(api_key="not-needed", base_url=base_url, max_retries=0)
        pending = iter(items)

        async def worker() -> None:
            for item in pending:
                messages = rubric.render([item])
                await client.chat.completions.create(
                    model="sim-judge",
                    messages=messages,  # type: ignore[arg-type]
                    temperature=0.0,
                    seed=0,
                )
                _finished(finished, cpu)

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        await client.close()

    asyncio.run(main())


def measure_one(contender: str, count: int, base_url: str) -> dict[str, Any]:
    """One client judging ``count`` items (run in its own process; see :func:`main`)."""
    import openai  # noqa: F401  (imported before the clock starts, for both contenders)

    import judgekit.engine  # noqa: F401

    items = scale_items(count)
    finished: list[float] = []
    cpu_stamps: list[float] = []
    cpu0, started = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        if contender == "judgekit":
            _run_judgekit(items, base_url, Path(folder), finished, cpu_stamps)
        else:
            _run_loop(items, base_url, finished, cpu_stamps)
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu0
    first_reply = min(finished) - started if finished else 0.0
    return {
        "contender": contender,
        "items": count,
        "seconds": seconds,
        "items_per_s": count / seconds,
        "first_reply_s": first_reply,
        "windows": _windows(finished, started + first_reply),
        "cpu_windows": _cpu_windows(cpu_stamps),
        "cpu_ms_per_request": 1000 * cpu / count,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(contender: str, count: int, server: subprocess.Popen[str], url: str) -> dict[str, Any]:
    """Run one client in a subprocess against the running simulator; add the endpoint's CPU."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        before = _cpu_s(server.pid)
        command = [sys.executable, "-m", "benchmarks.bench_scale", "--one", contender]
        command += ["--items", str(count), "--base-url", url, "--out", out.name]
        subprocess.run(command, check=True, env={**os.environ, "TQDM_DISABLE": "1"})
        result: dict[str, Any] = json.loads(Path(out.name).read_text())
    result["endpoint_cpu_share"] = (_cpu_s(server.pid) - before) / result["seconds"]
    return result


def _start_simulator(config: Path) -> tuple[subprocess.Popen[str], str]:
    """The simulator in its own process, keeping counts only (``keep_log: false``).

    Its log of every request body would grow to gigabytes over the 2 x 10^5 requests of the
    largest size, and slow the endpoint down as it grows.
    """
    config.write_text("keep_log: false\n", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "judgekit.simulator", "--config", str(config)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    return server, line.rsplit(" at ", 1)[1].strip()


def _flatness(windows: Sequence[float]) -> float | None:
    """Largest relative shortfall of a window's rate below the first window's (None: < 2)."""
    if len(windows) < 2:
        return None
    return max(0.0, max(1 - rate / windows[0] for rate in windows[1:]))


def _trend(windows: Sequence[float]) -> float | None:
    """Relative change of the least-squares line through the windows, first to last (None: < 3).

    With rates y_0..y_{k-1} and the line a + b i fitted to them, the change is
    (a + b (k - 1)) / a - 1: negative when the rate falls as the study grows.
    """
    if len(windows) < 3:
        return None
    slope, intercept = np.polyfit(np.arange(len(windows)), np.asarray(windows), 1)
    return float(slope * (len(windows) - 1) / intercept)


def _growth(windows: Sequence[float]) -> str:
    """The costliest window's CPU per request relative to the first window's."""
    if len(windows) < 2:
        return "-"
    return f"{100 * (max(windows[1:]) / windows[0] - 1):+.1f} %"


def repeats(count: int) -> int:
    """Runs of each client at ``count`` items (``BENCH_SCALE_REPEATS`` overrides)."""
    told = os.environ.get("BENCH_SCALE_REPEATS")
    if told:
        return int(told)
    return 9 if count <= 1_000 else 5 if count <= 10_000 else 3


def measure_size(count: int, folder: Path) -> list[dict[str, Any]]:
    """Both clients ``repeats(count)`` times in turn, against one simulator started for them."""
    server, url = _start_simulator(folder / "simulator.yaml")
    try:
        results = []
        for repeat in range(repeats(count)):
            order = CONTENDERS if repeat % 2 == 0 else CONTENDERS[::-1]
            for contender in order:
                results.append({**measure(contender, count, server, url), "repeat": repeat})
        return results
    finally:
        server.terminate()
        server.wait(timeout=30)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f} %"


def _row(r: dict[str, Any]) -> list[str]:
    flat = _flatness(r["windows"])
    return [
        r["contender"],
        f"{r['items']:,}",
        str(r["repeat"] + 1),
        f"{r['seconds']:.1f}",
        f"{r['items_per_s']:.0f}",
        f"{r['first_reply_s']:.1f}",
        _percent(_trend(r["windows"])),
        "-" if flat is None else f"-{100 * flat:.1f} %",
        f"{r['cpu_ms_per_request']:.2f}",
        _growth(r["cpu_windows"]),
        f"{r['peak_mb']:.0f}",
        f"{r['endpoint_cpu_share']:.2f}",
    ]


HEADER = [
    "client",
    "items",
    "run",
    "wall s",
    "items/s",
    "first reply s",
    "items/s trend, first to last window",
    "slowest window vs first",
    "client CPU ms/request",
    "CPU/request, costliest window vs first",
    "peak MB",
    "endpoint CPU / wall",
]


def size_metrics(count: int, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The headline numbers at one size: medians over the runs (each run's too), peak memory.

    The slowest-window figures are the worst run's, for judgekit and for the loop.
    """
    at = [r for r in results if r["items"] == count]
    ours = [r for r in at if r["contender"] == CONTENDERS[0]]
    loops = [r for r in at if r["contender"] == CONTENDERS[1]]
    pairs = list(zip(ours, loops, strict=True))  # the same repeat: run one beside the other
    ratios = [a["items_per_s"] / b["items_per_s"] for a, b in pairs]
    cpu_ratios = [b["cpu_ms_per_request"] / a["cpu_ms_per_request"] for a, b in pairs]
    trends = [t for t in (_trend(r["windows"]) for r in ours) if t is not None]
    loop_trends = [t for t in (_trend(r["windows"]) for r in loops) if t is not None]
    flats = [f for f in (_flatness(r["windows"]) for r in ours) if f is not None]
    loop_flats = [f for f in (_flatness(r["windows"]) for r in loops) if f is not None]
    return {
        f"ratio_{count}": float(np.median(ratios)),
        f"ratios_{count}": ratios,
        f"cpu_ratio_{count}": float(np.median(cpu_ratios)),
        f"trend_{count}": float(np.median(trends)) if trends else None,
        f"trends_{count}": trends,
        f"loop_trend_{count}": float(np.median(loop_trends)) if loop_trends else None,
        f"flat_{count}": max(flats) if flats else None,
        f"loop_flat_{count}": max(loop_flats) if loop_flats else None,
        f"peak_mb_{count}": max(r["peak_mb"] for r in ours),
        f"cpu_ms_{count}": float(np.median([r["cpu_ms_per_request"] for r in ours])),
        f"endpoint_share_{count}": max(r["endpoint_cpu_share"] for r in ours),
        f"first_reply_s_{count}": max(r["first_reply_s"] for r in ours),
        f"cpu_windows_{count}": ours[0]["cpu_windows"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metrics", type=Path, default=None)
    sizes = os.environ.get("BENCH_SCALE_SIZES") or ",".join(str(s) for s in SIZES)
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--one", choices=CONTENDERS, default=None)
    parser.add_argument("--items", type=int, default=0)
    parser.add_argument("--base-url", default="")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.one is not None:
        result = measure_one(args.one, args.items, args.base_url)
        args.out.write_text(json.dumps(result))
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for count in sizes:
            results += measure_size(count, Path(folder))
    print(
        f"Rubric {RUBRIC}, one item per request, answers of 1-2 KB, concurrency {CONCURRENCY}; "
        "the simulator in its own process, no latency, no limit. Runs in the order taken.\n"
    )
    print(markdown_table(HEADER, [_row(r) for r in results]))
    metrics: dict[str, Any] = {"sizes": sizes}
    for count in sizes:
        metrics.update(size_metrics(count, results))
    print("\njudgekit / loop items/s, median of the runs taken in turn (each run's ratio):")
    for count in sizes:
        each = ", ".join(f"{r:.2f}" for r in metrics[f"ratios_{count}"])
        print(f"- {count:,} items: {metrics[f'ratio_{count}']:.2f} ({each})")
    ratios = ", ".join(f"{c:,}: {metrics[f'cpu_ratio_{c}']:.2f}" for c in sizes)
    print(
        f"\nLoop CPU / judgekit CPU per request, median (the rate ratio a client-bound run "
        f"would show): {ratios}."
    )
    bound = [c for c in sizes if metrics[f"endpoint_share_{c}"] >= 0.85]
    if bound:
        print(
            f"\nAt {', '.join(f'{c:,}' for c in bound)} items the endpoint used 85 % or more of "
            "one core over the run: it, not judgekit, is the limit there."
        )
    write_metrics(args.metrics, metrics)


if __name__ == "__main__":
    main()
