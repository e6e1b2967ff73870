"""Pairwise judging: bad pairs files stop before any call with one line naming file, row and
column (nothing stored is lost); the Batch API, request files, own prompts and a killed run's
resume judge both orders too."""

from __future__ import annotations

import collections
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from judge_job import kill_when
from pairwise_study import write_pairs

from judgekit import config
from judgekit.cli.main import main
from judgekit.simulator import SimulatorConfig, run_simulator


def judge(items: Path, study: Path, url: str, *flags: str) -> int:
    return main(
        [
            "judge", str(items), "--rubric", "mtbench_pairwise", "--study", str(study),
            "--provider", "simulator", "--model", "sim-judge", "--base-url", url, *flags,
        ]
    )  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("mistake", "expected"),
    [
        ("no_answer_b", "required column 'Answer_B' is missing"),
        ("same_answer", "row 3, column D 'Answer_B': the same answer is in both slots"),
        ("empty_answer", "row 4, column C 'Answer_A': empty cell in a required column"),
        ("bad_label", "row 2, column 'Human_Winner': 'maybe' is not a side"),
    ],
)
def test_a_bad_pairs_file_stops_before_any_call_and_keeps_the_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mistake: str, expected: str
) -> None:
    good = write_pairs(tmp_path / "pairs.csv", 4)
    study = tmp_path / "study"
    with run_simulator(SimulatorConfig()) as sim:
        assert judge(good, study, sim.base_url) == 0
        kept = {p.name: digest(p) for p in study.iterdir() if p.is_file()}
        frame = pd.read_csv(good)
        if mistake == "no_answer_b":
            frame = frame.drop(columns="Answer_B")
        elif mistake == "same_answer":
            frame.loc[1, "Answer_B"] = frame.loc[1, "Answer_A"]
        elif mistake == "empty_answer":
            frame.loc[2, "Answer_A"] = ""
        else:
            frame.loc[0, "Human_Winner"] = "maybe"
        bad = tmp_path / "bad.csv"
        frame.to_csv(bad, index=False)
        sim.reset_stats()
        capsys.readouterr()
        assert judge(bad, study, sim.base_url) == 2
        assert sim.stats()["requests"] == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and expected in err, err
    assert {p.name: digest(p) for p in study.iterdir() if p.is_file()} == kept


def test_conversation_mode_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = write_pairs(tmp_path / "pairs.csv", 4)
    with run_simulator(SimulatorConfig()) as sim:
        assert judge(pairs, tmp_path / "study", sim.base_url, "--mode", "conversation") == 2
        assert sim.stats()["requests"] == 0
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: rubric mtbench_pairwise compares two answers: --mode conversation would let "
        "the judge see one order's verdict while judging the other; use --mode independent"
    )
    assert not (tmp_path / "study").exists()


def test_the_batch_api_judges_both_orders_as_the_online_run(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 5)
    with run_simulator(SimulatorConfig(position_bias=1.0, batch_delay_s=0.0)) as sim:
        assert judge(items, tmp_path / "online", sim.base_url) == 0
        sim.reset_stats(forget_seen=True)
        assert judge(items, tmp_path / "batch", sim.base_url, "--batch-api") == 0
        assert sim.stats()["by_source"] == {"batch": 10}
    columns = ["item_id", "order", "status", "verdict", "model_a", "model_b"]
    online = pd.read_parquet(tmp_path / "online" / "judgments.parquet")[columns]
    batch = pd.read_parquet(tmp_path / "batch" / "judgments.parquet")[columns]
    pd.testing.assert_frame_equal(online, batch)


