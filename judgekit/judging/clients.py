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
from dataclasses import dataclass, field, fields, replace
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


def _limit(flag: str) -> Any:
    """A client limit: ``None`` keeps the client's default; ``flag`` is its CLI and panel name."""
    return field(default=None, metadata={"flag": flag})


@dataclass(frozen=True)
class EndpointOptions:
    """Which judge answers, how it is reached and how the client treats it.

    The one description of an endpoint, from the CLI's flags, a panel entry or notebook 01's
    parameters; the client is built from it and nothing else (:meth:`client`,
    :func:`local_judge_client`).

    Attributes:
        model: Remote judge model (default: ``JUDGEKIT_JUDGE_MODEL``).
        base_url: OpenAI-compatible endpoint.
        provider: Provider preset name (see :data:`judgekit.engine.PROVIDERS`).
        api_key_env: The variable holding the key, when not the preset's own (a panel's
            ``api_key_env``); never a key.
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
    api_key_env: str | None = None
    max_concurrency: int | None = _limit("max-concurrency")
    requests_per_minute: float | None = _limit("rpm")
    tokens_per_minute: float | None = _limit("tpm")
    timeout_s: float | None = _limit("timeout")
    max_retries: int | None = _limit("max-retries")
    endpoint_name: str | None = None

    @property
    def remote(self) -> bool:
        """Whether a remote endpoint (not the local model) judges."""
        return remote_endpoint_configured(self.base_url, self.provider)

    def judge_model(self) -> str:
        """The remote model's name: ``model``, else ``JUDGEKIT_JUDGE_MODEL`` (``""``: none)."""
        return self.model or os.environ.get(JUDGE_MODEL_ENV) or ""

    def limits(self) -> dict[str, Any]:
        """The limits that were set, by field name (an ``OpenAIJudge`` keyword each)."""
        named = (f.name for f in fields(self) if "flag" in f.metadata)
        return {name: getattr(self, name) for name in named if getattr(self, name) is not None}

    def _keywords(self) -> dict[str, Any]:
        """Limits and store identity as ``OpenAIJudge`` keywords (the one place they are)."""
        named = {"endpoint": f"name:{self.endpoint_name}"} if self.endpoint_name else {}
        return {**self.limits(), **named}

    def client(self) -> Any:
        """The remote :class:`~judgekit.engine.OpenAIJudge` this endpoint describes.

        The key is read from ``api_key_env`` when given, else by the preset from its own
        variable; it is never stored here.

        Raises:
            MissingAPIKeyError: A provider that needs a key has none.
        """
        from judgekit.engine import OpenAIJudge

        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return OpenAIJudge(
            self.judge_model(),
            base_url=self.base_url,
            provider=self.provider,
            api_key=key or None,
            **self._keywords(),
        )


#: Each client limit's field, by its CLI flag and panel-file name (``rpm``, ``timeout``, ...).
LIMIT_FLAGS: dict[str, str] = {
    f.metadata["flag"]: f.name for f in fields(EndpointOptions) if "flag" in f.metadata
}


def check_endpoint(endpoint: EndpointOptions) -> None:
    """Refuse endpoint settings that cannot work, before any server starts or call is made.

    The base URL and the key are resolved as the client resolves them
    (:func:`judgekit.engine.resolve_base_url`, :func:`judgekit.engine.resolve_api_key`).

    A judge with its own ``api_key_env`` needs that variable set, not the preset's.

    Raises:
        UsageError: One line naming the option or environment variable to fix.
    """
    from judgekit.engine import get_provider, resolve_api_key, resolve_base_url

    for flag, name in LIMIT_FLAGS.items():
        value = getattr(endpoint, name)
        if name == "max_retries" and value is not None and value < 0:
            raise UsageError(f"--{flag} {value}: give 0 or more")
        if name != "max_retries" and value is not None and value <= 0:
            raise UsageError(f"--{flag} {value:g}: give a positive number (or leave it out)")
    try:
        preset = get_provider(endpoint.provider)
    except ValueError as error:
        raise UsageError(f"--provider: {error}") from None
    if not endpoint.remote:
        return
    url = resolve_base_url(preset, endpoint.base_url)
    if not endpoint.judge_model():
        raise UsageError(f"no judge model: pass --model NAME (or set {JUDGE_MODEL_ENV})")
    if endpoint.api_key_env is None:
        resolve_api_key(preset, None, url)
    elif not os.environ.get(endpoint.api_key_env):
        raise UsageError(f"no API key: set {endpoint.api_key_env} (its api_key_env)")


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
    """A client to render requests with, never called and starting no server (dry runs).

    Remote: the very client the run uses (:meth:`EndpointOptions.client`); local: the local
    judge's client at a URL that says the server is not started.
    """
    if endpoint.remote:
        return endpoint.client()
    return _local_client("http://127.0.0.1/v1 (not started)", DEFAULT_MODEL_ALIAS, endpoint)


