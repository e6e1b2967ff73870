"""The judge command as functions: items file in, tidy table and seed-style ID,score file out."""

from __future__ import annotations

import http.server
import io
import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from json_endpoint import JsonEndpoint

from judgekit.cli.main import main
from judgekit.data import DataError
from judgekit.engine import JudgeOptions
from judgekit.judging.clients import EndpointOptions
from judgekit.judging.command import JudgeCommand
from judgekit.judging.judge import execute
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.errors import RunFailed
from judgekit.types import UsageError

TRUTH = {"101": 5.0, "102": 0.0, "103": 3.0, "104": 5.0}


@pytest.fixture
def items_csv(tmp_path: Path) -> Path:
    path = tmp_path / "answers.csv"
    path.write_text(
        "ID;Question;Answer;Reference Answer\n"
        + "".join(f"{i};Kérdés {i}?;Válasz {i};Megoldás {i}\n" for i in TRUTH),
        encoding="utf-8",
    )
    return path


def simulator(url: str) -> EndpointOptions:
    return EndpointOptions("sim-judge", base_url=url, provider="simulator")


def command(items: Path, output: Path, url: str, **judging: object) -> JudgeCommand:
    return JudgeCommand(
        items,
        "riddle_accuracy",
        output,
        endpoint=simulator(url),
        judging=JudgeOptions(
            progress=False,
            **judging,  # type: ignore[arg-type]
        ),
    )


def test_writes_table_and_id_score_file_then_replays_offline(
    tmp_path: Path, items_csv: Path
) -> None:
    out = tmp_path / "out" / "judgments.parquet"
    scores = tmp_path / "out" / "scores.csv"
    store = tmp_path / "out" / "store.sqlite"
    err = io.StringIO()
    with run_simulator(SimulatorConfig(oracle=TRUTH)) as sim:
        first = command(items_csv, out, sim.base_url, batch_size=3, store=store)
        execute(JudgeCommand(**{**first.__dict__, "id_score_csv": scores}), err=err)
    written = pd.read_parquet(out)
    assert written["item_id"].tolist() == list(TRUTH)
    assert dict(zip(written["item_id"], written["score"], strict=True)) == TRUTH
    assert scores.read_text() == "ID,score\n101,5\n102,0\n103,3\n104,5\n"
    assert (tmp_path / "out" / "scores.status.csv").is_file()
    assert "ok             4" in err.getvalue() and "calls made 2, replayed 0" in err.getvalue()
    replay = tmp_path / "replay.csv"
    offline = command(items_csv, replay, "http://127.0.0.1:9/v1", batch_size=3, store=store)
    execute(JudgeCommand(**{**offline.__dict__, "judging": offline.judging.updated(offline=True)}))
    assert pd.read_csv(replay, dtype={"item_id": str})["score"].tolist() == list(TRUTH.values())


def test_without_a_store_the_replies_wait_beside_the_output_then_go(
    tmp_path: Path, items_csv: Path
) -> None:
    with run_simulator(SimulatorConfig(oracle=TRUTH)) as sim:
        execute(command(items_csv, tmp_path / "t.csv", sim.base_url, runs=2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "t.csv"]


def test_rows_that_end_error_fail_the_run_after_writing(tmp_path: Path, items_csv: Path) -> None:
    config = SimulatorConfig(oracle=TRUTH, error_500_rate=1.0)
    err = io.StringIO()
    with run_simulator(config) as sim, pytest.raises(RunFailed, match=r"4 of 4 rows ended 'error'"):
        failing = command(items_csv, tmp_path / "t.csv", sim.base_url, max_reasks=0)
        no_retry = EndpointOptions("sim-judge", sim.base_url, "simulator", max_retries=0)
        execute(JudgeCommand(**{**failing.__dict__, "endpoint": no_retry}), err=err)
    assert (pd.read_csv(tmp_path / "t.csv")["status"] == "error").all()
    assert "error          4" in err.getvalue()


def test_bad_inputs_fail_before_writing(tmp_path: Path, items_csv: Path) -> None:
    with pytest.raises(UsageError, match=r"must end in \.csv, \.tsv, \.parquet"):
        execute(command(items_csv, tmp_path / "t.xlsx", "http://127.0.0.1:9/v1"))
    broken = tmp_path / "broken.csv"
    broken.write_text("ID;Question;Answer\n1;q;a\n", encoding="utf-8")
    with pytest.raises(DataError, match="Ref_Answer"):
        execute(command(broken, tmp_path / "t.csv", "http://127.0.0.1:9/v1"))
    assert not (tmp_path / "t.csv").exists()


def test_outputs_honour_the_umask(tmp_path: Path, items_csv: Path) -> None:
    previous = os.umask(0o027)
    try:
        with run_simulator(SimulatorConfig(oracle=TRUTH)) as sim:
            execute(command(items_csv, tmp_path / "t.parquet", sim.base_url))
    finally:
        os.umask(previous)
    assert oct((tmp_path / "t.parquet").stat().st_mode & 0o777) == oct(0o640)


class _Unauthorized(JsonEndpoint):
    def answer(self) -> tuple[int, dict[str, Any]]:
        return 401, {"error": {"message": "Incorrect API key", "type": "auth"}}


def test_a_rejected_key_ends_the_run_in_one_line(
    tmp_path: Path, items_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        args = ["judge", str(items_csv), "--rubric", "riddle_accuracy", "--model", "m"]
        args += ["--provider", "vllm", "--base-url", url, "--output", str(tmp_path / "o.csv")]
        code = main(args)
    finally:
        server.shutdown()
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and error[-1].startswith("error: ") and "401" in error[-1]
    assert "Traceback" not in "\n".join(error)
