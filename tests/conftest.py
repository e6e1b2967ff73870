"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judgekit import config

#: The child-process judging job of the resume and store-sharing tests.
JUDGE_JOB = Path(__file__).with_name("judge_job.py")


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The read-only shared datasets; tests that need them skip with a reason when absent."""
    if not config.RIDDLES_DIR.is_dir():
        pytest.skip(f"shared datasets not found at {config.DATASETS_DIR} (set JUDGEKIT_SHARED)")
    return config.DATASETS_DIR


@pytest.fixture
def judge_job() -> Callable[..., subprocess.Popen[bytes]]:
    """Start ``tests/judge_job.py`` in a child process: (base_url, store, out, n_items, *flags)."""
    env = {**os.environ, "PYTHONPATH": str(config.ROOT)}

    def start(
        base_url: str, store: Path, out: Path, n_items: int, *flags: str
    ) -> subprocess.Popen[bytes]:
        command = [sys.executable, str(JUDGE_JOB), base_url, str(store), str(out), str(n_items)]
        return subprocess.Popen(
            [*command, *flags], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    return start


@pytest.fixture
def items_csv(tmp_path: Path) -> Path:
    """Four items (ID, question, answer, reference); a test module may define its own."""
    path = tmp_path / "items.csv"
    rows = "".join(f"{i},Question {i}?,Answer {i},Answer {i}\n" for i in range(1, 5))
    path.write_text("ID,Question,Answer,Ref_Answer\n" + rows, encoding="utf-8")
    return path
