"""Run the benchmark scripts and write ``docs/benchmarks.md`` from what they print.

Each script in ``benchmarks/`` runs in its own subprocess (``python -m benchmarks.bench_<name>``
from the repository root) and prints markdown tables; the scripts of this module's own suite
also write their headline numbers as JSON (``--metrics PATH``), from which the targets are
marked met or missed. Nothing in the document is typed by hand: rerun to refresh it.

Usage: ``python3 -m judgekit.workflows.bench [name ...]`` (names: see :data:`BENCHMARKS`).
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit import config
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
    "local": True,  # last: the slowest, and the most sensitive to other load on the machine
}
SCRIPT_TIMEOUT_S = 1200.0


@dataclass(frozen=True)
class BenchResult:
    """One script's run: its printed output, exit code, duration and metrics."""

    name: str
    stdout: str
    stderr: str
    returncode: int
    seconds: float
    metrics: Mapping[str, Any]


@dataclass(frozen=True)
class Target:
    """A stated goal and how to read it from the metrics (None = not measured)."""

    benchmark: str
    text: str
    check: Callable[[Mapping[str, Any]], tuple[bool, str] | None]


def _throughput(key: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str]:
        value, lost = m[key], m["lost_rows"]
        return value >= 0.95 and lost == 0, f"{value:.3f} × limit, {lost} lost rows"

    return check


def _request_limit(
    key: str, floor: float
) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str] | None:
        if key not in m:
            return None
        value, errors = m[key], m["request_limit_error_rows"]
        return value >= floor and errors == 0, f"{value:.3f} × limit, {errors} error rows"

    return check


def _faster(key: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str] | None:
        if m.get(key) is None:
            return None
        ratio = m[key] / m["judgekit_s"]
        return ratio > 1.0, f"{m['judgekit_s']:.1f} s vs {m[key]:.1f} s ({ratio:.1f}× faster)"

    return check


def _tokens(rubric: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str]:
        ratio = m["token_ratio"][rubric]
        return ratio >= 20.0, f"{ratio:.1f}× fewer"

    return check


def _coverage(m: Mapping[str, Any]) -> tuple[bool, str]:
    cluster = m["coverage_cluster"]
    naive = max(m["coverage_item_bootstrap"], m["coverage_analytic"])
    return (
        0.92 <= cluster <= 0.97 and naive < 0.90,
        f"cluster bootstrap {cluster:.3f}; naive {m['coverage_item_bootstrap']:.3f} (item "
        f"bootstrap), {m['coverage_analytic']:.3f} (analytic); {m['studies']} studies",
    )


