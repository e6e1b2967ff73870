"""An OpenAI-compatible judge client with its own bounded, rate-aware retries.

:class:`OpenAIJudge` implements :class:`judgekit.types.JudgeClient` on ``openai.AsyncOpenAI``
with the SDK's retries switched off: every attempt goes through an :class:`AdaptiveThrottle`,
retryable failures (429, 408, 409, 5xx, timeouts, dropped connections, malformed bodies) are
retried with exponential backoff and full jitter, and a server's ``retry-after-ms`` /
``Retry-After`` is honoured. The API key is held in memory only: it is never logged, written,
or shown by ``repr``, and it is masked out of any error text.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import openai

from judgekit.engine.limits import AdaptiveThrottle
from judgekit.engine.providers import ProviderPreset, get_provider
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.types import ChatReply, ChatRequest, StructuredMode, TopLogprobs, Usage

logger = logging.getLogger(__name__)

#: Key used for local servers that accept anything (not a secret).
PLACEHOLDER_KEY = "not-needed"
_KEY_PATTERN = re.compile(r"\b(sk|key|pk)-[A-Za-z0-9_*.\-]{3,}")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_FATAL_STATUS = frozenset({401, 403, 404})


class _SecretKey:
    """An API key that cannot leak through ``repr``, ``vars`` dumps or pickling."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The key itself, for the HTTP client only."""
        return self._value

    def __repr__(self) -> str:
        return "<api key hidden>"

    def __reduce__(self) -> Any:
        raise TypeError("API keys are never pickled; pass the key through the environment")


class MissingAPIKeyError(ValueError):
    """No API key was given or found in the environment."""


class JudgeCallError(RuntimeError):
    """A chat call that failed for good.

    Attributes:
        attempts: HTTP attempts made.
        last_error: Text of the last error (keys masked).
        status_code: HTTP status of the last error, if it was an HTTP error.
        fatal: True when retrying other requests is pointless too (bad key, unknown model).
    """

    def __init__(
        self, message: str, *, attempts: int, last_error: str, status_code: int | None, fatal: bool
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_error = last_error
        self.status_code = status_code
        self.fatal = fatal


@dataclass(frozen=True)
class _Failure:
    text: str
    retryable: bool
    status_code: int | None = None
    retry_after_s: float | None = None
    rate_limited: bool = False
    fatal: bool = False


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms`` first, then ``Retry-After``)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _top_logprobs(choice: Any) -> TopLogprobs | None:
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


def _usage(response: Any) -> Usage:
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


