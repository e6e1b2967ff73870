"""`judgekit judge --batch-api`, `--write-requests`, `ingest` and `status`, as typed, against the
simulator: submit, kill, resume and finish give the online table; a requests file answered
offline (as `vllm run-batch` would) round-trips through ingest to the same table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.cli.main import main
from judgekit.simulator import SimulatorConfig, run_simulator

ITEMS = config.ROOT / "data" / "demo" / "riddles_demo.csv"
# re-asks in every mode: half the replies lose rows
FAULTS = {"seed": 3, "malformed": {"missing_rows": 0.5, "fence": 0.3}}
# The Batch API reports no latency; which request reaches the cache first depends on arrival.
TIMING = ["latency_s", "cached_tokens"]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    return {**env, "PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1"}


def judge_args(base_url: str, study: Path, provider: str = "simulator") -> list[str]:
    return [
        sys.executable, "-m", "judgekit", "judge", str(ITEMS), "--rubric", "riddle_accuracy",
        "--provider", provider, "--base-url", base_url, "--model", "sim-judge",
        "--batch-size", "6", "--runs", "2", "--study", str(study), "--max-unscored", "99",
    ]  # fmt: skip


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=environment(), capture_output=True, text=True, timeout=300
    )


def table(study: Path) -> pd.DataFrame:
    return pd.read_parquet(study / "judgments.parquet").drop(columns=TIMING)


def saved_batches(study: Path) -> list[dict]:
    path = study / "responses.sqlite.batches.json"
    return json.loads(path.read_text())["batches"] if path.is_file() else []


def test_submit_kill_resume_finish_gives_the_online_table(tmp_path: Path) -> None:
    sim_config = SimulatorConfig(**FAULTS, batch_delay_s=2.5)
    with run_simulator(sim_config) as sim:
        online = run(judge_args(sim.base_url, tmp_path / "online"), tmp_path)
        assert online.returncode == 0, online.stderr
        online_requests = sim.stats()["requests"]
        sim.reset_stats(forget_seen=True)  # the batch run meets the same faults

        command = [*judge_args(sim.base_url, tmp_path / "batch"), "--batch-api"]
        first = subprocess.Popen(
            command, cwd=tmp_path, env=environment(), stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while not saved_batches(tmp_path / "batch") and time.monotonic() < deadline:
            time.sleep(0.05)
        (submitted,) = saved_batches(tmp_path / "batch")
        first.send_signal(signal.SIGINT)
        _, stderr = first.communicate(timeout=60)
        assert first.returncode == 130, stderr
        last = stderr.strip().splitlines()[-1]
        assert "keep running at the provider" in last and submitted["batch_id"] in last
        assert "resume with: judgekit judge" in last and "--batch-api" in last
        assert sim.stats()["requests"] == 0  # nothing answered yet: the batch is still running

        resumed = run(command, tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert f"resuming batch {submitted['batch_id']}" in resumed.stderr
        batches = saved_batches(tmp_path / "batch")
        assert len(batches) >= 2 and all(b["recorded"] for b in batches)  # re-asks: next batch
        assert [b["round"] for b in batches] == sorted(b["round"] for b in batches)
        # each request answered once, all through batches, the same requests as online
        assert sim.stats()["by_source"] == {"batch": online_requests}

        status = run([sys.executable, "-m", "judgekit", "status", "batch"], tmp_path)
        assert status.returncode == 0, status.stderr
        assert submitted["batch_id"] in status.stdout and "completed" in status.stdout

    batched, reference = table(tmp_path / "batch"), table(tmp_path / "online")
    assert (reference["attempt"] > 1).any()
    pd.testing.assert_frame_equal(reference, batched)


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``judgekit ARGS`` in this process (``args`` as typed after ``judgekit``)."""
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def typed(base_url: str, study: Path, provider: str = "simulator") -> list[str]:
    return judge_args(base_url, study, provider)[3:]  # without `python -m judgekit`


