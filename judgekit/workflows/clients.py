"""Choosing the judge: a remote endpoint when one is configured, else the local llama.cpp model.

:func:`default_judge_client` is what the CLI, the demo and the notebooks call. With neither
``OPENAI_API_KEY`` nor ``OPENAI_BASE_URL`` set (and no endpoint passed in) it starts the local
server, says so in one line on stderr, and yields an :class:`~judgekit.engine.OpenAIJudge`
pointed at it; the server stops when the ``with`` block ends. The bundled SmolLM2-135M proves
that the pipeline works end to end; it is far too small to be a research-grade judge.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from judgekit.local.model import SMOLLM2_FILE
from judgekit.local.server import (
    DEFAULT_MODEL_ALIAS,
    LocalJudgeServer,
    LocalServerConfig,
    LocalServerError,
)
from judgekit.types import UsageError

#: Names the remote judge model when ``default_judge_client`` is given none.
JUDGE_MODEL_ENV = "JUDGEKIT_JUDGE_MODEL"
#: Environment variables whose presence means "a remote endpoint is configured".
REMOTE_ENV_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL")
#: The local server answers one request at a time; long batches queue behind each other.
LOCAL_CLIENT_DEFAULTS: dict[str, Any] = {"max_concurrency": 1, "timeout_s": 900.0, "max_retries": 2}


@dataclass(frozen=True)
class EndpointOptions:
    """Which judge answers and how the client treats it (the CLI's endpoint flags).

    Attributes:
        model: Remote judge model (default: ``JUDGEKIT_JUDGE_MODEL``).
        base_url: OpenAI-compatible endpoint.
        provider: Provider preset name (see :data:`judgekit.engine.PROVIDERS`).
        max_concurrency: Requests in flight.
        requests_per_minute: Client-side request budget.
        tokens_per_minute: Client-side token budget.
        timeout_s: Seconds one HTTP attempt may take.
        max_retries: Retries of a failed call.
        endpoint_name: The endpoint's identity in the store's request keys, instead of its
            base URL: the same study replays when the server moves host or port.
    """

    model: str | None = None
    base_url: str | None = None
    provider: str | None = None
    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    endpoint_name: str | None = None

    @property
    def remote(self) -> bool:
        """Whether a remote endpoint (not the local model) judges."""
        return remote_endpoint_configured(self.base_url, self.provider)

    def client_options(self) -> dict[str, Any]:
        """``OpenAIJudge`` keywords for the options that were set (the others keep defaults)."""
        options = {
            "max_concurrency": self.max_concurrency,
            "requests_per_minute": self.requests_per_minute,
            "tokens_per_minute": self.tokens_per_minute,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "endpoint": f"name:{self.endpoint_name}" if self.endpoint_name else None,
        }
        return {name: value for name, value in options.items() if value is not None}


def check_endpoint(endpoint: EndpointOptions, *, key_checked: bool = False) -> None:
    """Refuse endpoint settings that cannot work, before any server starts or call is made.

    The base URL and the key are resolved as the client resolves them
    (:func:`judgekit.engine.resolve_base_url`, :func:`judgekit.engine.resolve_api_key`).

    ``key_checked``: the caller found the key in a variable of its own (a panel judge's
    ``api_key_env``), so the preset's variable is not required.

    Raises:
        UsageError: One line naming the option or environment variable to fix.
    """
    from judgekit.engine import get_provider, resolve_api_key, resolve_base_url

    positive = {
        "--max-concurrency": endpoint.max_concurrency,
        "--rpm": endpoint.requests_per_minute,
        "--tpm": endpoint.tokens_per_minute,
        "--timeout": endpoint.timeout_s,
    }
    for flag, value in positive.items():
        if value is not None and value <= 0:
            raise UsageError(f"{flag} {value:g}: give a positive number (or leave it out)")
    if endpoint.max_retries is not None and endpoint.max_retries < 0:
        raise UsageError(f"--max-retries {endpoint.max_retries}: give 0 or more")
    try:
        preset = get_provider(endpoint.provider)
    except ValueError as error:
        raise UsageError(f"--provider: {error}") from None
    if not endpoint.remote:
        return
    url = resolve_base_url(preset, endpoint.base_url)
    if not (endpoint.model or os.environ.get(JUDGE_MODEL_ENV)):
        raise UsageError(f"no judge model: pass --model NAME (or set {JUDGE_MODEL_ENV})")
    if not key_checked:
        resolve_api_key(preset, None, url)


def probe_endpoint(endpoint: EndpointOptions) -> None:
    """Open (and close) a TCP connection to the remote endpoint: fail in one line, not later.

    The URL is the one the client will use (:func:`judgekit.engine.resolve_base_url`).

    Raises:
        UsageError: When the host cannot be resolved or does not accept connections.
    """
    from judgekit.engine import get_provider, resolve_base_url

    url = resolve_base_url(get_provider(endpoint.provider), endpoint.base_url)
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection(
            (parts.hostname, port), timeout=min(10.0, endpoint.timeout_s or 10.0)
        ):
            pass
    except OSError as error:
        raise UsageError(f"cannot reach the judge at {url}: {error.strerror or error}") from None


def planning_client(endpoint: EndpointOptions) -> Any:
    """A client to render requests with, never called and starting no server (dry runs)."""
    from judgekit.engine import PLACEHOLDER_KEY, OpenAIJudge, get_provider

    if endpoint.remote:
        name = endpoint.model or os.environ.get(JUDGE_MODEL_ENV) or ""
        return OpenAIJudge(
            name,
            base_url=endpoint.base_url,
            provider=endpoint.provider,
            **endpoint.client_options(),
        )
    preset = replace(get_provider("llamacpp"), base_url="http://127.0.0.1/v1 (not started)")
    return OpenAIJudge(
        DEFAULT_MODEL_ALIAS, base_url=preset.base_url, preset=preset, api_key=PLACEHOLDER_KEY
    )


def remote_endpoint_configured(base_url: str | None = None, provider: str | None = None) -> bool:
    """Whether the caller or the environment names an endpoint other than the local model."""
    return bool(base_url or provider or any(os.environ.get(name) for name in REMOTE_ENV_VARS))


def local_model_label(server: LocalJudgeServer) -> str:
    """A short human name for the served model (``SmolLM2-135M`` for the bundled one)."""
    if server.model_path is not None and server.model_path.name == SMOLLM2_FILE:
        return "SmolLM2-135M"
    return server.model_path.stem if server.model_path is not None else server.model_alias


def local_judge_client(server: LocalJudgeServer, **client_options: Any) -> Any:
    """Build an :class:`~judgekit.engine.OpenAIJudge` for a running local server.

    The ``llamacpp`` preset is used (schema-constrained ``json_object`` replies). Logprobs are
    only claimed when the server keeps them (``LocalServerConfig.logprobs``).

    Args:
        server: A started :class:`LocalJudgeServer`.
        **client_options: ``OpenAIJudge`` keywords overriding :data:`LOCAL_CLIENT_DEFAULTS`.
    """
    from judgekit.engine import PLACEHOLDER_KEY, OpenAIJudge, get_provider

    preset = replace(
        get_provider("llamacpp"),
        base_url=server.base_url,
        supports_logprobs=server.settings.logprobs,
        notes="judgekit's local llama-cpp-python server (judgekit.local).",
    )
    # The server gets a free port each time; its identity in the store's keys is the local judge.
    # It is judgekit's own process: the placeholder, never a key of the user's llama.cpp server.
    options = {
        "endpoint": "judgekit-local",
        "api_key": PLACEHOLDER_KEY,
        **LOCAL_CLIENT_DEFAULTS,
        **client_options,
    }
    return OpenAIJudge(server.model_alias, base_url=server.base_url, preset=preset, **options)


@contextlib.contextmanager
def default_judge_client(
    model: str | None = None,
    *,
    base_url: str | None = None,
    provider: str | None = None,
    server_settings: LocalServerConfig | None = None,
    log_dir: str | Path | None = None,
    notice_stream: TextIO | None = None,
    **client_options: Any,
) -> Iterator[Any]:
    """Yield the judge client to use, starting (and later stopping) the local server if needed.

    Remote when ``base_url`` or ``provider`` is given or ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``
    is set: the client is built from the environment by :class:`~judgekit.engine.OpenAIJudge`
    (keys are read there and never stored). Otherwise local: the llama.cpp server is started
    and one line on stderr says which model judges and where.

    Args:
        model: Remote model name; defaults to ``JUDGEKIT_JUDGE_MODEL``. Ignored when local (the
            served model is recorded under its alias).
        base_url: Remote endpoint.
        provider: Remote provider preset name (``"openai"``, ``"vllm"``, ``"ollama"``, ...).
        server_settings: Local server configuration.
        log_dir: Folder for the local server's log (e.g. the run folder).
        notice_stream: Where the one-line local-judge notice goes (default: stderr).
        **client_options: More ``OpenAIJudge`` keywords (concurrency, timeouts, ...).

    Yields:
        A :class:`judgekit.types.JudgeClient`.

    Raises:
        ValueError: Remote without a model name.
        LocalJudgeUnavailable: Local, but the ``local`` extra or the model is missing.
        LocalServerError: Local, but the server did not start.
    """
    if remote_endpoint_configured(base_url, provider):
        from judgekit.engine import OpenAIJudge

        name = model or os.environ.get(JUDGE_MODEL_ENV)
        if not name:
            raise ValueError(f"no judge model: pass model=... or set {JUDGE_MODEL_ENV}")
        yield OpenAIJudge(name, base_url=base_url, provider=provider, **client_options)
        return
    settings = server_settings or LocalServerConfig()
    if log_dir is not None:
        settings = replace(settings, log_dir=Path(log_dir))
    with LocalJudgeServer(settings) as server:
        print(
            "No OPENAI_API_KEY/OPENAI_BASE_URL: judging with the local "
            f"{local_model_label(server)} (plumbing check, not a research-grade judge) "
            f"at {server.base_url}",
            file=notice_stream or sys.stderr,
            flush=True,
        )
        yield local_judge_client(server, **client_options)


def serve_local_command(
    settings: LocalServerConfig | None = None, *, out: TextIO | None = None
) -> None:
    """Run the local judge server in the foreground until Ctrl-C (``judgekit serve-local``).

    Args:
        settings: Port, model file, context, threads, logprobs, log folder (default: a free
            port and the bundled SmolLM2, see :class:`LocalServerConfig`).
        out: Where the connection details are printed (default: stdout).

    Raises:
        LocalJudgeUnavailable: If the ``local`` extra or the model is missing.
        LocalServerError: If the server fails to start or dies while serving.
    """
    from judgekit.config import stop_on_signals

    stream = out or sys.stdout
    try:
        with stop_on_signals(), LocalJudgeServer(settings or LocalServerConfig()) as server:
            print(
                f"Local judge {local_model_label(server)} (plumbing check, not a research-grade "
                f"judge) serving at {server.base_url}\n"
                f"  base URL: {server.base_url}\n"
                f"  model:    {server.model_alias}\n"
                "  provider: llamacpp (replies constrained by JSON-schema grammars)\n"
                f"  log:      {server.log_path}\n"
                "Press Ctrl-C to stop.",
                file=stream,
                flush=True,
            )
            while server.is_running():
                time.sleep(0.5)
            raise LocalServerError(
                f"the local judge server stopped unexpectedly (log: {server.log_path}):\n"
                f"{server.log_tail()}"
            )
    except KeyboardInterrupt:
        print("Local judge stopped.", file=stream, flush=True)
