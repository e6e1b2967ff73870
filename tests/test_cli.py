"""The typer CLI wires the package functions together (real simulator over HTTP)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.cli.main import main
from judgekit.simulator import SimulatorConfig, run_simulator

DEMO = config.DATA_DIR / "demo" / "riddles_demo.csv"


def test_rubrics_lists_every_packaged_rubric_with_its_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rubrics"]) == 0
    output = capsys.readouterr().out
    assert "riddle_accuracy    scale 0,3,5  id_score_lines  reads Question, Answer, Ref_Answer" in (
        output
    )
    assert "factual_accuracy   scale 1,2,3,4  score_line  reads Question, Answer (optional: " in (
        output
    )
    assert "labels Human_Factual" in output
    pairwise = output.split("pairwise (two answers compared, in both orders):\n", 1)[1]
    assert "mtbench_pairwise   scale -1,0,1  pair_mtbench  reads Question, Answer_A, Answer_B" in (
        pairwise
    )
    assert "riddle_accuracy" not in pairwise


def test_judge_writes_the_tidy_table_and_the_seed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    labels = pd.read_csv(DEMO, sep=";", dtype={"ID": str})
    oracle = dict(zip(labels["ID"], labels["Human_Accuracy"], strict=True))
    with run_simulator(SimulatorConfig(oracle=oracle)) as sim:
        args = ["judge", str(DEMO), "--rubric", "riddle_accuracy", "--model", "sim-judge"]
        args += ["--base-url", sim.base_url, "--output", str(tmp_path / "out.parquet")]
        args += ["--id-score-csv", str(tmp_path / "scores.csv"), "--batch-size", "10"]
        args += ["--mode", "conversation", "--shuffle-seed", "3"]
        assert main(args) == 0, capsys.readouterr().err
    table = pd.read_parquet(tmp_path / "out.parquet")
    assert (table["status"] == "ok").all() and len(table) == len(labels)
    assert dict(zip(table["item_id"], table["score"], strict=True)) == oracle
    written = pd.read_csv(tmp_path / "scores.csv", dtype={"ID": str})
    assert dict(zip(written["ID"], written["score"], strict=True)) == oracle
    assert table["conversation"].notna().all()


def test_bad_items_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "items.csv"
    bad.write_text("ID;Question;Answer\n1;q;a\n", encoding="utf-8")
    code = main(
        ["judge", str(bad), "--rubric", "riddle_accuracy", "--output", str(tmp_path / "o.csv")]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {bad}: ") and "Ref_Answer" in error
    assert error.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_version_help_and_rubrics_show(capsys: pytest.CaptureFixture[str]) -> None:
    from judgekit import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"judgekit {__version__}\n"
    assert main(["judge", "-h"]) == 0
    usage = capsys.readouterr().out
    for flag in ("--study", "--dry-run", "--temperature", "--max-tokens", "--timeout"):
        assert flag in usage
    assert "judgekit." not in usage, "help text names no internal module"
    assert main(["rubrics", "show", "factual_accuracy", "--variant", "paraphrase_2"]) == 0
    shown = capsys.readouterr().out
    assert "optional columns: Ref_Answer" in shown and "human label column: Human_Factual" in shown
    assert "<Ref_Answer>&lt;Ref_Answer of the item&gt;</Ref_Answer>" in shown


def test_the_checkout_command_says_in_one_line_that_it_needs_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only `bench` needs a checkout (benchmarks/, docs/benchmarks.md); the wheel carries the
    # notebooks and parameter sets the others run (tests/test_wheel.py).
    monkeypatch.setattr(config, "ROOT", tmp_path / "not-a-checkout")
    assert main(["bench"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "needs the project checkout" in error
