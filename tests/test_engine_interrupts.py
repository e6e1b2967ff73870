"""Ctrl-C during `judgekit judge` says how many replies are kept and how to resume."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from judgekit import config
from judgekit.engine.interrupts import interrupted_message
from judgekit.simulator import SimulatorConfig, run_simulator


def _answered(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM requests WHERE state='ok'").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is being created
        return 0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_prints_the_replies_kept_and_the_resume_command(tmp_path) -> None:
    items = tmp_path / "items.csv"
    items.write_text(
        "ID,Question,Answer,Ref_Answer\n"
        + "".join(f"{i},Riddle {i}?,Answer {i},Ref {i}\n" for i in range(1, 41)),
        encoding="utf-8",
    )
    store, output = tmp_path / "store.sqlite", tmp_path / "out.csv"
    with run_simulator(SimulatorConfig(latency_s=0.3)) as sim:
        arguments = [
            "judge", str(items), "--rubric", "riddle_accuracy", "--output", str(output),
            "--model", "sim-judge", "--base-url", sim.base_url, "--provider", "simulator",
            "--batch-size", "1", "--max-concurrency", "2", "--store", str(store),
        ]  # fmt: skip
        job = subprocess.Popen(
            [sys.executable, "-m", "judgekit", *arguments],
            env={**os.environ, "PYTHONPATH": str(config.ROOT)},
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_ignore_sigint,  # as under `nohup make test &`
        )
        deadline = time.monotonic() + 60
        while _answered(store) < 3:
            assert job.poll() is None and time.monotonic() < deadline, job.stderr
            time.sleep(0.05)
        job.send_signal(signal.SIGINT)
        _, err = job.communicate(timeout=60)
    assert job.returncode == 130
    last = err.strip().splitlines()[-1]
    kept = _answered(store)
    assert last == (
        f"interrupted: {kept} replies are stored in {store}; resume with: "
        + shlex.join(["judgekit", *arguments])
    )
    assert 3 <= kept < 40 and not output.exists()


def test_without_a_store_it_says_nothing_was_kept(tmp_path) -> None:
    message = interrupted_message(None, ["judgekit", "judge", "x.csv"])
    assert message == "interrupted: no response store, so no reply was kept; rerun with: " + (
        "judgekit judge x.csv"
    )


def test_the_simulator_command_stops_on_ctrl_c_even_when_sigint_was_ignored() -> None:
    # As under `nohup make test &`: the child inherits SIGINT ignored and must undo it.
    server = subprocess.Popen(
        [sys.executable, "-m", "judgekit.simulator"],
        env={**os.environ, "PYTHONPATH": str(config.ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint,
    )
    try:
        assert server.stdout is not None and "simulator" in server.stdout.readline()
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=20)
        assert server.returncode == 0 and "stopped" in out
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_sigterm_ends_a_large_run_in_seconds_like_ctrl_c(tmp_path) -> None:
    # A batch scheduler or `timeout` sends SIGTERM; thousands of requests are still pending.
    items = tmp_path / "items.csv"
    items.write_text(
        "ID,Question,Answer,Ref_Answer\n"
        + "".join(f"{i},Riddle {i}?,Answer {i},Ref {i}\n" for i in range(1, 5001)),
        encoding="utf-8",
    )
    store, output = tmp_path / "store.sqlite", tmp_path / "out.csv"
    with run_simulator(SimulatorConfig(latency_s=0.5)) as sim:
        arguments = [
            "judge", str(items), "--rubric", "riddle_accuracy", "--output", str(output),
            "--model", "sim-judge", "--base-url", sim.base_url, "--provider", "simulator",
            "--batch-size", "1", "--store", str(store),
        ]  # fmt: skip
        job = subprocess.Popen(
            [sys.executable, "-m", "judgekit", *arguments],
            env={**os.environ, "PYTHONPATH": str(config.ROOT)},
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while _answered(store) < 10:
            assert job.poll() is None and time.monotonic() < deadline, job.stderr
            time.sleep(0.05)
        job.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        _, err = job.communicate(timeout=60)
        took = time.monotonic() - sent
    assert job.returncode == 130, err
    assert took < 10
    assert err.strip().splitlines()[-1].startswith(f"interrupted: {_answered(store)} replies")
    assert "Traceback" not in err and not output.exists()
