"""judge_command: items file in, tidy table and seed-style ID,score file out."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.data import DataError
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.workflows.cli_judge import judge_command

TRUTH = {"101": 5.0, "102": 0.0, "103": 3.0, "104": 5.0}


@pytest.fixture
def items_csv(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(
        "ID;Question;Answer;Reference Answer\n"
        + "".join(f"{i};Kérdés {i}?;Válasz {i};Megoldás {i}\n" for i in TRUTH),
        encoding="utf-8",
    )
    return path


def test_writes_table_and_id_score_file_then_replays_offline(tmp_path, items_csv) -> None:
    out = tmp_path / "out" / "judgments.parquet"
    scores = tmp_path / "out" / "scores.csv"
    store = tmp_path / "out" / "store.sqlite"
    with run_simulator(SimulatorConfig(oracle=TRUTH)) as sim:
        table = judge_command(
            items_csv,
            "riddle_accuracy",
            "sim-judge",
            out,
            base_url=sim.base_url,
            provider="simulator",
            batch_size=3,
            store_path=store,
            id_score_csv=scores,
            progress=False,
        )
    written = pd.read_parquet(out)
    assert written["item_id"].tolist() == list(TRUTH)
    assert dict(zip(written["item_id"], written["score"], strict=True)) == TRUTH
    assert scores.read_text() == "ID,score\n101,5\n102,0\n103,3\n104,5\n"
    assert (tmp_path / "out" / "scores.status.csv").is_file()
    replay = judge_command(
        items_csv,
        "riddle_accuracy",
        "sim-judge",
        tmp_path / "replay.csv",
        base_url="http://127.0.0.1:9/v1",
        provider="simulator",
        batch_size=3,
        store_path=store,
        offline=True,
        progress=False,
    )
    pd.testing.assert_frame_equal(table, replay)


def test_several_runs_give_one_id_score_file_each(tmp_path, items_csv) -> None:
    with run_simulator(SimulatorConfig(oracle=TRUTH)) as sim:
        judge_command(
            items_csv,
            "riddle_accuracy",
            "sim-judge",
            tmp_path / "t.csv",
            base_url=sim.base_url,
            provider="simulator",
            runs=2,
            id_score_csv=tmp_path / "s.csv",
            limit=2,
            progress=False,
        )
    for run in (1, 2):
        assert (tmp_path / f"s.base.run{run}.csv").read_text() == "ID,score\n101,5\n102,0\n"


def test_bad_inputs_fail_before_writing(tmp_path, items_csv) -> None:
    with pytest.raises(ValueError, match=r"parquet or \.csv"):
        judge_command(
            items_csv,
            "riddle_accuracy",
            "m",
            tmp_path / "t.xlsx",
            provider="simulator",
            base_url="http://127.0.0.1:9/v1",
        )
    broken = tmp_path / "broken.csv"
    broken.write_text("ID;Question;Answer\n1;q;a\n", encoding="utf-8")
    with pytest.raises(DataError, match="Ref_Answer"):
        judge_command(
            broken,
            "riddle_accuracy",
            "m",
            tmp_path / "t.csv",
            provider="simulator",
            base_url="http://127.0.0.1:9/v1",
        )
    assert not (tmp_path / "t.csv").exists()
