"""Reading an SDK chat completion into the contract's :class:`~judgekit.types.ChatReply`.

One reading serves the online client and the Batch API's output lines, so a reply carries the
same fields whichever way it came.
"""

from __future__ import annotations

from typing import Any

from judgekit.types import ChatReply, TopLogprobs, Usage


def top_logprobs(choice: Any) -> TopLogprobs | None:
    """Per generated token, its alternatives most likely first, the emitted token always in.

    An endpoint may sample a token outside the top alternatives it lists; that token is then
    added at its place by logprob, so the parser can see what was really written. Positions
    without any alternatives (``top_logprobs=0``) stay empty: there is no distribution there.
    """
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    positions = []
    for token in content:
        alternatives = [(alt.token, float(alt.logprob)) for alt in (token.top_logprobs or ())]
        if alternatives and all(alt != token.token for alt, _ in alternatives):
            alternatives.append((token.token, float(token.logprob)))
            alternatives.sort(key=lambda alt: -alt[1])
        positions.append(tuple(alternatives))
    return tuple(positions)


def usage_of(response: Any) -> Usage:
    """Token counts of a completion (zeros when the endpoint reports none)."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(
        prompt_tokens=int(usage.prompt_tokens or 0),
        completion_tokens=int(usage.completion_tokens or 0),
        cached_tokens=int(cached or 0),
    )


def chat_reply(
    completion: Any, *, model: str, latency_s: float, request_id: str | None, http_attempts: int
) -> ChatReply:
    """The first choice of a parsed ``ChatCompletion`` as a :class:`ChatReply`.

    Raises:
        ValueError: If the completion has no choices.
    """
    if not completion.choices:
        raise ValueError("reply has no choices")
    choice = completion.choices[0]
    message = choice.message
    # DeepSeek and older vLLM send reasoning_content; vLLM and OpenRouter send reasoning
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    return ChatReply(
        text=message.content or "",
        model=model,
        usage=usage_of(completion),
        latency_s=latency_s,
        finish_reason=choice.finish_reason,
        request_id=request_id,
        top_logprobs=top_logprobs(choice),
        http_attempts=http_attempts,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        refusal=getattr(message, "refusal", None) or None,
    )
