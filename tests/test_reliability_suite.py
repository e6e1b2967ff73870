"""Reliability suite: faults lose no row and invent no score; kill -9 resumes; keys never leak.

Short versions of the experiments in ``benchmarks/bench_faults.py`` (which prints the numbers).
Everything runs against the real simulator through the real ``openai`` client.
"""

from __future__ import annotations

import math
import os
import random
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks._common import oracle_scores, synthetic_items
from benchmarks._reliability import judge_under_faults, kill_and_resume
from judgekit import config
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Status

COLUMNS = ("Question", "Answer", "Ref_Answer")


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3, 0.5])
def test_faults_lose_no_row_and_invent_no_score(rate: float) -> None:
    rubric = load_rubric("riddle_accuracy")
    items = synthetic_items(40, COLUMNS)
    oracle = oracle_scores(items, rubric.scale.allowed)
    run = judge_under_faults(items, rubric, oracle, rate, runs=2, batch_size=4)
    final = run.final_rows

    # every input row has exactly one final row per run
    assert run.counts()["lost"] == 0
    keys = list(zip(final["run"], final["item_id"], strict=True))
    assert sorted(keys) == sorted((r, i.id) for r in (1, 2) for i in items)

    # statuses are explicit, ok scores are the oracle's, other rows carry no number
    assert set(run.table["status"]) <= {s.value for s in Status}
    ok = final[final["status"] == Status.OK.value]
    assert (ok["score"] == ok["item_id"].map(oracle)).all()
    flagged = run.table[run.table["status"] != Status.OK.value]
    assert flagged["score"].isna().all()
    assert (flagged["reason"] != "").all()
    # each keeps the reply it was read from (possibly empty, as received) or the call's error
    received = flagged["finish_reason"] != ""
    assert (received | (flagged["error"] != "")).all()
    assert (flagged.loc[~received, "raw_reply"] == "").all()

    if rate == 0:
        assert (run.faulty_share, run.retries, run.reasks) == (0.0, 0, 0)
        assert len(ok) == run.expected_rows
    else:  # the faults really happened and were paid for
        assert run.faulty_share > 0
    if rate >= 0.3:
        assert run.retries > 0 and run.reasks > 0


def test_kill_nine_at_five_points_then_resume() -> None:
    items = synthetic_items(40, COLUMNS)
    batch_size = 4
    requests = math.ceil(len(items) / batch_size)
    points = sorted(random.Random(2026).sample(range(1, requests), 5))
    results = kill_and_resume(items, points, batch_size=batch_size, latency_s=0.2)
    assert [r.kill_after for r in results] == points
    for result in results:
        assert result.identical, result
        assert result.stored_rerequested == 0, result
        # only requests in flight at the kill (max_concurrency=2) may be paid again, once each
        assert result.in_flight_repeats <= min(2, result.pending_at_kill), result
        assert result.stored_at_kill >= result.kill_after


CANARY_JOB = """
import logging, sys
from pathlib import Path
from judgekit.data import items_from_frame, read_table
from judgekit.engine import OpenAIJudge, judge
from judgekit.engine import JudgeOptions
from judgekit.judging.judge import execute
from judgekit.judging.command import JudgeCommand
from judgekit.judging.clients import EndpointOptions
from judgekit.rubrics import load_rubric

base_url, folder, items_path = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
logging.basicConfig(filename=folder / "run.log", level=logging.DEBUG, force=True)
rubric = load_rubric("riddle_accuracy")
items = items_from_frame(read_table(items_path).frame, rubric.input_columns)
table = judge(items, rubric, OpenAIJudge("sim-judge", base_url=base_url),
              store=folder / "store.sqlite", runs=2)
table.to_parquet(folder / "judge.parquet")
execute(JudgeCommand(items_path, "riddle_reasoning", folder / "cli.csv",
                     id_score_csv=folder / "scores.csv",
                     endpoint=EndpointOptions("sim-judge", base_url=base_url),
                     judging=JudgeOptions(store=folder / "cli_store.sqlite")))
"""


def _files_containing(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_canary_key_is_written_nowhere(tmp_path: Path) -> None:
    canary = f"sk-canary-{secrets.token_hex(12)}"
    (tmp_path / "job.py").write_text(CANARY_JOB, encoding="utf-8")
    control = tmp_path / "control" / "key.txt"
    control.parent.mkdir()
    control.write_text(canary)
    assert _files_containing(tmp_path, canary.encode()) == [control]  # the grep can find it
    control.unlink()

    env = {
        **os.environ,
        "OPENAI_API_KEY": canary,
        "OPENAI_LOG": "debug",
        "PYTHONPATH": str(config.ROOT),
    }
    env.pop("JUDGEKIT_SIMULATOR_API_KEY", None)
    items_path = config.DATA_DIR / "demo" / "riddles_demo.csv"
    with run_simulator(SimulatorConfig(malformed={"missing_rows": 0.3})) as sim:
        job = subprocess.run(
            [sys.executable, "job.py", sim.base_url, str(tmp_path), str(items_path)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=120,
        )
        received = sim.stats()["requests"]
    (tmp_path / "stdout.txt").write_bytes(job.stdout)
    (tmp_path / "stderr.txt").write_bytes(job.stderr)
    assert job.returncode == 0, job.stderr.decode()[-2000:]
    assert received > 0
    written = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert {"store.sqlite", "judge.parquet", "cli.csv", "run.log"} <= written
    assert (tmp_path / "run.log").stat().st_size > 0  # debug logging really wrote something
    assert _files_containing(tmp_path, canary.encode()) == []
    assert _files_containing(tmp_path, canary[len("sk-") :].encode()) == []
