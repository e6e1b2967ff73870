"""The simulated judge behind the HTTP layer: answers chat requests, keeps the log and stats."""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from judgekit.simulator.compose import compose_reply
from judgekit.simulator.config import SimulatorConfig
from judgekit.simulator.faults import Draw, SlidingWindowLimiter, body_hash
from judgekit.simulator.pairwise import pairwise_reply
from judgekit.simulator.reading import message_text, read_task
from judgekit.simulator.scoring import score_items
from judgekit.simulator.tokens import logprobs_content, prompt_tokens, tokenize


@dataclass(frozen=True)
class LoggedRequest:
    """One received chat request and what the simulator did with it.

    Attributes:
        body_hash: SHA-256 of the body in canonical JSON.
        body: The request body as received.
        seen: How many times this exact body had been received before (0 = first time).
        outcome: ``ok``, ``malformed``, ``timeout`` (answered late), ``error_500``, ``dropped``,
            ``rate_limited``, ``bad_request``, or ``internal_error`` (a simulator bug).
        status_code: HTTP status answered (0 when the connection was dropped).
        reply_text: The assistant message content; for a request refused with 400 or an
            internal error, the error message; "" otherwise.
        malformations: Malformation kinds applied to the reply.
        finish_reason: ``stop`` or ``length``; None when there was no reply.
        source: ``online`` (chat endpoint) or ``batch`` (a Batch API line).
        prompt_tokens: Reported prompt tokens (0 when unanswered).
        completion_tokens: Reported completion tokens.
        cached_tokens: Reported cached prompt tokens.
    """

    body_hash: str
    body: Mapping[str, Any]
    seen: int
    outcome: str
    status_code: int
    reply_text: str = ""
    malformations: tuple[str, ...] = ()
    finish_reason: str | None = None
    source: str = "online"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class RequestLog:
    """A thread-safe, append-only log of :class:`LoggedRequest` (iterate for a snapshot)."""

    def __init__(self) -> None:
        self._entries: list[LoggedRequest] = []
        self._lock = threading.Lock()

    def append(self, entry: LoggedRequest) -> None:
        """Add an entry."""
        with self._lock:
            self._entries.append(entry)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def snapshot(self) -> list[LoggedRequest]:
        """A copy of the entries so far."""
        with self._lock:
            return list(self._entries)

    def __iter__(self) -> Iterator[LoggedRequest]:
        return iter(self.snapshot())

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __getitem__(self, index: int) -> LoggedRequest:
        with self._lock:
            return self._entries[index]


