"""A conversation killed with SIGKILL resumes by replaying its stored turns, paying once."""

from __future__ import annotations

import collections
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from judgekit import config
from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item

N_ITEMS = 16
SCRIPT = """
import sys
from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.types import Item

base_url, store_path, out_path, n_items = sys.argv[1:5]
items = [
    Item(str(i), {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": f"Ref {i}"})
    for i in range(1, int(n_items) + 1)
]
client = OpenAIJudge("sim-judge", base_url=base_url, provider="simulator",
                     endpoint="judgekit-simulator")
table = judge(items, load_rubric("riddle_accuracy"), client, batch_size=2, store=store_path,
              progress=False, structured=False, mode="conversation")
table.to_parquet(out_path)
"""

SIM = SimulatorConfig(latency_s=0.15, malformed={"missing_rows": 0.3}, seed=2)


def _answered(store: Path) -> int:
    if not store.exists():
        return 0
    db = sqlite3.connect(store, timeout=5)
    try:
        found = db.execute("SELECT COUNT(*) FROM requests WHERE state = 'ok'").fetchone()
    except sqlite3.OperationalError:  # the job is still creating the schema
        return 0
    finally:
        db.close()
    return int(found[0])


def _start(script: Path, base_url: str, store: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(config.ROOT)}
    command = [sys.executable, str(script), base_url, str(store), str(out), str(N_ITEMS)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigkilled_conversation_resumes_where_it_stopped(tmp_path) -> None:
    script = tmp_path / "chat_job.py"
    script.write_text(SCRIPT)
    store, out = tmp_path / "store.sqlite", tmp_path / "table.parquet"
    with run_simulator(SIM) as sim:
        job = _start(script, sim.base_url, store, out)
        deadline = time.monotonic() + 60
        while _answered(store) < 3:
            assert job.poll() is None, job.stderr.read().decode() if job.stderr else ""
            assert time.monotonic() < deadline, "the job never stored a reply"
            time.sleep(0.01)
        job.send_signal(signal.SIGKILL)
        job.wait(timeout=30)
        assert job.returncode == -signal.SIGKILL and not out.exists()
        answered_at_kill = _answered(store)
        first_life = len(sim.requests)

        resumed_job = _start(script, sim.base_url, store, out)
        _, err = resumed_job.communicate(timeout=120)
        assert resumed_job.returncode == 0, err.decode()
        second_life = sim.requests.snapshot()[first_life:]
        bodies = collections.Counter(entry.body_hash for entry in sim.requests)
    resumed = pd.read_parquet(out)

    # Turns are sent one at a time, so at most the one in flight at the kill is paid twice;
    # the resumed run replays every stored turn instead of sending it again.
    assert sum(bodies.values()) <= len(bodies) + 1
    assert len(second_life) <= len(resumed["request_hash"].unique()) - answered_at_kill + 1
    assert answered_at_kill < resumed["request_hash"].nunique()  # killed mid-way

    with run_simulator(SIM) as sim:
        client = OpenAIJudge(
            "sim-judge", base_url=sim.base_url, provider="simulator", endpoint="judgekit-simulator"
        )  # the same endpoint identity as the job's, on another port
        reference = judge(
            [
                Item(
                    str(i),
                    {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": f"Ref {i}"},
                )
                for i in range(1, N_ITEMS + 1)
            ],
            load_rubric("riddle_accuracy"),
            client,
            batch_size=2,
            store=tmp_path / "reference.sqlite",
            progress=False,
            structured=False,
            mode="conversation",
        )
    assert (reference["attempt"] > 1).any(), "the fault mix should force re-asks in the chat"
    measured = ["latency_s", "cached_tokens"]  # timing and provider cache state differ
    pd.testing.assert_frame_equal(
        resumed.drop(columns=measured), reference.drop(columns=measured), check_dtype=False
    )
