"""Fixtures shared by the whole suite, and the `slow` marking of tests that start a process."""

from __future__ import annotations

import ast
import functools
import gc
import os
import platform
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

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


# --- The fast inner loop: tests that start a process are marked `slow` (make check skips them).
#: Names whose use in a test, its module's helpers or its fixtures starts a process: a
#: subprocess (the CLI, a simulator, llama.cpp), a notebook kernel or a browser.
SPAWNING_NAMES = frozenset(
    {"subprocess", "Popen", "multiprocessing", "ProcessPoolExecutor", "papermill",
     "execute_notebook", "sync_playwright", "async_playwright", "run_parameter_set",
     "run_report", "run_demo", "run_paper", "local_judge_client", "LocalJudgeServer",
     "provenance", "kill_and_resume"}  # provenance asks git; kill_and_resume starts jobs
)  # fmt: skip
#: Fixtures of this file that start a process.
SPAWNING_FIXTURES = frozenset({"judge_job"})
#: Markers whose tests start a kernel or the local model.
SPAWNING_MARKERS = ("notebooks", "local")


@functools.cache
def _spawning_functions(path: Path) -> frozenset[str]:
    """Functions of a test module that start a process, directly or through the module's own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    used: dict[str, set[str]] = {}
    spawning: set[str] = set()
    for name, node in functions.items():
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        names |= {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}  # fixtures
        if names & (SPAWNING_NAMES | SPAWNING_FIXTURES):
            spawning.add(name)
        used[name] = names
    while grown := {n for n, names in used.items() if n not in spawning and names & spawning}:
        spawning |= grown
    return frozenset(spawning)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that starts a process (by name, fixture or marker; see above)."""
    for item in items:
        function = getattr(item, "function", None)
        slow = any(item.get_closest_marker(m) for m in SPAWNING_MARKERS)
        slow = slow or bool(set(getattr(item, "fixturenames", ())) & SPAWNING_FIXTURES)
        if function is not None and not slow:
            spawning = _spawning_functions(Path(item.path))
            slow = function.__name__ in spawning or bool(
                set(getattr(item, "fixturenames", ())) & spawning
            )
        if slow:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Hide what collection imported from the garbage collector (it is never garbage).

    statsmodels' Holm correction calls gc.collect() on every call, and a full collection
    walks every object the process holds: with the suite collected (620k objects), 0.35 s.
    """
    gc.freeze()


# platform.processor() runs `uname -p` once and caches it; the HTTP clients ask for it, so it
# is asked here, before the audit below would count it as a test's process.
platform.processor()


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit: a test not marked `slow` fails where it starts a process (fix the marking)."""
    if request.node.get_closest_marker("slow"):
        return

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        caller = traceback.extract_stack(limit=4)[0]
        pytest.fail(
            f"{request.node.nodeid} starts a process ({caller.filename}:{caller.lineno}) but is "
            "not marked slow: use a fixture or name tests/conftest.py's SPAWNING_NAMES knows, "
            "or mark it @pytest.mark.slow",
            pytrace=False,
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    for name in ("fork", "posix_spawn", "posix_spawnp", "system"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