@dataclass(frozen=True)
class ChatAnswer:
    """What the HTTP layer must do for one chat request."""

    status_code: int
    payload: dict[str, Any] | None  # None: drop the connection
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def error_payload(message: str, kind: str, code: str | None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class Simulator:
    """State shared by every request: seen counts, prompt-prefix cache, limiter, log, stats."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.log = RequestLog()
        self._seen: Counter[str] = Counter()
        self._prefixes: set[str] = set()
        self._stats: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.limiter = SlidingWindowLimiter(
            rpm=config.rate_limit_rpm, tpm=config.rate_limit_tpm, window_s=config.rate_window_s
        )

    def stats(self) -> dict[str, Any]:
        """Counts so far: requests, by outcome, by source, malformations, tokens."""
        with self._lock:
            counts = dict(self._stats)
        grouped: dict[str, Any] = {
            "requests": counts.pop("requests", 0),
            "prompt_tokens": counts.pop("prompt_tokens", 0),
            "completion_tokens": counts.pop("completion_tokens", 0),
            "cached_tokens": counts.pop("cached_tokens", 0),
        }
        for group in ("outcome", "source", "malformation"):
            prefix = f"{group}:"
            grouped[f"by_{group}"] = {
                k[len(prefix) :]: v for k, v in sorted(counts.items()) if k.startswith(prefix)
            }
        return grouped

    def reset_stats(self, *, forget_seen: bool = False) -> None:
        """Zero the counters and clear the log.

        Args:
            forget_seen: Also forget seen bodies, cached prefixes and the rate-limit window
                (as a fresh server would).
        """
        with self._lock:
            self._stats.clear()
            if forget_seen:
                self._seen.clear()
                self._prefixes.clear()
        self.log.clear()
        if forget_seen:
            self.limiter.reset()

    def _record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._stats.update(
                {
                    "requests": 1,
                    f"outcome:{entry.outcome}": 1,
                    f"source:{entry.source}": 1,
                    "prompt_tokens": entry.prompt_tokens,
                    "completion_tokens": entry.completion_tokens,
                    "cached_tokens": entry.cached_tokens,
                }
            )
            self._stats.update(f"malformation:{kind}" for kind in entry.malformations)
        if self.config.keep_log:
            self.log.append(entry)

    def _cached_tokens(self, messages: list[Mapping[str, Any]], model: str) -> int:
        """Tokens of the longest earlier-seen message prefix (then remember this request's)."""
        digests = [
            hashlib.sha256(
                json.dumps([model, messages[:k]], sort_keys=True, ensure_ascii=False).encode()
            ).hexdigest()
            for k in range(1, len(messages) + 1)
        ]
        with self._lock:
            hits = [k for k in range(1, len(messages)) if digests[k - 1] in self._prefixes]
            self._prefixes.update(digests)
        return prompt_tokens(messages[: max(hits)], message_text) if hits else 0

    def answer_chat(self, body: Any, *, source: str = "online") -> ChatAnswer:
        """Decide the full answer to one chat-completions request body.

        A failure inside the simulator itself is answered with HTTP 500 and logged with the
        outcome ``internal_error`` (so tests see it), never passed off as a simulated fault.
        """
        try:
            return self._answer_chat(body, source)
        except Exception as error:  # a simulator bug: report it loudly, keep serving
            text = f"simulator internal error: {type(error).__name__}: {error}"
            return self._refuse(body, source, 500, "internal_error", text, "simulator_bug")

    def _refuse(
        self, body: Any, source: str, status: int, outcome: str, message: str, kind: str
    ) -> ChatAnswer:
        """Log and answer a request that gets an error instead of a reply."""
        received = body if isinstance(body, Mapping) else {}
        digest = body_hash(received)
        self._record(LoggedRequest(digest, received, 0, outcome, status, message, source=source))
        return ChatAnswer(status, error_payload(message, kind, outcome))

    def _answer_chat(self, body: Any, source: str) -> ChatAnswer:
        messages = body.get("messages") if isinstance(body, Mapping) else None
        if not isinstance(messages, list) or not messages:
            message = "'messages' must be a non-empty list"
            return self._refuse(body, source, 400, "bad_request", message, "invalid_request_error")
        if body.get("stream") or int(body.get("n") or 1) != 1:
            message = "the simulator answers non-streaming requests with n=1 only"
            return self._refuse(body, source, 400, "bad_request", message, "invalid_request_error")
        config, digest = self.config, body_hash(body)
        estimate = prompt_tokens(messages, message_text)
        if source == "online":
            cap = int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)
            admitted, wait_s, limit = self.limiter.admit(estimate + cap)
            if not admitted:
                return self._rate_limited(body, digest, wait_s, limit)
        with self._lock:
            seen = self._seen[digest]
            self._seen[digest] += 1
        draw = Draw(config.seed, digest, seen)
        delay = 0.0
        if source == "online":  # Batch API lines have no latency, timeouts or rate limits
            delay = config.latency_s + config.latency_jitter_s * draw.fraction("latency")
        if draw.chance("drop", config.drop_rate):
            self._record(LoggedRequest(digest, body, seen, "dropped", 0, source=source))
            return ChatAnswer(0, None, delay_s=delay)
        if draw.chance("error_500", config.error_500_rate):
            self._record(LoggedRequest(digest, body, seen, "error_500", 500, source=source))
            failure = error_payload("The simulated server had an error.", "server_error", None)
            return ChatAnswer(500, failure, delay_s=delay)
        timed_out = draw.chance("timeout", config.timeout_rate)
        if timed_out and source == "online":
            delay += config.timeout_sleep_s
        task = read_task(body, forced_scale=config.scale)
        reply = pairwise_reply(body, config, draw)  # None unless it compares two answers
        if reply is None:
            reply = compose_reply(task, score_items(task, config, draw), config, draw)
        text, finish_reason = reply.text, reply.finish_reason
        tokens = tokenize(text)
        if task.max_tokens is not None and len(tokens) > task.max_tokens:
            tokens, finish_reason = tokens[: task.max_tokens], "length"
            text = "".join(tokens)
        cached = self._cached_tokens(messages, str(body.get("model", "")))
        entry = LoggedRequest(
            body_hash=digest,
            body=body,
            seen=seen,
            outcome="timeout" if timed_out else ("malformed" if reply.malformations else "ok"),
            status_code=200,
            reply_text=text,
            malformations=reply.malformations,
            finish_reason=finish_reason,
            source=source,
            prompt_tokens=estimate,
            completion_tokens=len(tokens),
            cached_tokens=cached,
        )
        self._record(entry)
        logprobs = None
        if body.get("logprobs"):
            alternatives = int(body.get("top_logprobs") or 0)
            content = logprobs_content(text, task.allowed, config.logprob_confidence, alternatives)
            logprobs = {"content": content, "refusal": None}
        payload = self._completion(entry, str(body.get("model") or config.model), logprobs)
        message = payload["choices"][0]["message"]
        if reply.refusal is not None:
            message.update(content=None, refusal=reply.refusal)
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        headers = {"x-request-id": payload["id"]}
        if source == "online":
            headers.update(self.limiter.announce())
        return ChatAnswer(200, payload, headers, delay)

    def _completion(
        self, entry: LoggedRequest, model: str, logprobs: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The ``chat.completion`` object for a logged reply."""
        return {
            "id": f"chatcmpl-sim-{entry.body_hash[:16]}-{entry.seen}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": f"judgekit-simulator-seed-{self.config.seed}",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": entry.reply_text, "refusal": None},
                    "logprobs": logprobs,
                    "finish_reason": entry.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": entry.prompt_tokens,
                "completion_tokens": entry.completion_tokens,
                "total_tokens": entry.prompt_tokens + entry.completion_tokens,
                "prompt_tokens_details": {"cached_tokens": entry.cached_tokens},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _rate_limited(
        self, body: Mapping[str, Any], digest: str, wait_s: float, limit: str
    ) -> ChatAnswer:
        config = self.config
        if math.isinf(wait_s):
            wait_s = config.rate_window_s
            message = (
                f"Request too large for the simulated tokens limit of {config.rate_limit_tpm}."
            )
        else:
            cap = config.rate_limit_rpm if limit == "requests" else config.rate_limit_tpm
            message = (
                f"Rate limit reached for {limit} per {config.rate_window_s:g} s: limit {cap}. "
                f"Please try again in {wait_s:.3f}s."
            )
        with self._lock:
            seen = self._seen[digest]
        self._record(LoggedRequest(digest, body, seen, "rate_limited", 429))
        headers = {
            **self.limiter.announce(),
            "Retry-After": str(max(1, math.ceil(wait_s))),
            "retry-after-ms": str(max(1, math.ceil(wait_s * 1000))),
        }
        return ChatAnswer(429, error_payload(message, limit, "rate_limit_exceeded"), headers)
