"""An OpenAI-compatible judge client with its own bounded, rate-aware retries.

:class:`OpenAIJudge` implements :class:`judgekit.types.JudgeClient` on ``openai.AsyncOpenAI``
with the SDK's retries switched off: every attempt goes through an :class:`AdaptiveThrottle`.
A request's body is already JSON (messages and options as rendered), so it is posted as it is
(the SDK's documented ``post`` for custom requests) and the reply is read from its decoded JSON:
the SDK's per-call transform of the parameters and its models of the reply were most of the
client's CPU time per request (see docs/benchmarks.md, scale).

* A 429 ("later") starts the throttle's shared cooldown and is retried without counting as a
  retry; only the call's total time under rate limiting is bounded (``patience_s``). A 429 that
  says the quota is spent (``insufficient_quota``) is final.
* Other transient failures (408, 409, 5xx, timeouts, dropped connections, malformed bodies)
  are retried ``max_retries`` times with exponential backoff and full jitter, honouring a
  server's ``retry-after-ms`` / ``Retry-After``.
* 401/403/404 end the whole run at once (401/403 name the key's variable); so does a 400 or an
  unreachable endpoint before any request has succeeded (a wrong URL or an option the endpoint
  refuses, not one bad request), and a storm of :data:`SERVER_ERROR_LIMIT` server errors (5xx)
  before any success: an endpoint that has never answered is not retried row by row.

Defaults, for a judging job: 60 s per attempt (10 s to connect), 4 retries, 15 min of patience
under rate limits. ``timeout_s`` bounds the whole attempt, the reading of the body included, so
an endpoint that drips its answer a byte at a time fails like a hung one: after at most 5 x 60 s
plus about 15 s of backoff; an unreachable one after about 15 s.

The API key is held in memory only: it is never logged, written, or shown by ``repr``, and it
is masked out of any error text and out of the replies themselves (an endpoint that echoes it).
Which key goes to which endpoint is decided in :func:`judgekit.engine.providers.resolve_api_key`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from judgekit.engine.limits import (
    DEFAULT_WINDOW_S,
    AdaptiveThrottle,
    announced_cooldown_s,
    retry_after_seconds,
)
from judgekit.engine.providers import (
    PLACEHOLDER_KEY,
    ProviderPreset,
    endpoint_id,
    get_provider,
    hide_url_credentials,
    resolve_api_key,
    resolve_base_url,
)
from judgekit.engine.replies import chat_reply, without_secret
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.types import ChatReply, ChatRequest, StructuredMode

logger = logging.getLogger(__name__)

_KEY_PATTERN = re.compile(r"\b(sk|key|pk)-[A-Za-z0-9_*.\-]{3,}")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_FATAL_STATUS = frozenset({401, 403, 404})
#: Server errors (5xx) after which an endpoint that has never answered ends the run.
SERVER_ERROR_LIMIT = 8


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


class NotACompletionError(ValueError):
    """A 2xx answer whose body is not a chat completion (an HTML page from a proxy or login)."""


@dataclass(frozen=True)
class _Failure:
    text: str
    retryable: bool
    status_code: int | None = None
    retry_after_s: float | None = None
    rate_limited: bool = False
    fatal: bool = False
    unreachable: bool = False  # a 400, or no HTTP answer at all: fatal before any success


class OpenAIJudge:
    """A judge model behind any OpenAI-compatible chat completions endpoint.

    Args:
        model: Model (or deployment) name, recorded next to every score.
        base_url: Endpoint; defaults to the provider's URL (``OPENAI_BASE_URL`` for the
            ``openai`` and ``generic`` presets and presets without a URL).
        api_key: Key; defaults to the preset's own environment variable only.
        provider: Preset name (see :mod:`judgekit.engine.providers`); ``None`` means OpenAI.
        max_concurrency: Requests in flight.
        requests_per_minute: Client-side request budget (``None`` = learn from the server).
        tokens_per_minute: Client-side token budget, charged with estimated tokens.
        rate_window_s: Window over which the budgets are enforced (see
            :mod:`judgekit.engine.limits`); the provider's own window, or a divisor of it.
        max_retries: Retries of transient failures (429s are not counted, see ``patience_s``).
        timeout_s: Seconds one HTTP attempt may take, the whole reply read (at most 10 to connect).
        patience_s: Longest a call keeps waiting under rate limits (and the longest
            ``Retry-After`` it accepts) before it fails.
        backoff_base_s: First backoff ceiling; doubles per retry (full jitter below it).
        backoff_max_s: Largest backoff ceiling.
        structured_mode: Override of the preset's structured mode.
        preset: A full preset, overriding ``provider`` (e.g. a ``dataclasses.replace`` copy).
        endpoint: Identity of the endpoint in the store's request keys (default: the
            normalised base URL); give a stable name for a server on a changing port.

    Raises:
        MissingAPIKeyError: A provider that needs a key has none (names the variable to set).
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
        rate_window_s: float = DEFAULT_WINDOW_S,
        max_retries: int = 4,
        timeout_s: float = 60.0,
        patience_s: float = 900.0,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        structured_mode: StructuredMode | None = None,
        preset: ProviderPreset | None = None,
        endpoint: str | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        for label, seconds in (("timeout_s", timeout_s), ("patience_s", patience_s)):
            if seconds <= 0:
                raise ValueError(f"{label} must be positive, got {seconds}")
        self.preset = preset or get_provider(provider)
        self._model = model
        self._structured_mode: StructuredMode = structured_mode or self.preset.structured_mode
        self._base_url = resolve_base_url(self.preset, base_url)
        self._endpoint = endpoint or endpoint_id(self._base_url)
        self._api_key = _SecretKey(resolve_api_key(self.preset, api_key, self._base_url))
        self._key_source = (
            "the api_key given"
            if api_key
            else f"the key in {self.preset.api_key_env}"
            if os.environ.get(self.preset.api_key_env)
            else f"no key ({self.preset.api_key_env} is unset)"
        )
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.patience_s = patience_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.throttle = AdaptiveThrottle(
            max_concurrency, requests_per_minute, tokens_per_minute, window_s=rate_window_s
        )
        self._random = random.Random()
        self._answered_once = False
        self._server_errors: list[int] = []  # statuses of the 5xx seen before any success
        self._sdk: openai.AsyncOpenAI | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return (
            f"OpenAIJudge(model={self._model!r}, provider={self.preset.name!r}, "
            f"base_url={self._base_url!r})"
        )

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self._model

    @property
    def base_url(self) -> str:
        """The endpoint's base URL, as requests are sent to it."""
        return self._base_url

    @property
    def endpoint(self) -> str:
        """The endpoint's identity in request keys (normalised base URL unless given)."""
        return self._endpoint

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

    @property
    def max_concurrency(self) -> int:
        """Requests in flight at most (the throttle's cap)."""
        return self.throttle.max_concurrency

    def _secret(self) -> str:
        """The key if it is one (``""`` for the placeholder sent to keyless servers)."""
        key = self._api_key.reveal()
        return "" if key == PLACEHOLDER_KEY else key

    def _redact(self, text: str) -> str:
        if self._secret():
            text = text.replace(self._secret(), "[key]")
        return hide_url_credentials(_KEY_PATTERN.sub("[key]", text))

    def new_sdk(self) -> openai.AsyncOpenAI:
        """A fresh SDK client for this endpoint and its own key (e.g. for the Batch API)."""
        return openai.AsyncOpenAI(
            api_key=self._api_key.reveal(),
            base_url=self._base_url,
            max_retries=0,
            timeout=openai.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
        )

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            self._sdk = self.new_sdk()
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
            if status in (401, 403):
                text += f" ({self._key_source} was refused by {self._base_url})"
            spent = status == 429 and _error_code(exc) == "insufficient_quota"
            retryable = (status in _RETRYABLE_STATUS or status >= 500) and not spent
            return _Failure(
                text=text,
                retryable=retryable,
                status_code=status,
                retry_after_s=retry_after_seconds(exc.response.headers) if retryable else None,
                rate_limited=status == 429 and not spent,
                fatal=status in _FATAL_STATUS or spent,
                unreachable=status == 400,
            )
        if isinstance(exc, openai.APIConnectionError):  # includes timeouts
            return _Failure(
                text=f"{text} (endpoint {self._base_url})", retryable=True, unreachable=True
            )
        if isinstance(exc, TimeoutError):  # the whole attempt, a dripping body included
            return _Failure(
                text=f"no complete answer within timeout_s={self.timeout_s:g} "
                f"(endpoint {self._base_url})",
                retryable=True,
                unreachable=True,
            )
        if isinstance(exc, NotACompletionError):  # the wrong server: fatal before any success
            return _Failure(
                text=f"{text} (endpoint {self._base_url})", retryable=True, unreachable=True
            )
        if isinstance(exc, ValueError):  # a 200 whose body is not valid JSON
            return _Failure(text=f"malformed response body: {text}", retryable=True)
        raise exc

    def _backoff(self, retry_number: int, failure: _Failure) -> float:
        if failure.retry_after_s is not None:
            return failure.retry_after_s + self._random.uniform(0, 0.1 * failure.retry_after_s)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry_number - 1))
        return self._random.uniform(0, ceiling)

    def _reply(self, raw: httpx.Response, latency_s: float, attempts: int) -> ChatReply:
        try:
            completion = raw.json()
        except ValueError:  # not JSON: a proxy's or login page's HTML, or a cut-off body
            completion = None
            if "json" in (raw.headers.get("content-type") or ""):
                raise ValueError("the body is not valid JSON") from None
        if not isinstance(completion, dict) or "choices" not in completion:
            kind = raw.headers.get("content-type") or "untyped"
            start = " ".join(raw.text.split())[:60]
            raise NotACompletionError(
                f"HTTP {raw.status_code} with a {kind} body, not a chat completion (a proxy or "
                f"login page? check the base URL): {start!r}"
            )
        return chat_reply(
            completion,
            model=str(completion.get("model") or self._model),
            latency_s=latency_s,
            request_id=raw.headers.get("x-request-id") or completion.get("id"),
            http_attempts=attempts,
        )

    def _give_up(
        self, failure: _Failure, attempt: int, reason: str, *, storm: bool = False
    ) -> JudgeCallError:
        fatal = failure.fatal or storm or (failure.unreachable and not self._answered_once)
        if fatal and not failure.fatal:
            reason += "; nothing has succeeded on this endpoint, so the run stops"
        return JudgeCallError(
            f"{self._model}: call failed after {attempt} attempt(s) ({reason}): {failure.text}",
            attempts=attempt,
            last_error=failure.text,
            status_code=failure.status_code,
            fatal=fatal,
        )

    async def complete(self, request: ChatRequest) -> ChatReply:
        """Send one chat request, retrying as the module docstring says.

        ``latency_s`` of the reply is the duration of the successful HTTP attempt.

        Raises:
            JudgeCallError: After the last attempt failed, or on a non-retryable error.
        """
        client = self._client()
        body: dict[str, Any] = {"model": self._model, "messages": list(request.messages)}
        body.update(request.options)
        body.update(body.pop("extra_body", None) or {})  # provider extensions, top level
        output_cap = int(body.get(self.max_tokens_param, 0) or 0)
        estimated = estimate_message_tokens(request.messages) + output_cap
        attempt = retries = 0
        first_limited: float | None = None
        while True:
            attempt += 1
            async with self.throttle.slot(estimated) as ticket:
                started = time.perf_counter()
                try:
                    # the SDK hands back its HTTP response as it is (an httpx2 one since
                    # openai 3, which accepts the httpx class here for compatibility)
                    async with asyncio.timeout(self.timeout_s):
                        raw = await client.post(
                            "/chat/completions", body=body, cast_to=httpx.Response
                        )
                    reply = self._reply(raw, time.perf_counter() - started, attempt)
                except Exception as exc:  # classified; unknown ones re-raised
                    failure = self._classify(exc)
                    if failure.rate_limited:  # told inside the slot: it may be a probe
                        self.throttle.on_rate_limited(failure.retry_after_s, ticket)
                else:
                    self._answered_once = True
                    reply = without_secret(reply, self._secret())
                    counted = reply.usage.prompt_tokens + output_cap
                    self.throttle.on_answer(ticket, counted, announced_cooldown_s(raw.headers))
                    return reply
            if failure.rate_limited:  # "later": wait in the shared cooldown, not a retry
                first_limited = first_limited or time.monotonic()
                waited = time.monotonic() - first_limited + (failure.retry_after_s or 0.0)
                if waited > self.patience_s:
                    reason = f"rate limited for longer than patience_s={self.patience_s:g}"
                    raise self._give_up(failure, attempt, reason)
                continue
            if self._storm(failure):
                statuses = ", ".join(str(s) for s in sorted(set(self._server_errors)))
                reason = f"{len(self._server_errors)} server errors (HTTP {statuses})"
                raise self._give_up(failure, attempt, reason, storm=True)
            retries += 1
            if not failure.retryable or retries > self.max_retries:
                reason = "not retryable" if not failure.retryable else "gave up"
                raise self._give_up(failure, attempt, reason)
            delay = self._backoff(retries, failure)
            logger.info("attempt %d failed (%s); retrying in %.2fs", attempt, failure.text, delay)
            await asyncio.sleep(delay)

    def _storm(self, failure: _Failure) -> bool:
        """Count a server error before any success; True once there were too many."""
        if self._answered_once or failure.status_code is None or failure.status_code < 500:
            return False
        self._server_errors.append(failure.status_code)
        return len(self._server_errors) >= SERVER_ERROR_LIMIT


def _error_code(exc: openai.APIStatusError) -> str | None:
    """The ``error.code`` of an API error body, if it has one."""
    body = exc.body
    if isinstance(body, dict):
        code = body.get("code")
        if code is None and isinstance(body.get("error"), dict):
            code = body["error"].get("code")
        return str(code) if code is not None else None
    return None