class OpenAIJudge:
    """A judge model behind any OpenAI-compatible chat completions endpoint.

    Args:
        model: Model (or deployment) name, recorded next to every score.
        base_url: Endpoint; defaults to ``OPENAI_BASE_URL`` or the provider's URL.
        api_key: Key; defaults to the provider's environment variable, then ``OPENAI_API_KEY``.
        provider: Preset name (see :mod:`judgekit.engine.providers`); ``None`` means OpenAI.
        max_concurrency: Requests in flight at full speed.
        requests_per_minute: Client-side request budget (``None`` = unlimited).
        tokens_per_minute: Client-side token budget, charged with estimated tokens.
        max_retries: Retries after the first attempt.
        timeout_s: Per-attempt HTTP timeout.
        backoff_base_s: First backoff ceiling; doubles per retry (full jitter below it).
        backoff_max_s: Largest backoff ceiling.
        max_retry_after_s: A server asking to wait longer than this ends the call.
        structured_mode: Override of the preset's structured mode.
        preset: A full preset, overriding ``provider`` (e.g. a ``dataclasses.replace`` copy).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str | None = None,
        max_concurrency: int = 8,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_retries: int = 6,
        timeout_s: float = 120.0,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        max_retry_after_s: float = 300.0,
        structured_mode: StructuredMode | None = None,
        preset: ProviderPreset | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.preset = preset or get_provider(provider)
        self._model = model
        self._structured_mode: StructuredMode = structured_mode or self.preset.structured_mode
        self.base_url = self._resolve_base_url(base_url)
        self._api_key = self._resolve_key(api_key)
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.max_retry_after_s = max_retry_after_s
        self.throttle = AdaptiveThrottle(max_concurrency, requests_per_minute, tokens_per_minute)
        self._random = random.Random()
        self._sdk: openai.AsyncOpenAI | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    def _resolve_base_url(self, base_url: str | None) -> str:
        if base_url:
            return base_url
        env_url = os.environ.get("OPENAI_BASE_URL")
        generic = self.preset.name in ("openai", "generic") or self.preset.base_url is None
        if env_url and generic:
            return env_url
        if self.preset.base_url:
            return self.preset.base_url
        raise ValueError(f"provider {self.preset.name!r} needs base_url (or OPENAI_BASE_URL)")

    def _resolve_key(self, api_key: str | None) -> _SecretKey | None:
        key = api_key or os.environ.get(self.preset.api_key_env) or os.environ.get("OPENAI_API_KEY")
        if key:
            return _SecretKey(key)
        return None if self.preset.key_required else _SecretKey(PLACEHOLDER_KEY)

    def __repr__(self) -> str:
        return (
            f"OpenAIJudge(model={self._model!r}, provider={self.preset.name!r}, "
            f"base_url={self.base_url!r})"
        )

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self._model

    @property
    def structured_mode(self) -> StructuredMode:
        """How this endpoint enforces a JSON schema."""
        return self._structured_mode

    @property
    def supports_seed(self) -> bool:
        """Whether the ``seed`` option is sent."""
        return self.preset.supports_seed

    @property
    def supports_logprobs(self) -> bool:
        """Whether ``logprobs`` can be requested."""
        return self.preset.supports_logprobs

    @property
    def max_tokens_param(self) -> str:
        """Name of the output-length option for this endpoint."""
        return self.preset.max_tokens_param

    def _redact(self, text: str) -> str:
        if self._api_key is not None and self._api_key.reveal() != PLACEHOLDER_KEY:
            text = text.replace(self._api_key.reveal(), "[key]")
        return _KEY_PATTERN.sub("[key]", text)

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            if self._api_key is None:
                raise MissingAPIKeyError(
                    f"no API key for provider {self.preset.name!r}: set "
                    f"{self.preset.api_key_env} (or OPENAI_API_KEY) in the environment"
                )
            self._sdk = openai.AsyncOpenAI(
                api_key=self._api_key.reveal(),
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout_s,
            )
            self._sdk_loop = loop
        return self._sdk

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop (reopened on the next call)."""
        if self._sdk is not None and self._sdk_loop is asyncio.get_running_loop():
            await self._sdk.close()
        self._sdk = None
        self._sdk_loop = None

    def _classify(self, exc: Exception) -> _Failure:
        text = self._redact(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retryable = status in _RETRYABLE_STATUS or status >= 500
            return _Failure(
                text=text,
                retryable=retryable,
                status_code=status,
                retry_after_s=retry_after_seconds(exc.response.headers) if retryable else None,
                rate_limited=status == 429,
                fatal=status in _FATAL_STATUS,
            )
        if isinstance(exc, openai.APIConnectionError | openai.APIResponseValidationError):
            return _Failure(text=text, retryable=True)
        if isinstance(exc, ValueError):  # a 200 whose body is not valid JSON
            return _Failure(text=f"malformed response body: {text}", retryable=True)
        raise exc

    def _backoff(self, retry_number: int, failure: _Failure) -> float:
        if failure.retry_after_s is not None:
            return failure.retry_after_s + self._random.uniform(0, 0.1 * failure.retry_after_s)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry_number - 1))
        return self._random.uniform(0, ceiling)

    def _reply(self, response: Any, latency_s: float, attempts: int) -> ChatReply:
        choice = response.choices[0]
        message = choice.message
        # DeepSeek and older vLLM send reasoning_content; vLLM and OpenRouter send reasoning
        reasoning = getattr(message, "reasoning_content", None) or getattr(
            message, "reasoning", None
        )
        return ChatReply(
            text=message.content or "",
            model=str(getattr(response, "model", "") or self._model),
            usage=_usage(response),
            latency_s=latency_s,
            finish_reason=choice.finish_reason,
            request_id=getattr(response, "_request_id", None) or getattr(response, "id", None),
            top_logprobs=_top_logprobs(choice),
            http_attempts=attempts,
            reasoning=reasoning if isinstance(reasoning, str) else None,
            refusal=getattr(message, "refusal", None) or None,
        )

    async def complete(self, request: ChatRequest) -> ChatReply:
        """Send one chat request, retrying transient failures; see the class docstring.

        ``latency_s`` of the reply is the duration of the successful HTTP attempt.

        Raises:
            JudgeCallError: After the last attempt failed, or on a non-retryable error.
            MissingAPIKeyError: If the provider needs a key and none was found.
        """
        client = self._client()
        kwargs: dict[str, Any] = dict(request.options)
        extra_body = kwargs.pop("extra_body", None)
        estimated = estimate_message_tokens(request.messages) + int(
            kwargs.get(self.max_tokens_param, 0) or 0
        )
        attempt = 0
        while True:
            attempt += 1
            async with self.throttle.slot(estimated):
                started = time.perf_counter()
                try:
                    response = await client.chat.completions.create(
                        model=self._model,
                        messages=list(request.messages),  # type: ignore[arg-type]
                        extra_body=extra_body,
                        **kwargs,
                    )
                    if not getattr(response, "choices", None):
                        raise ValueError("reply has no choices")
                except Exception as exc:  # classified; unknown ones re-raised
                    failure = self._classify(exc)
                else:
                    self.throttle.on_success()
                    return self._reply(response, time.perf_counter() - started, attempt)
            if failure.rate_limited:
                self.throttle.on_rate_limited()
            too_long = (failure.retry_after_s or 0.0) > self.max_retry_after_s
            if not failure.retryable or attempt > self.max_retries or too_long:
                reason = "not retryable" if not failure.retryable else "gave up"
                if too_long:
                    reason = f"server asked to wait {failure.retry_after_s:.0f}s"
                raise JudgeCallError(
                    f"{self._model}: call failed after {attempt} attempt(s) ({reason}): "
                    f"{failure.text}",
                    attempts=attempt,
                    last_error=failure.text,
                    status_code=failure.status_code,
                    fatal=failure.fatal,
                )
            delay = self._backoff(attempt, failure)
            logger.info("attempt %d failed (%s); retrying in %.2fs", attempt, failure.text, delay)
            await asyncio.sleep(delay)