def test_requests_file_round_trips_through_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "JUDGEKIT_"))]:
        monkeypatch.delenv(name)
    (tmp_path / "sim.yaml").write_text(json.dumps(FAULTS))  # JSON is YAML
    with run_simulator(SimulatorConfig(**FAULTS)) as sim:
        code, _, err = cli(typed(sim.base_url, tmp_path / "online", "vllm"), capsys)
        assert code == 0, err
    url = sim.base_url  # the same endpoint in the keys; never called while writing requests
    study = tmp_path / "offline"
    command = [*typed(url, study, "vllm"), "--write-requests", "requests.jsonl"]
    answer = [
        "simulate", "--config", "sim.yaml", "--run-batch", "requests.jsonl",
        "--output", "results.jsonl",
    ]  # fmt: skip
    rounds = 0
    while True:
        code, _, err = cli(command, capsys)
        assert code == 0, err
        if "every request is answered in the store" in err:
            break
        rounds += 1
        lines = (tmp_path / "requests.jsonl").read_text().splitlines()
        assert all(json.loads(line)["url"] == "/v1/chat/completions" for line in lines)
        assert cli(answer, capsys)[0] == 0
        results = (tmp_path / "results.jsonl").read_text().splitlines(keepends=True)
        if rounds == 1:  # a partial file (the last line cut short) and a hostile one first
            (tmp_path / "partial.jsonl").write_text("".join(results[:3]) + results[3][:40])
            code, _, err = cli(["ingest", "partial.jsonl", "--study", str(study)], capsys)
            assert code == 1 and "partial.jsonl line 4: not JSON" in err
            assert "3 replies and 0 failed lines recorded" in err
            foreign = json.loads(results[0]) | {"custom_id": "riddle_accuracy/x/" + "0" * 64}
            hostile = [results[0], results[0], json.dumps(foreign) + "\n", "[1, 2]\n"]
            (tmp_path / "hostile.jsonl").write_text("".join(hostile))
            code, _, err = cli(["ingest", "hostile.jsonl", "--study", str(study)], capsys)
            assert code == 1
            reasons = [line for line in err.splitlines() if line.startswith("refused")]
            assert len(reasons) == 3, err  # duplicate, unknown, malformed: one line each
            assert "repeats line 1" in reasons[0] and "is no request of" in reasons[1]
            assert "1 already stored" in err
        code, _, err = cli(["ingest", "results.jsonl", "--study", str(study)], capsys)
        assert code == 0, err
        assert rounds <= 4
    assert rounds >= 2  # the replies called for re-asks, written into the next file
    pd.testing.assert_frame_equal(table(tmp_path / "online"), table(study))


def test_batch_api_is_refused_where_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*typed("http://127.0.0.1:9/v1", tmp_path / "s", "vllm"), "--batch-api"]
    code, _, err = cli(args, capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "vllm has no Batch API" in line and "openai, azure" in line
    assert "--write-requests" in line


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch-api", "--mode", "conversation"], "needs each reply before the next"),
        (["--batch-api", "--write-requests", "r.jsonl"], "pick one"),
        (["--write-requests", "r.txt"], "must end in .jsonl"),
        (["--batch-api", "--offline"], "leave out --offline"),
        (["--prices", "2"], "--prices '2'"),
    ],
)
def test_batch_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, _, err = cli([*typed("http://127.0.0.1:9/v1", tmp_path / "s"), *extra], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert message in line


def test_dry_run_prices_at_batch_rates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*typed("http://127.0.0.1:9/v1", tmp_path / "s"), "--dry-run", "--prices", "2,8"]
    online, batched = cli(args, capsys), cli([*args, "--batch-api"], capsys)
    assert online[0] == batched[0] == 0, batched[2]
    costs = [float(out.split("Estimated cost")[1].split("$")[1].split(".\n")[0])
             for _, out, _ in (online, batched)]  # fmt: skip
    assert "at Batch API rates (50% of online)" in batched[1]
    assert costs[1] == pytest.approx(costs[0] / 2, rel=0.01)  # both printed to 4 decimals


def test_a_panel_goes_through_the_batch_api_one_judge_after_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "JUDGEKIT_"))]:
        monkeypatch.delenv(name)
    with run_simulator(SimulatorConfig(batch_delay_s=0.0)) as sim:
        judges = [
            arg
            for label in ("a", "b")
            for arg in ("--judge", f"{label}=simulator:judge-{label}@{sim.base_url}")
        ]
        args = [
            "judge", str(ITEMS), "--rubric", "riddle_accuracy", "--batch-size", "12",
            "--study", str(tmp_path / "panel"), *judges, "--batch-api",
        ]  # fmt: skip
        code, _, err = cli(args, capsys)
        assert code == 0, err
        assert sim.stats()["by_source"] == {"batch": 4}  # 2 requests per judge, once each
    batches = saved_batches(tmp_path / "panel")
    assert len(batches) == 2 and all(b["recorded"] for b in batches)  # one batch per judge
    judged = pd.read_parquet(tmp_path / "panel" / "judgments.parquet")
    assert judged.groupby("judge")["item_id"].nunique().to_dict() == {"a": 24, "b": 24}
    assert (judged["status"] == "ok").all()
