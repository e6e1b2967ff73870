"""The benchmarks document: targets are marked from measured numbers, never by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cli.bench import BenchResult, render, run_benchmarks

PEERS_TABLE = "| contender | wall s |\n|---|---|\n| judgekit | 1.4 |"


def _result(name: str, metrics: dict[str, object], returncode: int = 0) -> BenchResult:
    return BenchResult(name, PEERS_TABLE, "Traceback: boom", returncode, 3.0, metrics)


def _status_of(document: str, target: str) -> str:
    line = next(line for line in document.splitlines() if line.startswith(f"| {target}"))
    return line.rsplit("|", 2)[-2].strip()


def test_targets_are_marked_from_the_metrics() -> None:
    tokens = {
        "token_ratio": {"riddle_accuracy": 20.5, "riddle_reasoning": 11.5},
        "rerun_http": 0,
        "rerun_api_calls": 0,
        "rerun_fraction": 0.08,
    }
    peers = {"judgekit_s": 2.0, "sequential_s": 13.0, "inspect_s": None}
    document = render([_result("tokens_cache", tokens), _result("peers", peers)], {})
    assert (
        _status_of(document, "≥ 20× fewer prompt tokens per row with 60-row batches (accuracy)")
        == "met"
    )
    reasoning = "≥ 20× fewer prompt tokens per row with 60-row batches (reasoning)"
    assert _status_of(document, reasoning) == "MISSED"
    assert "11.5× fewer" in document
    assert _status_of(document, "0 API calls when a finished study is re-run") == "met"
    assert _status_of(document, "judgekit faster than the sequential loop") == "met"
    assert "| judgekit faster than inspect_ai | not measured | - |" in document
    assert (
        "| Throughput ≥ 0.95 × the limit's maximum, 0 lost rows (default client) | not measured"
        in document
    )
    assert PEERS_TABLE in document


def test_a_failed_script_is_shown_with_its_error() -> None:
    document = render([_result("faults", {}, returncode=1)], {"local": "no model"})
    assert "**The script failed (exit 1):**" in document and "Traceback: boom" in document
    assert "Not run: no model." in document


def test_unknown_benchmark_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    with pytest.raises(ValueError, match="unknown benchmark"):
        run_benchmarks(["throughput", "nonsense"], out=out)
    assert not out.exists()


THROUGHPUT = {
    "efficiency_told": 0.96,
    "efficiency_default": 0.97,
    "lost_rows": 0,
    "request_limit_told": 0.97,
    "request_limit_default": 0.91,
    "request_limit_error_rows": 0,
}
FAULTS = {
    "faults_lost": 0,
    "faults_wrong": 0,
    "faults_unexplained": 0,
    "kill_points": 3,
    "kill_not_identical": 0,
    "kill_stored_rerequested": 0,
    "kill_in_flight_repeats": 1,
}


def _dated(name: str, metrics: dict[str, object], table: str, started: str) -> BenchResult:
    return BenchResult(name, table, "", 0, 3.0, metrics, started, (1.5, 2.5))


def _section(document: str, heading: str) -> str:
    return document.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_one_benchmark_rewrites_only_its_section_and_its_targets() -> None:
    first = render(
        [
            _dated("throughput", THROUGHPUT, "| old throughput |", "2026-01-01 00:00 UTC"),
            _dated("faults", FAULTS, "| old faults |", "2026-01-01 00:00 UTC"),
        ],
        {},
    )
    slower = {**THROUGHPUT, "request_limit_default": 0.5}
    second = render(
        [_dated("throughput", slower, "| new throughput |", "2026-02-02 00:00 UTC")],
        {},
        previous=first,
        command="judgekit bench throughput",
    )
    assert _section(second, "## faults") == _section(first, "## faults")
    assert "| old faults |" in second and "| old throughput |" not in second
    throughput = _section(second, "## throughput")
    assert "Run of 2026-02-02 00:00 UTC by `judgekit bench throughput`" in throughput
    assert "load average 1.5 at its start, 2.5 at its end on " in throughput
    told = "30 requests / window, no latency, told the limit: ≥ 0.95 × limit, 0 error rows"
    default = told.replace("told the limit: ≥ 0.95", "not told the limit: ≥ 0.9")
    assert _status_of(second, told) == "met" and _status_of(second, default) == "MISSED"
    assert "0.500 × limit, 0 error rows (run of 2026-02-02 00:00 UTC)" in second
    kill = "Kill -9 and resume: identical table, no stored reply requested again"
    assert _status_of(second, kill) == "met"  # read from the kept section's metrics
    assert "(run of 2026-01-01 00:00 UTC)" in second
    assert second.index("## throughput") < second.index("## faults")  # the page's order


def test_a_section_without_metrics_keeps_its_target_row() -> None:
    """A page written before sections carried their metrics keeps its measured rows."""
    kill = "Kill -9 and resume: identical table, no stored reply requested again"
    handmade_row = f"| {kill} | 10 kill points (run of 2025) | met |"
    previous = f"# Benchmarks\n\n## Targets\n\n{handmade_row}\n\n## faults\n\nold text\n"
    document = render([_dated("throughput", THROUGHPUT, "| t |", "2026-03-03 00:00 UTC")], {},
                      previous=previous)  # fmt: skip
    assert handmade_row in document and "\n## faults\n\nold text\n" in document
    rerun = render([_dated("faults", {}, "| f |", "2026-03-03 00:00 UTC")], {}, previous=document)
    assert f"| {kill} | not measured | - |" in rerun  # rerun without metrics: not the old row


def test_the_hour_long_benchmark_runs_only_when_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.cli import bench

    ran: list[str] = []
    monkeypatch.setattr(bench, "run_script", lambda name: ran.append(name) or _result(name, {}))
    monkeypatch.setattr(bench, "ensure_inspect_ai", lambda: True)
    bench.run_benchmarks(None, out=tmp_path / "all.md")
    assert "throughput_full" not in ran and "throughput" in ran
    ran.clear()
    full = {"request_limit_told": 0.96, "request_limit_default": 0.93}
    full |= {"request_limit_error_rows": 0, "request_limit_wrong_scores": 0}
    monkeypatch.setattr(bench, "run_script", lambda name: ran.append(name) or _result(name, full))
    document = bench.run_benchmarks(["throughput_full"], out=tmp_path / "full.md").read_text()
    assert ran == ["throughput_full"]
    target = "30 requests / 10 s, 10,000 items, told the limit: ≥ 0.95 × limit, 0 error rows"
    assert _status_of(document, target) == "met"


def test_a_section_written_by_hand_survives_a_rerun() -> None:
    """A script run by hand (bench_import, bench_items_memory) keeps its section on the page."""
    first = render([_dated("faults", FAULTS, "| old faults |", "2026-01-01 00:00 UTC")], {})
    by_hand = "## items memory\n\nMeasured by hand: 353 MiB.\n"
    second = render(
        [_dated("faults", FAULTS, "| new faults |", "2026-02-02 00:00 UTC")],
        {},
        previous=first + "\n" + by_hand,
    )
    assert "Measured by hand: 353 MiB." in second and "| new faults |" in second
    assert render([], {}, previous=second) == second  # a page read and written back is the same
