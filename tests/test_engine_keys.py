"""Each preset sends only its own key: the Authorization header is captured per preset."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from json_endpoint import JsonEndpoint

from judgekit import config
from judgekit.engine import GENERIC, PROVIDERS, MissingAPIKeyError, OpenAIJudge
from judgekit.engine.providers import PLACEHOLDER_KEY
from judgekit.types import ChatRequest

PRESETS = [*PROVIDERS.values(), GENERIC]
KEY_VARIABLES = sorted({preset.api_key_env for preset in PRESETS})
REQUEST = ChatRequest(messages=({"role": "user", "content": "Score: 1"},), options={})


class _CapturingHandler(JsonEndpoint):
    """Answers every chat request with one fixed reply and records its Authorization header."""

    def answer(self) -> tuple[int, dict[str, Any]]:
        self.server.seen.append(self.headers.get("Authorization", ""))  # type: ignore[attr-defined]
        return 200, {
            "id": "chatcmpl-capture",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "1"},
                    "finish_reason": "stop",
                }
            ],
        }


@pytest.fixture
def capture() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CapturingHandler)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _sent_header(preset_name: str, base_url: str, seen: list[str]) -> str:
    judge = OpenAIJudge("m", provider=preset_name, base_url=base_url, max_retries=0)

    async def call() -> None:
        await judge.complete(REQUEST)
        await judge.aclose()

    asyncio.run(call())
    return seen[-1]


def test_every_preset_sends_its_own_key_and_no_other(capture, monkeypatch) -> None:
    base_url, seen = capture
    for variable in KEY_VARIABLES:
        monkeypatch.setenv(variable, f"canary-{variable}")
    for preset in PRESETS:
        assert _sent_header(preset.name, base_url, seen) == f"Bearer canary-{preset.api_key_env}"


def test_with_only_openai_key_no_other_provider_receives_it(capture, monkeypatch) -> None:
    base_url, seen = capture
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai-only")
    for preset in PRESETS:
        if preset.api_key_env == "OPENAI_API_KEY":
            expected = "Bearer canary-openai-only"  # OpenAI itself, or the user's own base URL
        else:
            # local servers, and any preset pointed at this machine, get a placeholder
            expected = f"Bearer {PLACEHOLDER_KEY}"
            if preset.key_required:  # a hosted provider at its own host refuses before calling
                with pytest.raises(MissingAPIKeyError, match=f"set {preset.api_key_env}"):
                    OpenAIJudge("m", provider=preset.name, base_url="https://hosted.example/v1")
        assert _sent_header(preset.name, base_url, seen) == expected
    openai_presets = [p for p in PRESETS if p.api_key_env == "OPENAI_API_KEY"]
    assert seen.count("Bearer canary-openai-only") == len(openai_presets)


def test_an_explicit_key_is_sent_as_given(capture, monkeypatch) -> None:
    base_url, seen = capture
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai")
    judge = OpenAIJudge("m", provider="vllm", base_url=base_url, api_key="canary-vllm-given")
    asyncio.run(judge.complete(REQUEST))
    assert seen == ["Bearer canary-vllm-given"]


def test_the_documented_keys_table_matches_the_presets() -> None:
    readme = (config.ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    for preset in PRESETS:
        without = "required" if preset.key_required else "placeholder sent"
        assert f"| `{preset.name}` | `{preset.api_key_env}` | {without} |" in readme, preset.name
