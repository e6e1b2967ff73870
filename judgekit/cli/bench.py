"""Run the benchmark scripts and write their sections of ``docs/benchmarks.md`` from their output.

Each script in ``benchmarks/`` runs in its own subprocess (``python -m benchmarks.bench_<name>``
from the repository root) and prints markdown tables; the scripts of this module's own suite
also write their headline numbers as JSON (``--metrics PATH``), from which the targets are
marked met or missed. Nothing in the document is typed by hand: rerun to refresh it.

The page has one section per benchmark, each ending in a hidden ``<!-- run {...} -->`` line
with its date and metrics. Running some benchmarks rewrites only their sections and the
targets read from them; the other sections, and their rows in the targets table, are kept.

Usage: ``python3 -m judgekit.cli.bench [name ...]`` (names: see :data:`BENCHMARKS`).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit import config
from judgekit.cli.bench_targets import TARGETS, Target
from judgekit.data.atomic import atomic_write_text

BENCH_DIR = config.ROOT / "benchmarks"
#: Benchmark name -> whether the script writes ``--metrics`` JSON.
BENCHMARKS: Mapping[str, bool] = {
    "throughput": True,
    "peers": True,
    "tokens_cache": True,
    "faults": True,
    "stats": True,
    "coverage": True,
    "batch_size": True,
    "real_replies": True,
    "local": True,  # last: the slowest, and the most sensitive to other load on the machine
    "throughput_full": True,
    "scale": True,
    "report_memory": True,
}
#: Benchmarks that run only when named (about an hour each), never in a run of all of them.
ON_REQUEST: frozenset[str] = frozenset({"throughput_full", "scale", "report_memory"})
SCRIPT_TIMEOUT_S = 1200.0
#: Benchmarks that need longer than :data:`SCRIPT_TIMEOUT_S`.
TIMEOUT_S: Mapping[str, float] = {
    "throughput_full": 3 * 3600.0,
    "scale": 2 * 3600.0,
    "report_memory": 3600.0,
}


@dataclass(frozen=True)
class BenchResult:
    """One script's run: its printed output, exit code, duration and metrics."""

    name: str
    stdout: str
    stderr: str
    returncode: int
    seconds: float
    metrics: Mapping[str, Any]
    started: str = ""  # UTC minute the script started
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average at its start and end


def _docstring(name: str) -> str:
    """The script's module docstring without its first line and run instructions."""
    tree = ast.parse((BENCH_DIR / f"bench_{name}.py").read_text(encoding="utf-8"))
    text = ast.get_docstring(tree) or ""
    paragraphs = text.split("\n\n")[1:]
    return "\n\n".join(p for p in paragraphs if not p.startswith("Run from the repository root"))


def ensure_inspect_ai() -> bool:
    """Install inspect-ai with pip if it is missing (the peers benchmark compares against it)."""
    if importlib.util.find_spec("inspect_ai") is not None:
        return True
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "inspect-ai"],
        capture_output=True,
        text=True,
    )
    return done.returncode == 0


def run_script(name: str) -> BenchResult:
    """Run one benchmark script from the repository root and collect what it produced."""
    with tempfile.TemporaryDirectory() as folder:
        metrics_path = Path(folder) / "metrics.json"
        command = [sys.executable, "-m", f"benchmarks.bench_{name}"]
        if BENCHMARKS[name]:
            command += ["--metrics", str(metrics_path)]
        env = {**os.environ, "PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1"}
        date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command,
                cwd=config.ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S.get(name, SCRIPT_TIMEOUT_S),
            )
        except subprocess.TimeoutExpired:
            message = f"timed out after {TIMEOUT_S.get(name, SCRIPT_TIMEOUT_S):.0f} s"
            load = (load_before, os.getloadavg()[0])
            return BenchResult(name, "", message, -1, time.perf_counter() - started, {}, date, load)
        seconds = time.perf_counter() - started
        metrics = json.loads(metrics_path.read_text()) if metrics_path.exists() else {}
    load = (load_before, os.getloadavg()[0])
    return BenchResult(
        name, done.stdout, done.stderr, done.returncode, seconds, metrics, date, load
    )


def machine_facts() -> list[str]:
    """Cores, CPU model, Python and OS of this machine."""
    cpu = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        f"CPU: {cpu}, {os.cpu_count()} logical cores",
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        f"OS: {platform.platform()}",
    ]


_RUN_MARK = "<!-- run "  # each section's machine-readable provenance: date and metrics


@dataclass(frozen=True)
class Section:
    """One benchmark's part of the page: its markdown and the run it comes from."""

    name: str
    text: str
    date: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict)


def _heading(name: str) -> str:
    return f"## {name.replace('_', ' ')}"


def read_page(text: str) -> tuple[dict[str, Section], dict[str, str]]:
    """An existing page's sections by name, and its target rows by target text.

    A section of no benchmark (written by hand, e.g. ``## import``: a script run by hand) is
    kept under its heading, so a rerun never drops it.
    """
    names: dict[str, str | None] = {_heading(name): name for name in BENCHMARKS}
    names["## Targets"] = None  # rebuilt from TARGETS; its rows are read below
    sections: dict[str, Section] = {}
    rows: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in [*text.splitlines(), "## end"]:
        if line.startswith("## "):
            if current is not None:
                sections[current] = _section_of(current, lines)
            heading = line.strip()
            current, lines = names.get(heading, heading) if heading != "## end" else None, [line]
        elif current is None and line.startswith("| "):
            rows[line[2:].split(" | ", 1)[0]] = line
        else:
            lines.append(line)
    return sections, rows


