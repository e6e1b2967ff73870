r"""Reading a chat completion's JSON body into the contract's :class:`~judgekit.types.ChatReply`.

One reading serves the online client and the Batch API's output lines, so a reply carries the
same fields whichever way it came. The body is read as the decoded JSON (no SDK models: building
them cost more per reply than the rest of judgekit's handling of it).

Text UTF-8 cannot hold (a lone surrogate, which JSON's ``"\ud800"`` decodes to) is kept as the
six characters ``\ud800``, so the reply is stored and its row gets a status like any other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from judgekit.types import ChatReply, TopLogprobs, Usage


def encodable(text: str) -> str:
    r"""``text`` with any lone surrogate written as its ``\uXXXX`` escape (UTF-8 can hold it).

    >>> encodable("ok \ud800 end")
    'ok \\ud800 end'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def without_secret(reply: ChatReply, secret: str) -> ChatReply:
    """``reply`` with every copy of ``secret`` (the API key) in its texts replaced by ``[key]``.

    An endpoint that echoes the key (a debugging proxy, a prompt-injected reply) must not get it
    into the store, the tables or the logs.
    """
    texts = (reply.text, reply.reasoning or "", reply.refusal or "")
    if not secret or all(secret not in text for text in texts):
        return reply

    def scrubbed(text: str | None) -> str | None:
        return None if text is None else text.replace(secret, "[key]")

    return dataclasses.replace(
        reply,
        text=reply.text.replace(secret, "[key]"),
        reasoning=scrubbed(reply.reasoning),
        refusal=scrubbed(reply.refusal),
    )


def _field(mapping: Any, name: str) -> Any:
    """``mapping[name]`` when ``mapping`` is a JSON object holding it, else ``None``."""
    return mapping.get(name) if isinstance(mapping, Mapping) else None


def top_logprobs(choice: Mapping[str, Any]) -> TopLogprobs | None:
    """Per generated token, its alternatives most likely first, the emitted token always in.

    An endpoint may sample a token outside the top alternatives it lists; that token is then
    added at its place by logprob, so the parser can see what was really written. Positions
    without any alternatives (``top_logprobs=0``) stay empty: there is no distribution there.
    """
    content = _field(_field(choice, "logprobs"), "content")
    if not content:
        return None
    positions = []
    for token in content:
        alternatives = [
            (alt["token"], float(alt["logprob"])) for alt in (token.get("top_logprobs") or ())
        ]
        if alternatives and all(alt != token["token"] for alt, _ in alternatives):
            alternatives.append((token["token"], float(token["logprob"])))
            alternatives.sort(key=lambda alt: -alt[1])
        positions.append(tuple(alternatives))
    return tuple(positions)


def usage_of(completion: Mapping[str, Any]) -> Usage:
    """Token counts of a completion (zeros when the endpoint reports none)."""
    usage = _field(completion, "usage")
    if not isinstance(usage, Mapping):
        return Usage()
    cached = _field(usage.get("prompt_tokens_details"), "cached_tokens")
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int(cached or 0),
    )


def chat_reply(
    completion: Any, *, model: str, latency_s: float, request_id: str | None, http_attempts: int
) -> ChatReply:
    """The first choice of a chat completion's JSON body as a :class:`ChatReply`.

    Raises:
        ValueError: If the body is not a completion with at least one choice and a message.
    """
    choices = _field(completion, "choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("reply has no choices")
    choice = choices[0]
    message = _field(choice, "message")
    if not isinstance(message, Mapping):
        raise ValueError("reply's first choice has no message")
    # DeepSeek and older vLLM send reasoning_content; vLLM and OpenRouter send reasoning
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    content = message.get("content")
    finish_reason, refusal = choice.get("finish_reason"), message.get("refusal")
    return ChatReply(
        text=encodable(content) if isinstance(content, str) else "",
        model=encodable(model),
        usage=usage_of(completion),
        latency_s=latency_s,
        finish_reason=encodable(str(finish_reason)) if finish_reason is not None else None,
        request_id=encodable(str(request_id)) if request_id is not None else None,
        top_logprobs=top_logprobs(choice),
        http_attempts=http_attempts,
        reasoning=encodable(reasoning) if isinstance(reasoning, str) else None,
        refusal=encodable(str(refusal)) if refusal else None,
    )
