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
estimate). Items/s is measured in windows of 1,000 finished requests; flat means every full
window is within 10 % of the first. Client CPU is the client process's user + system time per
request; endpoint CPU is the simulator's over the same span. When the endpoint's CPU time is
close to the wall time (one core busy: the simulator is one Python process), the endpoint, not
the client, is the limit, and the rate ratio says only that judgekit keeps up with it.
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


def _growth(windows: Sequence[float]) -> str:
    """The costliest window's CPU per request relative to the first window's."""
    if len(windows) < 2:
        return "-"
    return f"{100 * (max(windows[1:]) / windows[0] - 1):+.1f} %"


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
            server, url = _start_simulator(Path(folder) / "simulator.yaml")
            try:
                results += [measure(contender, count, server, url) for contender in CONTENDERS]
            finally:
                server.terminate()
                server.wait(timeout=30)
    print(
        f"Rubric {RUBRIC}, one item per request, answers of 1-2 KB, concurrency {CONCURRENCY}; "
        "the simulator in its own process, no latency, no limit.\n"
    )
    header = [
        "client",
        "items",
        "wall s",
        "items/s",
        "first reply s",
        "slowest window vs first",
        "client CPU ms/request",
        "CPU/request, costliest window vs first",
        "peak MB",
        "endpoint CPU / wall",
    ]
    rows = []
    for r in results:
        flat = _flatness(r["windows"])
        rows.append(
            [
                r["contender"],
                f"{r['items']:,}",
                f"{r['seconds']:.1f}",
                f"{r['items_per_s']:.0f}",
                f"{r['first_reply_s']:.1f}",
                "-" if flat is None else f"-{100 * flat:.1f} %",
                f"{r['cpu_ms_per_request']:.2f}",
                _growth(r["cpu_windows"]),
                f"{r['peak_mb']:.0f}",
                f"{r['endpoint_cpu_share']:.2f}",
            ]
        )
    print(markdown_table(header, rows))
    metrics: dict[str, Any] = {"sizes": sizes}
    for count in sizes:
        ours, loop = (
            next(r for r in results if r["items"] == count and r["contender"] == c)
            for c in CONTENDERS
        )
        metrics[f"ratio_{count}"] = ours["items_per_s"] / loop["items_per_s"]
        metrics[f"cpu_ratio_{count}"] = loop["cpu_ms_per_request"] / ours["cpu_ms_per_request"]
        metrics[f"flat_{count}"] = _flatness(ours["windows"])
        metrics[f"peak_mb_{count}"] = ours["peak_mb"]
        metrics[f"cpu_ms_{count}"] = ours["cpu_ms_per_request"]
        metrics[f"endpoint_share_{count}"] = ours["endpoint_cpu_share"]
        metrics[f"first_reply_s_{count}"] = ours["first_reply_s"]
        metrics[f"cpu_windows_{count}"] = ours["cpu_windows"]
    ratios = ", ".join(f"{c:,}: {metrics[f'cpu_ratio_{c}']:.2f}" for c in sizes)
    print(
        f"\nLoop CPU / judgekit CPU per request (the rate ratio a client-bound run on an idle "
        f"machine would show; other load does not move it): {ratios}."
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