def _section_of(name: str, lines: Sequence[str]) -> Section:
    marks = [line for line in lines if line.startswith(_RUN_MARK)]
    run = json.loads(marks[-1][len(_RUN_MARK) : -len(" -->")]) if marks else {}
    text = "\n".join(lines).strip()
    return Section(name, text, run.get("date", ""), run.get("metrics", {}))


def render_section(result: BenchResult, command: str) -> Section:
    """A benchmark's section: when and how it ran, what it is, what it printed."""
    cores = os.cpu_count() or 1
    load = f"{result.load[0]:.1f} at its start, {result.load[1]:.1f} at its end"
    busy = max(result.load) > cores
    skew = " (more than its cores: other work competed, times may be longer)" if busy else ""
    lines = [
        _heading(result.name),
        "",
        f"Run of {result.started} by `{command}`; 1-minute load average {load} "
        f"on {cores} cores{skew}.",
        "",
    ]
    if (BENCH_DIR / f"bench_{result.name}.py").exists():
        lines += [f"Script: `benchmarks/bench_{result.name}.py` ({result.seconds:.0f} s).", ""]
        described = _docstring(result.name)
        lines += [described, ""] if described else []
    lines.append(result.stdout.strip())
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-15:])
        lines += ["", f"**The script failed (exit {result.returncode}):**", "", "```", tail, "```"]
    run = {"date": result.started, "metrics": result.metrics}
    lines += ["", f"{_RUN_MARK}{json.dumps(run, sort_keys=True)} -->"]
    return Section(result.name, "\n".join(lines), result.started, result.metrics)


def _target_row(target: Target, section: Section | None, kept: Mapping[str, str]) -> str:
    """A target's row from its section's metrics; a section without any keeps the page's row."""
    if section is None or not section.metrics:
        return kept.get(target.text, f"| {target.text} | not measured | - |")
    verdict = target.check(section.metrics)
    if verdict is None:
        return f"| {target.text} | not measured | - |"
    met, measured = verdict
    return f"| {target.text} | {measured} (run of {section.date}) | {'met' if met else 'MISSED'} |"


def render(
    results: Sequence[BenchResult],
    skipped: Mapping[str, str],
    previous: str = "",
    command: str = "judgekit bench",
) -> str:
    """The page: ``previous`` (the page as it was) with the sections of this run replaced.

    Args:
        results: The scripts run now.
        skipped: Benchmarks not run now -> why (their section says so).
        previous: The existing page; its other sections and their target rows are kept.
        command: How this run was started, stated in each section it writes.
    """
    sections, old_rows = read_page(previous)
    replaced = {r.name for r in results} | set(skipped)
    kept = {text: row for text, row in old_rows.items() if not _targets_of(replaced, text)}
    sections.update({r.name: render_section(r, command) for r in results})
    for name, why in skipped.items():
        sections[name] = Section(name, f"{_heading(name)}\n\nNot run: {why}.")
    lines = [
        "# Benchmarks",
        "",
        "Written by `judgekit bench` (do not edit by hand). `judgekit bench NAME` reruns one "
        "benchmark and rewrites only its section and its targets; `make bench` reruns all. "
        "Each section states the run it comes from and the machine's load then. Machine:",
        "",
        *[f"- {fact}" for fact in machine_facts()],
        "",
        "Ratios compare contenders measured in the same run, so they hold on a noisy machine; "
        "absolute times do not transfer to other machines. The endpoint is judgekit's "
        "simulator (scores from an oracle, latency and rate limits simulated), not a real model.",
        "",
        "## Targets",
        "",
        "| target | measured | status |",
        "|---|---|---|",
        *[_target_row(t, sections.get(t.benchmark), kept) for t in TARGETS],
    ]
    for name in BENCHMARKS:
        if name in sections:
            lines += ["", sections[name].text]
    lines += [text for name, section in sections.items() if name not in BENCHMARKS
              for text in ("", section.text)]  # fmt: skip
    return "\n".join(lines) + "\n"


def _targets_of(benchmarks: set[str], text: str) -> bool:
    return any(t.text == text and t.benchmark in benchmarks for t in TARGETS)


def run_benchmarks(
    names: Sequence[str] | None = None, out: Path = config.ROOT / "docs" / "benchmarks.md"
) -> Path:
    """Run benchmark scripts and update their sections of the benchmarks document.

    Args:
        names: Benchmarks to run (keys of :data:`BENCHMARKS`); ``None`` runs all that exist
            except the :data:`ON_REQUEST` ones.
        out: The markdown document; its sections of benchmarks not run now are kept.

    Returns:
        The path written.

    Raises:
        ValueError: For an unknown benchmark name.
    """
    chosen = [n for n in BENCHMARKS if n not in ON_REQUEST] if names is None else list(names)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}")
    previous = out.read_text(encoding="utf-8") if out.exists() else ""
    skipped: dict[str, str] = {}
    results = []
    for name in chosen:
        if not (BENCH_DIR / f"bench_{name}.py").exists():
            skipped[name] = f"benchmarks/bench_{name}.py does not exist"
            continue
        if name == "peers" and not ensure_inspect_ai():
            print("could not pip install inspect-ai; its column will be missing", file=sys.stderr)
        print(f"running bench_{name} ...", file=sys.stderr, flush=True)
        results.append(run_script(name))
    command = "judgekit bench" + ("" if names is None else " " + " ".join(chosen))
    return atomic_write_text(out, render(results, skipped, previous, command))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: ``python3 -m judgekit.cli.bench [name ...]``."""
    names = list(sys.argv[1:] if argv is None else argv) or None
    try:
        path = run_benchmarks(names)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
