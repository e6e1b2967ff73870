"""Start, health-check and stop a llama.cpp OpenAI-compatible server for the offline judge.

The server runs ``python -m llama_cpp.server`` in its own process group on a free port of
127.0.0.1 and writes everything it prints to a log file, never to the console. Every server this
module starts is stopped again: by the context manager, by an :mod:`atexit` guard, and (when
started from the main thread on Linux) by the kernel if the parent process dies abruptly.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from judgekit import config
from judgekit.local.model import (
    find_local_model,
    require_local_extra,
)

#: The name the server answers to and the engine records next to every score.
DEFAULT_MODEL_ALIAS = "SmolLM2-135M-Instruct-Q4_1"
#: Fits a 60-row batch of the longest riddle rubric (reasoning, ~12k tokens) plus the reply.
DEFAULT_N_CTX = 16384
LOG_TAIL_LINES = 25
#: Launches tried when a free port is taken by someone else before the server binds it.
PORT_ATTEMPTS = 3
_PR_SET_PDEATHSIG = 1


class LocalServerError(RuntimeError):
    """The llama.cpp server did not come up, or died."""


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class LocalServerConfig:
    """How to run the llama.cpp server.

    Attributes:
        model_path: GGUF file; ``None`` = :func:`find_local_model`.
        model_alias: The model name the server reports and clients send.
        host: Interface to bind; keep it on loopback.
        port: TCP port; ``None`` = a free one.
        n_ctx: Context window in tokens (prompt plus reply).
        n_threads: CPU threads for generation and prompt processing; ``None`` = all cores.
        n_batch: Prompt tokens evaluated per step.
        logprobs: Keep logits for every position so replies can carry ``logprobs``. This costs
            ``n_ctx * vocabulary * 4`` bytes (3.2 GB for SmolLM2 at 16k), so it is off by default.
        startup_timeout_s: How long to wait for the server to answer before giving up.
        log_dir: Folder for the server log; ``None`` = ``runs/local-judge/``.
        extra_args: More ``llama_cpp.server`` command-line arguments, passed through.
    """

    model_path: Path | None = None
    model_alias: str = DEFAULT_MODEL_ALIAS
    host: str = "127.0.0.1"
    port: int | None = None
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int | None = None
    n_batch: int = 512
    logprobs: bool = False
    startup_timeout_s: float = 120.0
    log_dir: Path | None = None
    extra_args: tuple[str, ...] = field(default=())


def _server_settings_names() -> set[str]:
    """Names the server reads from the environment (pydantic-settings, no prefix)."""
    from llama_cpp.server.settings import ConfigFileSettings, Settings

    return (
        {name.upper() for name in Settings.model_fields}
        | {name.upper() for name in ConfigFileSettings.model_fields}
        | {"CONFIG_FILE"}
    )


def _child_environment() -> dict[str, str]:
    """The parent's environment minus variables that would silently reconfigure the server."""
    shadowing = _server_settings_names()
    return {key: value for key, value in os.environ.items() if key.upper() not in shadowing}


