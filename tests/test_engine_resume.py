"""A judging process killed with SIGKILL resumes from its store without paying twice."""

from __future__ import annotations

import collections
import re
import signal
import sqlite3
from pathlib import Path

import pandas as pd
from judge_job import kill_when, run_job

from judgekit.simulator import SimulatorConfig, run_simulator

N_ITEMS = 24

SIM = SimulatorConfig(latency_s=0.15, malformed={"missing_rows": 0.2}, seed=11)


def _answered(store: Path) -> tuple[int, int]:
    if not store.exists():
        return 0, 0
    db = sqlite3.connect(store, timeout=5)
    try:
        rows = dict(db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state").fetchall())
    except sqlite3.OperationalError:  # the job is still creating the schema
        return 0, 0
    finally:
        db.close()
    return rows.get("ok", 0), rows.get("pending", 0)


#: The job's flags: two requests in flight at most, so a kill strands at most two.
FLAGS = ("--concurrency", "2", "--endpoint", "judgekit-simulator")


def test_sigkill_mid_run_then_resume(tmp_path, judge_job) -> None:
    store, out = tmp_path / "store.sqlite", tmp_path / "table.parquet"
    with run_simulator(SIM) as sim:
        job = judge_job(sim.base_url, store, out, N_ITEMS, *FLAGS)
        kill_when(job, lambda: _answered(store)[0] >= 4)
        answered_at_kill, queued_at_kill = _answered(store)
        assert job.returncode == -signal.SIGKILL and not out.exists()
        assert answered_at_kill < N_ITEMS // 2  # killed mid-way, not after the end

        resumed_job = judge_job(sim.base_url, store, out, N_ITEMS, *FLAGS)
        _, err = resumed_job.communicate(timeout=120)
        assert resumed_job.returncode == 0, err.decode()
        answered_ok = collections.Counter(
            e.body_hash for e in sim.requests if e.outcome != "rate_limited"
        )
        bodies = {e.body_hash: e.body for e in sim.requests}
    resumed = pd.read_parquet(out)

    # No request was paid twice, except those in flight when the process died: at most
    # max_concurrency=2 of the requests still pending (queued or sent) in the store.
    repeated = [body for body, count in answered_ok.items() if count > 1]
    assert len(repeated) <= min(2, queued_at_kill)
    assert sum(answered_ok.values()) <= len(answered_ok) + 2

    # The same study run uninterrupted (fresh simulator, fresh store) gives the same table.
    with run_simulator(SIM) as sim:
        # the same endpoint identity as the job's, on another port
        reference = run_job(
            sim.base_url, tmp_path / "reference.sqlite", N_ITEMS, endpoint="judgekit-simulator"
        )
    assert (reference["attempt"] > 1).any(), "the fault mix should force some re-asks"
    # A request in flight at the kill was answered twice: the simulator's second sighting of a
    # body may answer otherwise (by design), so those items may end on another attempt. Every
    # other row is the uninterrupted run's, exactly.
    resent = {
        item_id
        for body in repeated
        for item_id in re.findall(r'<item id="([^"]+)">', bodies[body]["messages"][-1]["content"])
    }
    assert len(resent) <= 2 * 2  # two requests of at most two items
    kept = ~resumed["item_id"].isin(resent)
    assert kept.sum() >= N_ITEMS - 4
    measured = ["latency_s", "cached_tokens"]  # timing and provider cache state differ
    pd.testing.assert_frame_equal(
        resumed[kept].drop(columns=measured).reset_index(drop=True),
        reference[~reference["item_id"].isin(resent)].drop(columns=measured).reset_index(drop=True),
        check_dtype=False,
    )
    assert set(resumed.loc[~kept, "status"]) <= {"ok", "missing", "unparseable"}
