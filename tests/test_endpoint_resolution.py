"""The pre-flight check, the connection probe and the client resolve an endpoint one way.

Every preset (and no ``--provider``) x which of ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and the
preset's own variable are set x ``--base-url`` given or not: the check, the probe and the
client reach the same verdict, the same host and the same key variable, and those are what the
docs/engine.md's key table says. The probe's connection is recorded instead of opened (the hosted
providers' hosts are not reachable from the tests); the two command-line cases at the end run
the real command against real sockets.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from judgekit import config
from judgekit.engine import GENERIC, PROVIDERS, ProviderPreset
from judgekit.engine.providers import PLACEHOLDER_KEY
from judgekit.judging import clients
from judgekit.judging.clients import EndpointOptions, check_endpoint, probe_endpoint
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import UsageError

PRESETS: list[ProviderPreset] = [*PROVIDERS.values(), GENERIC]
KEY_VARIABLES = sorted({preset.api_key_env for preset in PRESETS} | {"OPENAI_API_KEY"})
ENV_URLS = (None, "https://proxy.example/v1", "http://127.0.0.1:9/v1")
GIVEN_URLS = (None, "https://given.example/v1", "http://localhost:7/v1")
LOCAL = ("localhost", "127.0.0.1")


def expected(preset: ProviderPreset, env: dict[str, str], given: str | None) -> tuple[Any, ...]:
    """(verdict, host, key) as docs/engine.md's key table states them, written out independently."""
    env_url = env.get("OPENAI_BASE_URL")
    if given:
        url = given
    elif env_url and (preset.name in ("openai", "generic") or preset.base_url is None):
        url = env_url
    elif preset.base_url:
        url = preset.base_url
    else:
        return (f"provider {preset.name!r} needs a base URL", None, None)
    host = urlsplit(url).hostname
    if env.get(preset.api_key_env):
        return ("ok", host, f"canary-{preset.api_key_env}")
    if not preset.key_required or host in LOCAL:
        return ("ok", host, PLACEHOLDER_KEY)
    return (f"set {preset.api_key_env} ", None, None)


def observed(
    provider: str | None, given: str | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, ...]:
    """(check's verdict, probe's host, client's host and key), each as the CLI reaches them."""
    endpoint = EndpointOptions(model="m", provider=provider, base_url=given)
    try:
        check_endpoint(endpoint)
        check = "ok"
    except UsageError as error:
        check = str(error)
    probed: list[str] = []

    class _Recorded:
        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: object) -> None:
            return None

    def record(address: tuple[str, int], timeout: float) -> _Recorded:
        probed.append(address[0])
        return _Recorded()

    monkeypatch.setattr(clients.socket, "create_connection", record)
    probe_error = None
    try:
        probe_endpoint(endpoint)
    except UsageError as error:
        probe_error = str(error)
    try:
        with clients.default_judge_client(EndpointOptions("m", given, provider)) as client:
            client_host = urlsplit(client.base_url).hostname
            key = client._api_key.reveal()
        client_verdict = "ok"
    except UsageError as error:
        client_verdict, client_host, key = str(error), None, None
    return check, probe_error, probed, client_verdict, client_host, key


@pytest.mark.parametrize("provider", [None, *(p.name for p in PRESETS)])
def test_check_probe_and_client_agree_for_every_setting(
    provider: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = (
        PROVIDERS["openai"] if provider is None else next(p for p in PRESETS if p.name == provider)
    )
    own_values = (False, True) if preset.api_key_env != "OPENAI_API_KEY" else (False,)
    cases = 0
    for openai_key in (False, True):
        for env_url in ENV_URLS:
            for own_key in own_values:
                for given in GIVEN_URLS:
                    env = {"OPENAI_API_KEY": "canary-OPENAI_API_KEY"} if openai_key else {}
                    if env_url:
                        env["OPENAI_BASE_URL"] = env_url
                    if own_key:
                        env[preset.api_key_env] = f"canary-{preset.api_key_env}"
                    for name in {*KEY_VARIABLES, "OPENAI_BASE_URL"}:
                        monkeypatch.delenv(name, raising=False)
                    for name, value in env.items():
                        monkeypatch.setenv(name, value)
                    if provider is None and not given and not env:
                        continue  # no endpoint at all: the local judge answers
                    case = (provider, env, given)
                    verdict, host, key = expected(preset, env, given)
                    check, probe_error, probed, client_verdict, client_host, client_key = observed(
                        provider, given, monkeypatch
                    )
                    if verdict == "ok":
                        assert check == client_verdict == "ok", case
                        assert probe_error is None and probed == [host] == [client_host], case
                        assert client_key == key, case
                    else:
                        assert verdict in check and check == client_verdict, (case, check)
                        assert "\n" not in check
                    cases += 1
    assert cases >= 9


def _judge_command(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    (folder / "items.csv").write_text(
        "ID,Question,Answer,Ref_Answer\n1,Capital of France?,Paris,Paris\n2,2+2?,5,4\n",
        encoding="utf-8",
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    clean = {k: v for k, v in clean.items() if not k.endswith("_API_KEY")}
    clean["PYTHONPATH"] = os.pathsep.join([str(config.ROOT), clean.get("PYTHONPATH", "")])
    clean["JUDGEKIT_LOCAL_MODEL"] = str(folder / "no-model.gguf")  # the local judge never starts
    argv = ["judge", "items.csv", "--rubric", "factual_accuracy", "--output", "o.csv", *args]
    return subprocess.run(
        [sys.executable, "-m", "judgekit", *argv],
        cwd=folder,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_gemini_without_its_key_stops_in_one_line_and_never_reaches_openai(
    tmp_path: Path,
) -> None:
    with socket.socket() as openai_host:
        openai_host.bind(("127.0.0.1", 0))
        openai_host.listen()
        port = openai_host.getsockname()[1]
        env = {"OPENAI_API_KEY": "canary-openai", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
        result = _judge_command(tmp_path, env, "--provider", "gemini", "--model", "m")
        openai_host.setblocking(False)
        with pytest.raises(BlockingIOError):
            openai_host.accept()  # nobody connected to the OpenAI base URL's host
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert "set GEMINI_API_KEY" in lines[0] and "canary" not in result.stderr
    assert not (tmp_path / "o.csv").exists()


def test_a_local_base_url_without_a_key_gets_the_placeholder(tmp_path: Path) -> None:
    with run_simulator(SimulatorConfig()) as sim:
        env = {"OPENAI_BASE_URL": sim.base_url}
        result = _judge_command(tmp_path, env, "--model", "sim-judge")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o.csv").exists()
