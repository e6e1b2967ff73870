"""Client-side throttling: a concurrency cap, request/token budgets and adaptive slowdown.

The budgets are leaky buckets (:mod:`aiolimiter`) that hold one second's worth of requests
and ten seconds' worth of tokens, so a per-minute budget is spread over the minute. The buckets
start full, as if the last seconds had been spent at the limit: an empty bucket would admit its
whole capacity at once on top of the steady rate and overshoot a provider's sliding window.

On top of them an additive-increase / multiplicative-decrease factor in ``(0, 1]`` reacts to
rate-limit replies: a 429 halves it (at most once per ``cut_cooldown_s``, so one wave of
concurrent 429s counts once), each later success adds ``recovery_step`` back. The factor scales
both the number of requests allowed in flight and, when a request budget is set, the pace
between request starts.

asyncio primitives belong to one event loop, so they are rebuilt whenever the running loop
changes (``judge()`` may run each call in a fresh loop); the factor itself survives.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiolimiter import AsyncLimiter

REQUEST_BURST_S = 1.0
TOKEN_BURST_S = 10.0


def _bucket(per_minute: float | None, burst_s: float) -> AsyncLimiter | None:
    """A leaky bucket holding ``burst_s`` seconds of a per-minute budget (at least one unit)."""
    if per_minute is None:
        return None
    capacity = max(1.0, per_minute * burst_s / 60.0)
    return AsyncLimiter(capacity, capacity * 60.0 / per_minute)


@dataclass
class _LoopPrimitives:
    loop: asyncio.AbstractEventLoop
    slot_free: asyncio.Condition
    request_budget: AsyncLimiter | None
    token_budget: AsyncLimiter | None
    pace_lock: asyncio.Lock
    primed: bool = False


class AdaptiveThrottle:
    """Admit requests within a concurrency cap and per-minute budgets, slowing after 429s.

    Args:
        max_concurrency: Requests allowed in flight at full speed.
        requests_per_minute: Request budget, or ``None`` for no budget.
        tokens_per_minute: Token budget (estimated prompt + output tokens), or ``None``.
        min_factor: Lowest slowdown factor.
        recovery_step: Factor regained per success once the cooldown has passed.
        cut_cooldown_s: Minimum time between two halvings, and before recovery starts.
    """

    def __init__(
        self,
        max_concurrency: int,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        min_factor: float = 1 / 16,
        recovery_step: float = 1 / 32,
        cut_cooldown_s: float = 1.0,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        for label, budget in (("requests", requests_per_minute), ("tokens", tokens_per_minute)):
            if budget is not None and budget <= 0:
                raise ValueError(f"{label}_per_minute must be positive, got {budget}")
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.min_factor = min_factor
        self.recovery_step = recovery_step
        self.cut_cooldown_s = cut_cooldown_s
        self.factor = 1.0
        self.rate_limited_count = 0
        self._last_cut = -math.inf
        self._next_start = 0.0
        self._in_flight = 0
        self._primitives: _LoopPrimitives | None = None

    @property
    def concurrency_limit(self) -> int:
        """Requests currently allowed in flight."""
        return max(1, math.floor(self.max_concurrency * self.factor))

    def on_rate_limited(self) -> None:
        """Record a 429: halve the factor unless it was cut moments ago."""
        self.rate_limited_count += 1
        now = time.monotonic()
        if now - self._last_cut >= self.cut_cooldown_s:
            self.factor = max(self.min_factor, self.factor / 2)
            self._last_cut = now

    def on_success(self) -> None:
        """Record a success: regain a little speed once the cooldown has passed."""
        if self.factor < 1.0 and time.monotonic() - self._last_cut >= self.cut_cooldown_s:
            self.factor = min(1.0, self.factor + self.recovery_step)

    def _loop_primitives(self) -> _LoopPrimitives:
        loop = asyncio.get_running_loop()
        if self._primitives is None or self._primitives.loop is not loop:
            self._primitives = _LoopPrimitives(
                loop=loop,
                slot_free=asyncio.Condition(),
                request_budget=_bucket(self.requests_per_minute, REQUEST_BURST_S),
                token_budget=_bucket(self.tokens_per_minute, TOKEN_BURST_S),
                pace_lock=asyncio.Lock(),
            )
            self._in_flight = 0
        return self._primitives

    async def _pace(self, primitives: _LoopPrimitives) -> None:
        """Space request starts by the slowed-down request budget (only while slowed)."""
        if self.requests_per_minute is None or self.factor >= 1.0:
            return
        async with primitives.pace_lock:
            interval = 60.0 / (self.requests_per_minute * self.factor)
            wait = self._next_start - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next_start = time.monotonic() + interval

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[None]:
        """Hold one request slot: waits for concurrency, budgets and pacing.

        Args:
            estimated_tokens: Tokens charged to the token budget. A request larger than the
                bucket is charged in bucket-sized chunks, so it still pays its full cost.
        """
        primitives = self._loop_primitives()
        async with primitives.slot_free:
            await primitives.slot_free.wait_for(lambda: self._in_flight < self.concurrency_limit)
            self._in_flight += 1
        try:
            if not primitives.primed:
                primitives.primed = True
                for bucket in (primitives.request_budget, primitives.token_budget):
                    if bucket is not None:
                        await bucket.acquire(bucket.max_rate)
            if primitives.request_budget is not None:
                await primitives.request_budget.acquire(1)
            if primitives.token_budget is not None:
                budget = primitives.token_budget
                remaining = float(max(estimated_tokens, 1))
                while remaining > 0:  # bounded: ceil(estimate / bucket size) iterations
                    chunk = min(remaining, budget.max_rate)
                    await budget.acquire(chunk)
                    remaining -= chunk
            await self._pace(primitives)
            yield
        finally:
            async with primitives.slot_free:
                self._in_flight -= 1
                primitives.slot_free.notify_all()
