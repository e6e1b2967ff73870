"""The reliability experiments, shared by ``bench_faults`` (long) and the test suite (short).

* :func:`judge_under_faults`: judge items against a simulator that fails or garbles a given
  share of calls, and account for every row, retry and re-ask.
* :func:`kill_and_resume`: run the judge in a subprocess, SIGKILL it after N stored replies,
  resume it, and compare with an uninterrupted run, counting every repeated paid request.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit import config
from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item, Status

#: The fault kinds mixed in equal shares (transport failures, then malformed replies).
TRANSPORT_FAULTS = ("error_500_rate", "drop_rate", "timeout_rate")
MALFORMED_FAULTS = ("fence", "missing_rows", "duplicate_id", "out_of_range", "truncated")
FAULT_KINDS = len(TRANSPORT_FAULTS) + len(MALFORMED_FAULTS)
CLIENT_TIMEOUT_S = 1.0


def fault_config(rate: float, oracle: Mapping[str, float], *, seed: int = 7) -> SimulatorConfig:
    """A simulator where about ``rate`` of calls fail or come back malformed (8 kinds, equal).

    Each kind fires independently with probability ``q`` chosen so that
    ``1 - (1 - q) ** 8 == rate``.
    """
    share = 1 - (1 - rate) ** (1 / FAULT_KINDS) if rate > 0 else 0.0
    return SimulatorConfig(
        seed=seed,
        oracle=dict(oracle),
        timeout_sleep_s=CLIENT_TIMEOUT_S * 1.5,
        malformed={kind: share for kind in MALFORMED_FAULTS},
        **{kind: share for kind in TRANSPORT_FAULTS},
    )


def fault_client(base_url: str) -> OpenAIJudge:
    """The judge client of the fault runs: short timeout and backoff, default retries."""
    return OpenAIJudge(
        "sim-judge",
        base_url=base_url,
        provider="simulator",
        timeout_s=CLIENT_TIMEOUT_S,
        backoff_base_s=0.05,
        backoff_max_s=0.5,
    )


@dataclass(frozen=True)
class FaultRun:
    """What one fault-injection run produced and cost.

    Attributes:
        rate: Target share of faulty calls.
        table: The judgments table.
        expected_rows: Items x runs.
        faulty_share: Measured share of HTTP calls that failed or were malformed.
        http_requests: HTTP requests the simulator received.
        retries: HTTP requests beyond one per logical call (the client's retries).
        reasks: Logical calls beyond the first ask of every batch (re-asks of failed rows).
    """

    rate: float
    table: pd.DataFrame
    expected_rows: int
    faulty_share: float
    http_requests: int
    retries: int
    reasks: int

    @property
    def final_rows(self) -> pd.DataFrame:
        """One row per (run, item): the table without the judge's foreign-ID rows."""
        return self.table[self.table["status"] != Status.UNKNOWN_ID.value]

    def counts(self) -> dict[str, int]:
        """Rows ok, flagged (any other final status) and lost (expected but absent)."""
        final = self.final_rows
        ok = int((final["status"] == Status.OK.value).sum())
        present = final.drop_duplicates(["run", "item_id"]).shape[0]
        return {"ok": ok, "flagged": len(final) - ok, "lost": self.expected_rows - present}


def judge_under_faults(
    items: Sequence[Item],
    rubric: Any,
    oracle: Mapping[str, float],
    rate: float,
    *,
    runs: int,
    batch_size: int,
    latency_s: float = 0.0,
) -> FaultRun:
    """Judge ``items`` x ``runs`` against a simulator failing about ``rate`` of calls."""
    sim_config = dataclasses.replace(fault_config(rate, oracle), latency_s=latency_s)
    with run_simulator(sim_config) as sim:
        table = judge(
            items,
            rubric,
            fault_client(sim.base_url),
            runs=runs,
            batch_size=batch_size,
            structured=False,
            progress=False,
        )
        log = sim.requests.snapshot()
    faulty = sum(1 for entry in log if entry.outcome != "ok")
    first_asks = math.ceil(len(items) / batch_size) * runs
    api_calls = int(table.attrs["api_calls"])
    return FaultRun(
        rate=rate,
        table=table,
        expected_rows=len(items) * runs,
        faulty_share=faulty / len(log) if log else 0.0,
        http_requests=len(log),
        retries=len(log) - api_calls,
        reasks=api_calls - first_asks,
    )


# --- kill -9 and resume -------------------------------------------------------------------

JOB_SCRIPT = """
import json, sys
from judgekit.engine import OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.rubrics import load_rubric
from judgekit.types import Item

base_url, store_path, out_path, items_path, batch_size = sys.argv[1:6]
items = [Item(i["id"], i["fields"]) for i in json.load(open(items_path, encoding="utf-8"))]
client = OpenAIJudge("sim-judge", base_url=base_url, provider="simulator", max_concurrency=2,
                     endpoint="simulator")  # one judge, whatever port it is on
table = judge(items, load_rubric("riddle_accuracy"), client, batch_size=int(batch_size),
              store=store_path, progress=False, structured=False)
table.to_parquet(out_path)
"""

#: Columns that legitimately differ between a resumed and an uninterrupted run.
MEASURED_COLUMNS = ["latency_s", "cached_tokens"]


@dataclass(frozen=True)
class KillResult:
    """One kill point: where the job died and what resuming cost.

    Attributes:
        kill_after: Stored replies the job had when it was killed.
        stored_at_kill: Replies in the store at the kill (``ok`` or ``error`` rows).
        pending_at_kill: Requests recorded as sent but unanswered at the kill.
        in_flight_repeats: Requests sent again after the kill that were unanswered at it.
        stored_rerequested: Requests sent again although their reply was stored (must be 0).
        identical: Whether the resumed table equals the uninterrupted one.
    """

    kill_after: int
    stored_at_kill: int
    pending_at_kill: int
    in_flight_repeats: int
    stored_rerequested: int
    identical: bool


def _store_states(store: Path) -> dict[str, set[str]]:
    """Messages (as JSON) of the store's requests by state."""
    states: dict[str, set[str]] = collections.defaultdict(set)
    if not store.exists():
        return states
    db = sqlite3.connect(store, timeout=5)
    try:
        for state, messages in db.execute("SELECT state, messages FROM requests"):
            states[state].add(json.dumps(json.loads(messages), sort_keys=True))
    except sqlite3.OperationalError:  # the job is still creating the schema
        pass
    finally:
        db.close()
    return states


def _body_messages(body: Mapping[str, Any]) -> str:
    return json.dumps(body.get("messages", []), sort_keys=True)


def _start_job(folder: Path, base_url: str, name: str, batch_size: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(config.ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            str(folder / "job.py"),
            base_url,
            str(folder / f"{name}.sqlite"),
            str(folder / f"{name}.parquet"),
            str(folder / "items.json"),
            str(batch_size),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _judge_here(items: Sequence[Item], base_url: str, store: Path, batch_size: int) -> pd.DataFrame:
    """The job's judging call, in this process (the reference run and the resume)."""
    # Every simulator here is the same judge on another port: one endpoint name for the store.
    client = OpenAIJudge(
        "sim-judge",
        base_url=base_url,
        provider="simulator",
        max_concurrency=2,
        endpoint="simulator",
    )
    table = judge(
        items,
        load_rubric("riddle_accuracy"),
        client,
        batch_size=batch_size,
        store=store,
        progress=False,
        structured=False,
    )
    # the job hands its table over through parquet; compare like with like
    return pd.read_parquet(io.BytesIO(table.to_parquet()))


def kill_and_resume(
    items: Sequence[Item],
    kill_points: Sequence[int],
    *,
    batch_size: int,
    latency_s: float,
    timeout_s: float = 120.0,
) -> list[KillResult]:
    """For each kill point: run, SIGKILL after that many stored replies, resume, compare.

    The killed job is a subprocess; the resume and the uninterrupted reference run the same
    ``judge()`` call in this process, on the killed job's store and on a fresh one.

    The simulator runs without faults (a fault draw depends on how often a body was seen, so a
    repeated in-flight request could be answered differently); its request log is the record of
    every paid request.
    """
    sim_config = SimulatorConfig(latency_s=latency_s, seed=3)
    with tempfile.TemporaryDirectory() as name, contextlib.ExitStack() as stack:
        folder = Path(name)
        (folder / "job.py").write_text(JOB_SCRIPT, encoding="utf-8")
        records = [{"id": item.id, "fields": dict(item.fields)} for item in items]
        (folder / "items.json").write_text(json.dumps(records), encoding="utf-8")
        with run_simulator(sim_config) as sim:
            reference = _judge_here(items, sim.base_url, folder / "reference.sqlite", batch_size)
        # One simulator and one job per kill point, all started at once (starts are slow).
        sims = [stack.enter_context(run_simulator(sim_config)) for _ in kill_points]
        jobs = [
            _start_job(folder, sim.base_url, f"killed{point}", batch_size)
            for point, sim in enumerate(sims)
        ]
        stores = [folder / f"killed{point}.sqlite" for point in range(len(kill_points))]
        at_kill: list[dict[str, set[str]]] = [{} for _ in kill_points]
        sent_before = [0 for _ in kill_points]
        deadline = time.monotonic() + timeout_s
        while any(job.returncode is None for job in jobs):
            for point, (job, store, kill_after) in enumerate(
                zip(jobs, stores, kill_points, strict=True)
            ):
                if job.returncode is not None:
                    continue
                if job.poll() is not None or time.monotonic() > deadline:
                    for other in jobs:
                        other.kill()
                    raise RuntimeError(f"kill point {kill_after}: the job ended before it")
                if len(_store_states(store)["ok"]) >= kill_after:
                    job.send_signal(signal.SIGKILL)
                    job.wait(timeout=30)
                    at_kill[point] = _store_states(store)
                    sent_before[point] = len(sims[point].requests)
            time.sleep(0.005)
        results = []
        for point, kill_after in enumerate(kill_points):
            table = _judge_here(items, sims[point].base_url, stores[point], batch_size)
            log = sims[point].requests.snapshot()
            after = [_body_messages(entry.body) for entry in log[sent_before[point] :]]
            before = {_body_messages(entry.body) for entry in log[: sent_before[point]]}
            finished = at_kill[point]["ok"] | at_kill[point]["error"]
            results.append(
                KillResult(
                    kill_after=kill_after,
                    stored_at_kill=len(finished),
                    pending_at_kill=len(at_kill[point]["pending"]),
                    in_flight_repeats=sum(1 for m in after if m in before and m not in finished),
                    stored_rerequested=sum(1 for m in after if m in finished),
                    identical=table.drop(columns=MEASURED_COLUMNS).equals(
                        reference.drop(columns=MEASURED_COLUMNS)
                    ),
                )
            )
    return results
