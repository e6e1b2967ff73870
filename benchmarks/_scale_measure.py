"""Two clients run at the same time, each against its own simulator, followed from outside.

Each client is a subprocess; its simulator prints the requests it has answered every tick, and
at each tick the client's CPU time is read from ``/proc`` (so the CLI, which cannot be
instrumented, is followed exactly like the loop), and its peak RSS so far (``VmHWM``). Its
total CPU time comes from ``wait4`` on its process: its own, not the benchmark's or the other
client's. (``wait4``'s peak RSS is not used: Linux carries the parent's over the fork.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

_TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def proc_peak_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM), in MB (None once it is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except (FileNotFoundError, ProcessLookupError):
        return None
    for line in lines:
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


@dataclass
class Trace:
    """One client's run: ticks of (seconds since start, requests answered, CPU seconds)."""

    name: str
    count: int
    samples: list[tuple[float, int, float]] = field(default_factory=list)
    first_reply_s: float | None = None
    first_reply_mb: float | None = None  # peak RSS up to the first answered request
    seconds: float = 0.0
    cpu_s: float = 0.0
    peak_mb: float = 0.0  # the largest VmHWM seen at a tick
    returncode: int = 0
    endpoint_cpu_s: float = 0.0
    answered: int = 0


class CountingSimulator:
    """``python -m benchmarks._scale_clients sim`` in its own process (counts only, no log)."""

    def __init__(self, config: Path) -> None:
        config.write_text("keep_log: false\n", encoding="utf-8")
        command = [sys.executable, "-m", "benchmarks._scale_clients", "sim", str(config)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().rsplit(" at ", 1)[1].strip()

    def follow(self, trace: Trace, pid: int, started: float, done: threading.Event) -> None:
        """Record ``trace``'s ticks until the tick after the client ``pid`` was reaped."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            answered, now = int(line), time.perf_counter() - started
            cpu, finished = proc_cpu_s(pid), done.is_set()
            if cpu is None and not finished:
                continue  # reaped a moment ago: its final CPU time is being recorded
            trace.answered = answered
            trace.samples.append((now, answered, trace.cpu_s if cpu is None else cpu))
            peak = proc_peak_mb(pid)
            trace.peak_mb = max(trace.peak_mb, peak or 0.0)
            if answered and trace.first_reply_s is None:
                trace.first_reply_s, trace.first_reply_mb = now, peak
            if finished:
                return

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _reap(
    trace: Trace,
    process: subprocess.Popen[bytes],
    sim: CountingSimulator,
    started: float,
    done: threading.Event,
) -> None:
    """Wait for the client; keep its own CPU time (``wait4``), then set ``done``."""
    sim_cpu = proc_cpu_s(sim.process.pid) or 0.0
    _, status, usage = os.wait4(process.pid, 0)
    trace.seconds = time.perf_counter() - started
    trace.endpoint_cpu_s = (proc_cpu_s(sim.process.pid) or 0.0) - sim_cpu
    process.returncode = trace.returncode = os.waitstatus_to_exitcode(status)
    trace.cpu_s = usage.ru_utime + usage.ru_stime
    done.set()


def run_together(
    clients: Sequence[tuple[str, list[str]]], count: int, folder: Path, log: Path
) -> list[Trace]:
    """Start every client at once, each against its own simulator; return their traces.

    ``clients`` are (name, command) with ``{url}`` in the command for the simulator's URL.
    """
    sims = [CountingSimulator(folder / f"simulator{i}.yaml") for i in range(len(clients))]
    traces = [Trace(name, count) for name, _ in clients]
    try:
        env = {**os.environ, "TQDM_DISABLE": "1"}
        with log.open("ab") as errors:
            started = time.perf_counter()
            processes = [
                subprocess.Popen(
                    [part.replace("{url}", sim.url) for part in command],
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env=env,
                )
                for (_, command), sim in zip(clients, sims, strict=True)
            ]
            threads = []
            for trace, process, sim in zip(traces, processes, sims, strict=True):
                done = threading.Event()
                follow = (trace, process.pid, started, done)
                threads.append(threading.Thread(target=sim.follow, args=follow))
                threads.append(
                    threading.Thread(target=_reap, args=(trace, process, sim, started, done))
                )
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        for sim in sims:
            sim.stop()
    for trace in traces:
        if trace.returncode != 0 or trace.answered < count:
            raise RuntimeError(
                f"{trace.name}: exit {trace.returncode}, {trace.answered} of {count} answered "
                f"(see {log})"
            )
    return traces


def _at(samples: Sequence[tuple[float, int, float]], column: int, by: int, value: float) -> float:
    """Linear interpolation of a sample column at ``value`` of another (monotone) column."""
    xs = np.array([s[by] for s in samples], dtype=float)
    ys = np.array([s[column] for s in samples], dtype=float)
    first = int(np.searchsorted(xs, value, side="left"))  # the first tick at or past it
    if first == 0 or first == len(xs):
        return float(ys[min(first, len(ys) - 1)])
    return float(np.interp(value, xs[first - 1 : first + 1], ys[first - 1 : first + 1]))


def quarters(trace: Trace) -> list[float]:
    """CPU ms per request in each quarter of the requests, from the first reply on."""
    samples = [s for s in trace.samples if s[1] >= 1]
    bounds = [1.0] + [trace.count * k / 4 for k in (1, 2, 3, 4)]
    cpu = [_at(samples, 2, 1, b) for b in bounds]
    return [1000 * (cpu[k + 1] - cpu[k]) / (bounds[k + 1] - bounds[k]) for k in range(4)]


def _done_s(trace: Trace) -> float:
    """Seconds from the start to the tick that saw the last request answered."""
    return next(t for t, answered, _ in trace.samples if answered >= trace.count)


def overlap_rates(traces: Sequence[Trace]) -> tuple[list[float], float]:
    """Items/s of each client while all of them were being answered (the same load for all).

    Returns the rates and the seconds they were counted over; a run too short for the clients
    to overlap gives each client's own rate from its first reply to its last, and 0 seconds.
    """
    begin = max(t.first_reply_s or 0.0 for t in traces)
    end = min(_done_s(t) for t in traces)
    if end <= begin:
        own = [(t.count - 1) / max(_done_s(t) - (t.first_reply_s or 0.0), 1e-9) for t in traces]
        return own, 0.0
    rates = [
        (_at(t.samples, 1, 0, end) - _at(t.samples, 1, 0, begin)) / (end - begin) for t in traces
    ]
    return rates, end - begin


def overlap_quarters(traces: Sequence[Trace]) -> list[list[float]]:
    """Each client's CPU ms per request in the four quarters (by time) of the span in which all
    were being answered: the same moments, so the machine's drift moves all of them alike.

    Empty lists when the clients did not overlap or a quarter saw no request answered.
    """
    begin = max(t.first_reply_s or 0.0 for t in traces)
    end = min(_done_s(t) for t in traces)
    if end <= begin:
        return [[] for _ in traces]
    bounds = [begin + (end - begin) * k / 4 for k in range(5)]
    result = []
    for t in traces:
        counts = [_at(t.samples, 1, 0, b) for b in bounds]
        cpu = [_at(t.samples, 2, 0, b) for b in bounds]
        done = [counts[k + 1] - counts[k] for k in range(4)]
        cost = [1000 * (cpu[k + 1] - cpu[k]) / done[k] for k in range(4) if done[k] > 0]
        result.append(cost if len(cost) == 4 else [])
    return result


def summary(trace: Trace, items_mb: float) -> dict[str, Any]:
    """The figures of one client's run (its rate in the overlap is added by the caller)."""
    return {
        "client": trace.name,
        "items": trace.count,
        "seconds": trace.seconds,
        "cpu_ms_per_request": 1000 * trace.cpu_s / trace.count,
        "quarters_ms": quarters(trace),
        "peak_mb": trace.peak_mb,
        "peak_vs_file": trace.peak_mb / items_mb,
        "first_reply_s": trace.first_reply_s,
        "first_reply_mb": trace.first_reply_mb,
        "endpoint_cpu_share": trace.endpoint_cpu_s / trace.seconds,
    }
