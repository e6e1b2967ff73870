"""The benchmarks document: targets are marked from measured numbers, never by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.workflows.bench import BenchResult, render, run_benchmarks

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
