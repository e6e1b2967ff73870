"""Two processes on one store: the second waits for the first, nothing is paid twice, and the
offline replay of the store equals the table each process returned."""

from __future__ import annotations

import pandas as pd
from judge_job import run_job

from judgekit.engine import ResponseStore
from judgekit.engine.storelock import lock_path
from judgekit.simulator import SimulatorConfig, run_simulator

N_ITEMS = 24
# A noisy judge: the same request answered twice would likely get another score.
SIM = SimulatorConfig(latency_s=0.25, noise_rate=0.5, malformed={"missing_rows": 0.2}, seed=4)


def test_two_processes_on_one_store_pay_each_request_once(tmp_path, judge_job) -> None:
    store = tmp_path / "store.sqlite"
    outs = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    flags = ("--concurrency", "2", "--runs", "2")
    with run_simulator(SIM) as sim:
        jobs = [judge_job(sim.base_url, store, out, N_ITEMS, *flags) for out in outs]
        errors = [job.communicate(timeout=120)[1].decode() for job in jobs]
        assert [job.returncode for job in jobs] == [0, 0], errors
        paid = len(sim.requests)
        base_url = sim.base_url
    with ResponseStore.open_readonly(store) as opened:
        assert opened.counts() == {"pending": 0, "ok": paid, "error": 0}  # each paid once
    assert sum("waiting for" in text for text in errors) == 1  # the second one said it waits
    replay = run_job(base_url, store, N_ITEMS, runs=2, offline=True)
    for out in outs:
        pd.testing.assert_frame_equal(pd.read_parquet(out), replay, check_dtype=False)
    assert lock_path(store).exists()  # the lock file stays; it is free, not removed