def _die_with_parent() -> Callable[[], None] | None:
    """A pre-exec hook asking Linux to SIGKILL the child when the parent thread dies.

    SIGKILL, not SIGTERM: uvicorn answers SIGTERM by finishing the request in flight, which for
    a long generation with nobody left to read it can take minutes.
    """
    if not sys.platform.startswith("linux"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None  # the signal fires when the *thread* ends, which would kill a live server
    libc = ctypes.CDLL(None, use_errno=True)

    def hook() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return hook


_LIVE_SERVERS: set[LocalJudgeServer] = set()
_LIVE_LOCK = threading.Lock()


def _stop_all_servers() -> None:
    with _LIVE_LOCK:
        servers = list(_LIVE_SERVERS)
    for server in servers:
        server.stop()


atexit.register(_stop_all_servers)


class LocalJudgeServer:
    """A llama.cpp server in a child process; use it as a context manager.

    Example::

        with LocalJudgeServer() as server:
            print(server.base_url)  # http://127.0.0.1:PORT/v1
    """

    def __init__(self, settings: LocalServerConfig | None = None, **overrides: Any) -> None:
        """Prepare (not start) a server.

        Args:
            settings: Full configuration; defaults to :class:`LocalServerConfig()`.
            **overrides: Fields of :class:`LocalServerConfig` to replace.
        """
        self.settings = replace(settings or LocalServerConfig(), **overrides)
        self.model_path: Path | None = None
        self.port: int | None = None
        self.log_path: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def model_alias(self) -> str:
        """The model name to send in requests."""
        return self.settings.model_alias

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``http://HOST:PORT/v1``."""
        if self.port is None:
            raise LocalServerError("the local judge server has not been started")
        return f"http://{self.settings.host}:{self.port}/v1"

    def is_running(self) -> bool:
        """Whether the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def healthy(self, timeout_s: float = 2.0) -> bool:
        """Whether the server answers ``GET /v1/models`` with HTTP 200."""
        if not self.is_running():
            return False
        try:
            answer = httpx.get(f"{self.base_url}/models", timeout=timeout_s)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def memory_mb(self) -> dict[str, float]:
        """Resident memory of the server now and at its peak, in MiB (Linux ``/proc`` only)."""
        if not self.is_running() or self.pid is None:
            return {}
        status = Path(f"/proc/{self.pid}/status")
        if not status.is_file():
            return {}
        wanted = {"VmRSS": "rss_mb", "VmHWM": "peak_rss_mb"}
        found: dict[str, float] = {}
        for line in status.read_text().splitlines():
            key, _, value = line.partition(":")
            if key in wanted:
                found[wanted[key]] = int(value.split()[0]) / 1024
        return found

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines the server wrote to its log."""
        if self.log_path is None or not self.log_path.is_file():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def command(self) -> list[str]:
        """The command line that starts the server (after :attr:`model_path` and port are set)."""
        threads = self.settings.n_threads or os.cpu_count() or 1
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.settings.model_alias,
            "--host",
            self.settings.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.settings.n_ctx),
            "--n_batch",
            str(self.settings.n_batch),
            "--n_threads",
            str(threads),
            "--n_threads_batch",
            str(threads),
            "--logits_all",
            str(self.settings.logprobs),
            "--seed",
            "0",
            *self.settings.extra_args,
        ]

    def start(self) -> LocalJudgeServer:
        """Launch the server and wait until it answers.

        Returns:
            This server, running.

        Raises:
            LocalJudgeUnavailable: If the extra or the model is missing.
            LocalServerError: If the server exits or stays silent past the startup timeout;
                the message carries the tail of its log. A lost race for an automatically
                chosen port is retried on a new port.
        """
        if self.is_running():
            return self
        require_local_extra()
        self.model_path = find_local_model(self.settings.model_path)
        attempts = 0
        while True:
            attempts += 1
            self._launch()
            try:
                self._wait_until_healthy()
                return self
            except LocalServerError:
                self.stop()
                lost_port = "address already in use" in self.log_tail().lower()
                if self.settings.port is not None or not lost_port or attempts == PORT_ATTEMPTS:
                    raise
            except BaseException:
                self.stop()
                raise

    def _launch(self) -> None:
        self.port = self.settings.port or free_port(self.settings.host)
        log_dir = self.settings.log_dir or config.RUNS_DIR / "local-judge"
        log_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.log_path = log_dir / f"llama-server-{stamp}-{self.port}.log"
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_child_environment(),
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
        with _LIVE_LOCK:
            _LIVE_SERVERS.add(self)

    def _wait_until_healthy(self) -> None:
        deadline = time.monotonic() + self.settings.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise LocalServerError(
                    f"llama.cpp server exited with code {self._process.returncode} while "
                    f"starting (log: {self.log_path}):\n{self.log_tail()}"
                )
            if self.healthy():
                return
            time.sleep(0.2)
        raise LocalServerError(
            f"llama.cpp server did not answer within {self.settings.startup_timeout_s:.0f} s "
            f"(log: {self.log_path}):\n{self.log_tail()}"
        )

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop the server: SIGTERM its process group, wait, then SIGKILL. Safe to call twice."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            self._signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal_group(process, signal.SIGKILL)
                process.wait()
        self._process = None
        with _LIVE_LOCK:
            _LIVE_SERVERS.discard(self)

    @staticmethod
    def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)

    def __enter__(self) -> LocalJudgeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"LocalJudgeServer({self.settings.model_alias!r}, port={self.port}, {state})"
