"""Token estimates never stop a run: an encoding that cannot be loaded falls back to chars/4."""

from __future__ import annotations

import sys
import types

import pytest

from judgekit.engine import tokens


def test_an_encoding_that_cannot_be_fetched_falls_back_to_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # tiktoken downloads its encodings on first use; offline that raises a connection error
    offline = types.ModuleType("tiktoken")

    def encoding_for_model(model: str) -> None:
        raise ConnectionError("no network")

    offline.encoding_for_model = encoding_for_model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", offline)
    tokens._encoder.cache_clear()
    try:
        assert tokens.estimate_text_tokens("x" * 40, "gpt-4.1") == 10
    finally:
        tokens._encoder.cache_clear()