def remote_endpoint_configured(base_url: str | None = None, provider: str | None = None) -> bool:
    """Whether the caller or the environment names an endpoint other than the local model."""
    return bool(base_url or provider or any(os.environ.get(name) for name in REMOTE_ENV_VARS))


def local_model_label(server: LocalJudgeServer) -> str:
    """A short human name for the served model (``SmolLM2-135M`` for the bundled one)."""
    if server.model_path is not None and server.model_path.name == SMOLLM2_FILE:
        return "SmolLM2-135M"
    return server.model_path.stem if server.model_path is not None else server.model_alias


def local_judge_client(server: LocalJudgeServer, endpoint: EndpointOptions | None = None) -> Any:
    """Build an :class:`~judgekit.engine.OpenAIJudge` for a running local server.

    The ``llamacpp`` preset is used (schema-constrained ``json_object`` replies). Logprobs are
    only claimed when the server keeps them (``LocalServerConfig.logprobs``).

    Args:
        server: A started :class:`LocalJudgeServer`.
        endpoint: Limits overriding :data:`LOCAL_CLIENT_DEFAULTS`, and an ``endpoint_name``
            (its model, provider and base URL are the server's).
    """
    return _local_client(
        server.base_url, server.model_alias, endpoint or EndpointOptions(), server.settings.logprobs
    )


def _local_client(
    base_url: str, alias: str, endpoint: EndpointOptions, logprobs: bool = False
) -> Any:
    from judgekit.engine import PLACEHOLDER_KEY, OpenAIJudge, get_provider

    preset = replace(
        get_provider("llamacpp"),
        base_url=base_url,
        supports_logprobs=logprobs,
        notes="judgekit's local llama-cpp-python server (judgekit.local).",
    )
    # The server gets a free port each time; its identity in the store's keys is the local judge.
    # It is judgekit's own process: the placeholder, never a key of the user's llama.cpp server.
    keywords = {"endpoint": "judgekit-local", **LOCAL_CLIENT_DEFAULTS, **endpoint._keywords()}
    return OpenAIJudge(alias, base_url=base_url, preset=preset, api_key=PLACEHOLDER_KEY, **keywords)


@contextlib.contextmanager
def default_judge_client(
    endpoint: EndpointOptions | None = None,
    *,
    server_settings: LocalServerConfig | None = None,
    log_dir: str | Path | None = None,
    notice_stream: TextIO | None = None,
) -> Iterator[Any]:
    """Yield the judge client to use, starting (and later stopping) the local server if needed.

    Remote when the endpoint names a base URL or provider, or ``OPENAI_API_KEY`` /
    ``OPENAI_BASE_URL`` is set: :meth:`EndpointOptions.client` (keys are read from the
    environment and never stored). Otherwise local: the llama.cpp server is started, one line on
    stderr says which model judges and where, and the endpoint's limits apply to its client.

    Args:
        endpoint: The judge and its limits (default: everything from the environment).
        server_settings: Local server configuration.
        log_dir: Folder for the local server's log (e.g. the run folder).
        notice_stream: Where the one-line local-judge notice goes (default: stderr).

    Yields:
        A :class:`judgekit.types.JudgeClient`.

    Raises:
        ValueError: Remote without a model name.
        LocalJudgeUnavailable: Local, but the ``local`` extra or the model is missing.
        LocalServerError: Local, but the server did not start.
    """
    endpoint = endpoint or EndpointOptions()
    if endpoint.remote:
        if not endpoint.judge_model():
            raise ValueError(f"no judge model: pass model=... or set {JUDGE_MODEL_ENV}")
        yield endpoint.client()
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
        yield local_judge_client(server, endpoint)


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
