"""Rough token counts for budgets and cost estimates (never used as measurements).

``tiktoken`` is used when it is installed, knows the model and can load its encoding (it downloads
the encoding on first use, which fails offline); otherwise a token is taken to be four
characters, a common rule of thumb for English that undercounts Hungarian and code.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

#: Characters per token in the fallback estimate.
CHARS_PER_TOKEN = 4.0


@lru_cache(maxsize=16)
def _encoder(model: str) -> Any:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.encoding_for_model(model)
    except Exception:  # unknown model, or the encoding cannot be fetched (offline)
        return None


def estimate_text_tokens(text: str, model: str = "") -> int:
    """Estimated token count of ``text`` (tiktoken if available for ``model``, else chars/4)."""
    encoder = _encoder(model) if model else None
    if encoder is not None:
        return len(encoder.encode(text))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message_tokens(messages: Iterable[Mapping[str, str]], model: str = "") -> int:
    """Estimated prompt tokens of chat messages (content only, plus a few per message)."""
    return sum(estimate_text_tokens(m.get("content", ""), model) + 4 for m in messages)
