"""A conversation killed with SIGKILL resumes by replaying its stored turns, paying once."""

from __future__ import annotations

import collections
import signal
import sqlite3
from pathlib import Path

import pandas as pd
from judge_job import kill_when, run_job

from judgekit.simulator import SimulatorConfig, run_simulator

N_ITEMS = 16

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


FLAGS = ("--mode", "conversation", "--endpoint", "judgekit-simulator")


def test_sigkilled_conversation_resumes_where_it_stopped(tmp_path, judge_job) -> None:
    store, out = tmp_path / "store.sqlite", tmp_path / "table.parquet"
    with run_simulator(SIM) as sim:
        job = judge_job(sim.base_url, store, out, N_ITEMS, *FLAGS)
        kill_when(job, lambda: _answered(store) >= 3)
        assert job.returncode == -signal.SIGKILL and not out.exists()
        answered_at_kill = _answered(store)
        first_life = len(sim.requests)

        resumed_job = judge_job(sim.base_url, store, out, N_ITEMS, *FLAGS)
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
        # the same endpoint identity as the job's, on another port
        reference = run_job(
            sim.base_url,
            tmp_path / "reference.sqlite",
            N_ITEMS,
            mode="conversation",
            endpoint="judgekit-simulator",
        )
    assert (reference["attempt"] > 1).any(), "the fault mix should force re-asks in the chat"
    measured = ["latency_s", "cached_tokens"]  # timing and provider cache state differ
    pd.testing.assert_frame_equal(
        resumed.drop(columns=measured), reference.drop(columns=measured), check_dtype=False
    )