TARGETS: tuple[Target, ...] = (
    Target(
        "throughput",
        "Throughput ≥ 0.95 × the limit's maximum, 0 lost rows (default client)",
        _throughput("efficiency_default"),
    ),
    Target(
        "throughput",
        "Throughput ≥ 0.95 × the limit's maximum, 0 lost rows (client given the limits)",
        _throughput("efficiency_told"),
    ),
    Target(
        "throughput",
        "30 requests / window, no latency, not told the limit: ≥ 0.9 × limit, 0 error rows",
        _request_limit("request_limit_default", 0.9),
    ),
    Target(
        "throughput",
        "30 requests / window, no latency, told the limit: ≥ 0.95 × limit, 0 error rows",
        _request_limit("request_limit_told", 0.95),
    ),
    Target("peers", "judgekit faster than the sequential loop", _faster("sequential_s")),
    Target("peers", "judgekit faster than inspect_ai", _faster("inspect_s")),
    Target(
        "tokens_cache",
        "≥ 20× fewer prompt tokens per row with 60-row batches (accuracy)",
        _tokens("riddle_accuracy"),
    ),
    Target(
        "tokens_cache",
        "≥ 20× fewer prompt tokens per row with 60-row batches (reasoning)",
        _tokens("riddle_reasoning"),
    ),
    Target(
        "tokens_cache",
        "0 API calls when a finished study is re-run",
        lambda m: (
            m["rerun_http"] == 0 and m["rerun_api_calls"] == 0,
            f"{m['rerun_http']} HTTP requests, {m['rerun_fraction']:.3f} × first-run time",
        ),
    ),
    Target(
        "stats",
        "Quadratic kappa, 2,000-replicate cluster bootstrap, 100,000 pairs in 10,000 clusters "
        "< 1 s",
        lambda m: (
            m["cluster_kappa_s"] < 1.0,
            f"{m['cluster_kappa_s']:.2f} s (item bootstrap {m['item_kappa_s']:.3f} s)",
        ),
    ),
    Target(
        "coverage",
        "95 % cluster-bootstrap kappa intervals cover 92-97 % under a strong cluster effect; "
        "naive ones < 90 %",
        _coverage,
    ),
    Target(
        "faults",
        "No row lost and no score invented at up to 50 % faulty calls",
        lambda m: (
            m["faults_lost"] == 0 and m["faults_wrong"] == 0 and m["faults_unexplained"] == 0,
            f"{m['faults_lost']} lost, {m['faults_wrong']} wrong ok scores, "
            f"{m['faults_unexplained']} flagged rows with a score or no reason, reply or error",
        ),
    ),
    Target(
        "faults",
        "Kill -9 and resume: identical table, no stored reply requested again",
        lambda m: (
            m["kill_not_identical"] == 0 and m["kill_stored_rerequested"] == 0,
            f"{m['kill_points']} kill points: {m['kill_not_identical']} tables differ, "
            f"{m['kill_stored_rerequested']} stored replies re-requested, "
            f"{m['kill_in_flight_repeats']} in-flight requests paid twice",
        ),
    ),
)


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
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command,
                cwd=config.ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=SCRIPT_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            message = f"timed out after {SCRIPT_TIMEOUT_S:.0f} s"
            return BenchResult(name, "", message, -1, time.perf_counter() - started, {})
        seconds = time.perf_counter() - started
        metrics = json.loads(metrics_path.read_text()) if metrics_path.exists() else {}
    return BenchResult(name, done.stdout, done.stderr, done.returncode, seconds, metrics)


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


def render(results: Sequence[BenchResult], skipped: Mapping[str, str]) -> str:
    """The whole markdown document."""
    by_name = {r.name: r for r in results}
    lines = [
        "# Benchmarks",
        "",
        "Written by `python3 -m judgekit.workflows.bench` (do not edit by hand; rerun it to "
        "refresh). "
        "Every number below was measured in the run of "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on this machine:",
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
    ]
    for target in TARGETS:
        result = by_name.get(target.benchmark)
        verdict = target.check(result.metrics) if result and result.metrics else None
        if verdict is None:
            lines.append(f"| {target.text} | not measured | - |")
        else:
            met, measured = verdict
            lines.append(f"| {target.text} | {measured} | {'met' if met else 'MISSED'} |")
    for result in results:
        lines += ["", f"## {result.name.replace('_', ' ')}", ""]
        if (BENCH_DIR / f"bench_{result.name}.py").exists():
            lines += [f"Script: `benchmarks/bench_{result.name}.py` ({result.seconds:.0f} s).", ""]
            described = _docstring(result.name)
            lines += [described, ""] if described else []
        lines.append(result.stdout.strip())
        if result.returncode != 0:
            tail = "\n".join(result.stderr.strip().splitlines()[-15:])
            lines += [
                "",
                f"**The script failed (exit {result.returncode}):**",
                "",
                "```",
                tail,
                "```",
            ]
    for name, why in skipped.items():
        lines += ["", f"## {name.replace('_', ' ')}", "", f"Not run: {why}."]
    return "\n".join(lines) + "\n"


def run_benchmarks(
    names: Sequence[str] | None = None, out: Path = config.ROOT / "docs" / "benchmarks.md"
) -> Path:
    """Run the benchmark scripts and (re)write the benchmarks document.

    Args:
        names: Benchmarks to run (keys of :data:`BENCHMARKS`); ``None`` runs all that exist.
        out: Where to write the markdown document.

    Returns:
        The path written.

    Raises:
        ValueError: For an unknown benchmark name.
    """
    chosen = list(BENCHMARKS) if names is None else list(names)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}")
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
    return atomic_write_text(out, render(results, skipped))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: ``python3 -m judgekit.workflows.bench [name ...]``."""
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