def test_a_requests_file_round_trips_both_orders_through_ingest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    items = write_pairs(tmp_path / "pairs.csv", 5)
    url = "http://127.0.0.1:9/v1"  # never called
    write = ["--write-requests", "requests.jsonl"]
    assert judge(items, tmp_path / "s", url, *write) == 0
    lines = (tmp_path / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 10
    answer = ["simulate", "--position-bias", "6", "--run-batch", "requests.jsonl", "--output",
              "results.jsonl"]  # fmt: skip
    assert main(answer) == 0
    assert main(["ingest", "results.jsonl", "--study", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    assert judge(items, tmp_path / "s", url, *write) == 0
    assert "every request is answered in the store" in capsys.readouterr().err
    table = pd.read_parquet(tmp_path / "s" / "judgments.parquet")
    assert len(table) == 10 and (table["status"] == "ok").all()
    orders = table.groupby("item_id")["order"].apply(lambda o: tuple(sorted(o)))
    assert set(orders) == {("ab", "ba")}
    first_shown = (table["order"] == "ab") == (table["verdict"] == "a")
    assert first_shown.sum() >= 9  # --position-bias 6: the first shown nearly always wins


OWN_PROMPT = """Question: {question}

First answer:
{answer_a}

Second answer:
{answer_b}

End with [[A]] if the first is better, [[B]] if the second is, or [[C]] for a tie.
"""


def test_an_own_pairwise_prompt_is_filled_in_both_orders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 3)
    prompt = tmp_path / "compare.txt"
    prompt.write_text(OWN_PROMPT)
    settings = "output_format: pair_mtbench\nscale: {allowed: [-1, 0, 1]}\n"
    (tmp_path / "compare.yaml").write_text("kind: direct\n" + settings)
    args = ["judge", str(items), "--rubric", str(prompt), "--study", str(tmp_path / "s"),
            "--provider", "simulator", "--model", "sim-judge"]  # fmt: skip
    assert main([*args, "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "kind direct with output_format pair_mtbench" in capsys.readouterr().err
    (tmp_path / "compare.yaml").write_text(
        "kind: pairwise\nlabel_column: Human_Winner\n" + settings
    )
    with run_simulator(SimulatorConfig(position_bias=1.0)) as sim:
        assert main([*args, "--base-url", sim.base_url]) == 0
        sent = {r.body["messages"][-1]["content"] for r in sim.requests}
    pairs = pd.read_csv(items)
    a, b = pairs.loc[0, "Answer_A"].strip(), pairs.loc[0, "Answer_B"].strip()
    assert {text.index(a) < text.index(b) for text in sent if a in text} == {True, False}
    table = pd.read_parquet(tmp_path / "s" / "judgments.parquet")
    assert len(table) == 6 and (table["status"] == "ok").all()
    assert set(table["verdict"]) <= {"a", "b", "tie"}
    assert len(pd.read_parquet(tmp_path / "s" / "human_labels.parquet")) == 3


def test_a_killed_pairwise_run_resumes_without_paying_twice(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 10)
    study = tmp_path / "study"
    store = study / "responses.sqlite"

    def answered() -> int:
        if not store.exists():
            return 0
        db = sqlite3.connect(store, timeout=5)
        try:
            return db.execute("SELECT COUNT(*) FROM requests WHERE state = 'ok'").fetchone()[0]
        except sqlite3.OperationalError:  # the schema is still being made
            return 0
        finally:
            db.close()

    with run_simulator(SimulatorConfig(latency_s=0.1, position_bias=1.0)) as sim:
        args = ["judge", str(items), "--rubric", "mtbench_pairwise", "--study", str(study),
                "--provider", "simulator", "--model", "sim-judge", "--base-url", sim.base_url,
                "--max-concurrency", "2"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1"}
        job = subprocess.Popen(
            [sys.executable, "-m", "judgekit", *args],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        kill_when(job, lambda: answered() >= 4)
        assert job.returncode == -signal.SIGKILL and answered() < 20
        assert main(args) == 0
        paid = collections.Counter(e.body_hash for e in sim.requests)
    assert len(paid) == 20 and sum(paid.values()) <= 20 + 2  # at most the 2 in flight again
    table = pd.read_parquet(study / "judgments.parquet")
    assert len(table) == 20 and (table["status"] == "ok").all()
