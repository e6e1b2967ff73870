"""Deterministic fault decisions and a real sliding-window rate limiter."""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def body_hash(body: Mapping[str, Any]) -> str:
    """SHA-256 of the request body in canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def unit(*parts: object) -> float:
    """A number in [0, 1) that is a pure function of ``parts`` (no global random state)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Draw:
    """The random-looking decisions for one request: a function of body, sightings and seed."""

    seed: int
    body_hash: str
    seen: int  # how many times this body had been received before this request

    def chance(self, kind: str, rate: float, *extra: object) -> bool:
        """Whether an event of ``kind`` with probability ``rate`` happens."""
        return rate > 0 and unit(self.seed, self.body_hash, self.seen, kind, *extra) < rate

    def fraction(self, kind: str, *extra: object) -> float:
        """A uniform [0, 1) draw for ``kind``."""
        return unit(self.seed, self.body_hash, self.seen, kind, *extra)


class SlidingWindowLimiter:
    """Requests-per-window and tokens-per-window limits over a sliding time window.

    Only admitted requests count against the window, as with the real API.
    """

    def __init__(self, *, rpm: int | None, tpm: int | None, window_s: float) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self.window_s = window_s
        self._admitted: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def admit(self, tokens: int) -> tuple[bool, float, str]:
        """Try to admit a request of ``tokens`` tokens now.

        Returns:
            (admitted, seconds until a retry can succeed, which limit was hit: "requests" or
            "tokens"; "" when admitted).
        """
        if self.rpm is None and self.tpm is None:
            return True, 0.0, ""
        now = time.monotonic()
        with self._lock:
            while self._admitted and self._admitted[0][0] <= now - self.window_s:
                self._admitted.popleft()
            if self.rpm is not None and len(self._admitted) >= self.rpm:
                wait = self._admitted[len(self._admitted) - self.rpm][0] + self.window_s - now
                return False, max(wait, 0.001), "requests"
            if self.tpm is not None:
                used = sum(t for _, t in self._admitted)
                if used + tokens > self.tpm:
                    if tokens > self.tpm:
                        return False, math.inf, "tokens"
                    freed, wait = used + tokens - self.tpm, 0.0
                    for stamp, spent in self._admitted:
                        freed -= spent
                        wait = stamp + self.window_s - now
                        if freed <= 0:
                            break
                    return False, max(wait, 0.001), "tokens"
            self._admitted.append((now, tokens))
            return True, 0.0, ""

    def announce(self) -> dict[str, str]:
        """The ``x-ratelimit-*`` headers of the current window, as OpenAI names them.

        ``remaining`` counts what the window still admits; ``reset`` is how long until the
        oldest admitted request leaves it (when one more would fit if none were left).
        """
        headers: dict[str, str] = {}
        now = time.monotonic()
        with self._lock:
            while self._admitted and self._admitted[0][0] <= now - self.window_s:
                self._admitted.popleft()
            reset = self._admitted[0][0] + self.window_s - now if self._admitted else 0.0
            used = {"requests": len(self._admitted), "tokens": sum(t for _, t in self._admitted)}
        for kind, cap in (("requests", self.rpm), ("tokens", self.tpm)):
            if cap is not None:
                headers[f"x-ratelimit-limit-{kind}"] = str(cap)
                headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, cap - used[kind]))
                headers[f"x-ratelimit-reset-{kind}"] = f"{max(reset, 0.0):.3f}s"
        return headers

    def reset(self) -> None:
        """Forget every admitted request."""
        with self._lock:
            self._admitted.clear()
