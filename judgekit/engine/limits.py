"""Client-side rate limiting: a concurrency cap, sliding-window budgets and a shared cooldown.

Providers count requests and tokens over a sliding window (OpenAI's "30 requests per 10 s"
means any 10 s span holds at most 30 admitted requests). Told the budget, the throttle keeps
the same kind of window over the times requests *start*: a request may start when fewer than
``capacity`` started in the last ``window_s`` seconds (plus ``margin_s``, which absorbs the
difference between our start and the server's arrival time). A window shorter than the
server's, and dividing it, is always safe: every server window is then a sum of client windows.
Token bookings are settled to what the server counted once the reply arrives, and estimates are
scaled by the ratio counted / estimated learnt so far.

Not told the budget, the server's own signals drive it. A 429 (or a reply announcing
``x-ratelimit-remaining-requests: 0``) starts a **cooldown shared by every worker**: no request
starts before the time the server named (``Retry-After`` / ``x-ratelimit-reset-requests``),
and each waiter wakes at a jittered moment after it. After a 429 a single request goes first
(a probe); the others follow once it was not refused, so the wave that was turned away does not
arrive again in one burst to collide with the same limit. Told the budget, the window already
spaces requests: a 429 (the server's clock disagreeing with ours) still cools everyone down and
is taken back out of the window, but no probe is needed and announced budgets are not used.

asyncio primitives belong to one event loop, so they are rebuilt whenever the running loop
changes (``judge()`` may run each call in a fresh loop); windows and cooldowns survive.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

#: Default length of the client-side window: a divisor of the providers' 60 s minute.
DEFAULT_WINDOW_S = 10.0
#: Longest a waiting request sleeps before looking at the budgets again.
RECHECK_S = 0.1


class SlidingWindow:
    """At most ``capacity`` units may start within any ``window_s`` seconds.

    Args:
        capacity: Units (requests, or estimated tokens) per window.
        window_s: Window length in seconds.
        margin_s: Extra seconds an old start is kept in the window.
    """

    def __init__(self, capacity: float, window_s: float, margin_s: float) -> None:
        self.capacity = capacity
        self.window_s = window_s
        self.margin_s = margin_s
        self._starts: deque[tuple[float, float]] = deque()
        self._used = 0.0

    def wait_for(self, units: float, now: float) -> float:
        """Seconds until ``units`` fit in the window (0 when they fit now).

        A request larger than the whole capacity waits for an empty window, then starts.
        """
        span = self.window_s + self.margin_s
        while self._starts and self._starts[0][0] <= now - span:
            self._used -= self._starts.popleft()[1]
        needed = self._used + min(units, self.capacity) - self.capacity
        if needed <= 1e-9:
            return 0.0
        freed = 0.0
        for stamp, spent in self._starts:
            freed += spent
            if freed >= needed - 1e-9:
                return stamp + span - now
        return span  # unreachable: the whole window frees within one span

    def take(self, units: float, now: float) -> None:
        """Record ``units`` starting at ``now``.

        A request larger than the capacity is charged in full: its excess is booked as
        capacity-sized starts one window apart, so it holds the budget for as many windows.
        """
        span = self.window_s + self.margin_s
        booked = 0
        while units > 1e-9:
            chunk = min(units, self.capacity)
            self._starts.append((now + booked * span, chunk))
            self._used += chunk
            units -= chunk
            booked += 1

    def settle(self, stamp: float, units: float, counted: float) -> None:
        """Replace the ``units`` booked at ``stamp`` by what the server ``counted`` (0: refund).

        A start booked over several windows (larger than the capacity) stays booked in full.
        """
        if units > self.capacity:
            return
        for index, (when, spent) in enumerate(self._starts):
            if when == stamp and spent == min(units, self.capacity):
                self._used += counted - spent
                if counted > 0:
                    self._starts[index] = (when, counted)
                else:
                    del self._starts[index]
                return


@dataclass
class Ticket:
    """One admitted request: when it started, its tokens, whether it is a probe."""

    started: float
    tokens: float  # charged to the token budget
    estimated: int  # our own estimate, before scaling
    probe: bool
    refused: bool = False


@dataclass
class _LoopPrimitives:
    """The throttle's asyncio objects for one event loop.

    ``slots`` caps the requests in flight: a finished request hands its slot to exactly one
    waiter (a semaphore wakes one, and a cancelled waiter passes its wake-up on), so the cost
    of finishing does not grow with the number of requests still waiting. ``no_probe`` is set
    while no probe is in flight; it is cleared and set again only around a probe (rare).
    """

    loop: asyncio.AbstractEventLoop
    slots: asyncio.Semaphore
    no_probe: asyncio.Event
    admission: asyncio.Lock


class AdaptiveThrottle:
    """Admit requests within a concurrency cap, optional budgets, and the server's cooldowns.

    Args:
        max_concurrency: Requests allowed in flight.
        requests_per_minute: Request budget, or ``None`` when not told.
        tokens_per_minute: Token budget (estimated prompt + output tokens), or ``None``.
        window_s: Length of the client-side sliding window (the budget is scaled to it).
        margin_s: Safety margin added to the window (default 2% of it, at most 0.25 s).
        jitter_s: Wake-ups after a cooldown are spread uniformly over this many seconds
            (default: a tenth of the cooldown, at most 1 s).
        seed: Seed of the jitter draws.
    """

    def __init__(
        self,
        max_concurrency: int,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        window_s: float = DEFAULT_WINDOW_S,
        margin_s: float | None = None,
        jitter_s: float | None = None,
        seed: int | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        for label, budget in (("requests", requests_per_minute), ("tokens", tokens_per_minute)):
            if budget is not None and budget <= 0:
                raise ValueError(f"{label}_per_minute must be positive, got {budget}")
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        margin = min(0.25, 0.02 * window_s) if margin_s is None else margin_s
        self._windows = [
            (kind, SlidingWindow(max(1.0, budget * window_s / 60.0), window_s, margin))
            for kind, budget in (("requests", requests_per_minute), ("tokens", tokens_per_minute))
            if budget is not None
        ]
        self.jitter_s = jitter_s
        self.rate_limited_count = 0
        self.cooldown_until = 0.0
        self._probing = False  # after a 429: one request at a time until one is not refused
        self._probe_in_flight = False
        self._random = random.Random(seed)
        self._tokens_estimated = 0
        self._tokens_counted = 0
        self._primitives: _LoopPrimitives | None = None

    def cool_down(self, seconds: float) -> None:
        """Hold every new request for ``seconds`` (a cooldown in progress is only extended)."""
        if seconds > 0:
            self.cooldown_until = max(self.cooldown_until, time.monotonic() + seconds)

    def on_answer(
        self, ticket: Ticket, counted_tokens: int | None, announced_cooldown_s: float | None
    ) -> None:
        """Record a reply to ``ticket``'s request.

        The token budget is charged what the server counted (its ``prompt_tokens`` plus the
        output cap) instead of our estimate. Not told the limit, a budget the reply announces
        as spent holds everyone.
        """
        if counted_tokens:
            self._tokens_estimated += ticket.estimated
            self._tokens_counted += counted_tokens
            for kind, window in self._windows:
                if kind == "tokens":
                    window.settle(ticket.started, ticket.tokens, float(counted_tokens))
        if announced_cooldown_s and self.requests_per_minute is None:
            self.cool_down(announced_cooldown_s)

    def on_rate_limited(self, retry_after_s: float | None, ticket: Ticket) -> None:
        """Record the 429 of ``ticket``'s request: everyone cools down, then a probe goes.

        The refused start is taken back out of the budgets: the server did not count it.
        Without ``Retry-After`` everyone holds for a second.
        """
        self.rate_limited_count += 1
        ticket.refused = True
        for kind, window in self._windows:
            window.settle(ticket.started, 1.0 if kind == "requests" else ticket.tokens, 0.0)
        self._probing = self.requests_per_minute is None  # told: the window already spaces
        self.cool_down(1.0 if retry_after_s is None else retry_after_s)

    def _loop_primitives(self) -> _LoopPrimitives:
        loop = asyncio.get_running_loop()
        if self._primitives is None or self._primitives.loop is not loop:
            no_probe = asyncio.Event()
            self._probe_in_flight = False  # a probe of a finished loop never reports back
            no_probe.set()
            slots = asyncio.Semaphore(self.max_concurrency)
            self._primitives = _LoopPrimitives(loop, slots, no_probe, asyncio.Lock())
        return self._primitives

    async def _sit_out_cooldown(self) -> None:
        """Sleep until the shared cooldown is over, waking at a jittered moment after it."""
        while (remaining := self.cooldown_until - time.monotonic()) > 0:
            spread = min(1.0, 0.1 * remaining) if self.jitter_s is None else self.jitter_s
            await asyncio.sleep(remaining + self._random.uniform(0.0, spread))

    @property
    def token_ratio(self) -> float:
        """Tokens the server counted per token we estimated, over the replies so far (1 before)."""
        if self._tokens_estimated == 0:
            return 1.0
        return self._tokens_counted / self._tokens_estimated

    async def _admit(self, primitives: _LoopPrimitives, estimated_tokens: int) -> Ticket:
        """Wait for the cooldown, a running probe and the budgets; then start.

        The token budget is charged the estimate scaled by :attr:`token_ratio`, so a tokenizer
        that counts differently from ours is learned from the replies.
        """
        while True:
            await self._sit_out_cooldown()
            await primitives.no_probe.wait()
            async with primitives.admission:
                while True:
                    now = time.monotonic()
                    if self.cooldown_until > now or self._probe_in_flight:
                        break  # a 429 or a probe began meanwhile: wait again
                    tokens = max(1.0, estimated_tokens * self.token_ratio)  # learnt meanwhile
                    units = {"requests": 1.0, "tokens": tokens}
                    waits = [window.wait_for(units[kind], now) for kind, window in self._windows]
                    if max(waits, default=0.0) <= 0:
                        for kind, window in self._windows:
                            window.take(units[kind], now)
                        if self._probing:
                            self._probe_in_flight = True
                            primitives.no_probe.clear()
                        return Ticket(now, tokens, max(estimated_tokens, 1), self._probing)
                    # re-check at least every RECHECK_S: replies may settle bookings meanwhile
                    await asyncio.sleep(min(max(waits), RECHECK_S))

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[Ticket]:
        """Hold one request slot: waits for concurrency, the cooldown and the budgets.

        Report a 429 (:meth:`on_rate_limited`) or a reply (:meth:`on_answer`) before leaving
        the slot, so that a probe's outcome is known when it ends.

        Args:
            estimated_tokens: Tokens charged to the token budget (a request larger than the
                whole budget is charged over as many windows as it fills).
        """
        primitives = self._loop_primitives()
        async with primitives.slots:
            ticket: Ticket | None = None
            try:
                ticket = await self._admit(primitives, estimated_tokens)
                yield ticket
            finally:
                if ticket is not None and ticket.probe:  # probing on only if it was refused
                    self._probe_in_flight = False
                    self._probing = ticket.refused
                    primitives.no_probe.set()


def parse_duration_s(text: str | None) -> float | None:
    """Seconds in an ``x-ratelimit-reset-*`` value (``"1s"``, ``"6m0s"``, ``"250ms"``)."""
    if not text:
        return None
    total, number = 0.0, ""
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    index = 0
    try:
        while index < len(text):
            char = text[index]
            if char.isdigit() or char == ".":
                number += char
                index += 1
                continue
            unit = "ms" if text.startswith("ms", index) else char
            total += float(number) * units[unit]
            number, index = "", index + len(unit)
        return total + (float(number) if number else 0.0)
    except (KeyError, ValueError):
        return None


def announced_cooldown_s(headers: Mapping[str, str]) -> float | None:
    """Seconds to hold new requests when a reply says the request budget is used up.

    Reads ``x-ratelimit-remaining-requests``; when it is 0, the wait is
    ``x-ratelimit-reset-requests`` (None when the headers are absent or the budget is left).
    """
    remaining = headers.get("x-ratelimit-remaining-requests")
    try:
        if remaining is None or math.floor(float(remaining)) > 0:
            return None
    except ValueError:
        return None
    return parse_duration_s(headers.get("x-ratelimit-reset-requests"))


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
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
