"""The reusable steps of a judging run: render a batch into a request, then call or replay it.

A :class:`JudgeSession` holds what every step of one ``judge()`` call shares (rubric, client,
store, settings, counters). Judging modes (independent batches, a running conversation) are
built from :meth:`JudgeSession.build_request`, :meth:`JudgeSession.call_or_replay` and the row
builders in :mod:`judgekit.engine.rows`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.engine.client import JudgeCallError
from judgekit.engine.providers import structured_options
from judgekit.engine.store import RequestKey, ResponseStore, StoredCall
from judgekit.types import ChatReply, ChatRequest, Item, JudgeClient, Rubric

logger = logging.getLogger(__name__)


class OfflineStoreMissError(LookupError):
    """An offline run needed a reply the store does not hold (``key``: the request's key)."""

    def __init__(self, message: str, key: RequestKey | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class JudgeSettings:
    """Generation and control options shared by every request of one run.

    Attributes:
        temperature: Sampling temperature (sent always).
        seed: Seed sent when the endpoint honours seeds (``None`` = never sent).
        seed_per_run: Send ``seed + run - 1`` instead of the same seed for every run.
        max_tokens: Output cap, sent under the endpoint's parameter name (``None`` = not sent).
        structured: Render the JSON form and enforce the rubric's schema.
        logprobs: Ask for ``top_logprobs`` alternatives per generated token.
        top_logprobs: How many alternatives to ask for.
        max_reasks: How many times failed rows of a batch are asked again.
        offline: Answer only from the store.
    """

    temperature: float = 0.0
    seed: int | None = 0
    seed_per_run: bool = False
    max_tokens: int | None = None
    structured: bool = False
    logprobs: bool = False
    top_logprobs: int = 20
    max_reasks: int = 2
    offline: bool = False


@dataclass(frozen=True)
class CallOutcome:
    """What one request produced: a reply, or the error that ended it.

    Attributes:
        request_hash: The store key of the request.
        reply: The reply, if the call succeeded.
        error: The final error text, if it failed (the same text online and replayed).
        replayed: True when the answer came from the store (no API call).
        failed_attempts: HTTP attempts behind a failed call (0 when there was a reply; a
            reply carries its own count).
        request: The request this answers, with what it showed the judge (for the reader).
    """

    request_hash: str
    reply: ChatReply | None
    error: str | None
    replayed: bool
    failed_attempts: int = 0
    request: ChatRequest | None = None

    @classmethod
    def replay(cls, stored: StoredCall, request: ChatRequest | None = None) -> CallOutcome:
        """The outcome a stored call gives again, without an API call."""
        return cls(
            stored.request_hash,
            stored.reply,
            stored.error,
            replayed=True,
            failed_attempts=stored.failed_attempts,
            request=request,
        )


@dataclass
class CallCounters:
    """How a run's requests were answered."""

    api_calls: int = 0
    replayed: int = 0
    failed: int = 0


@dataclass
class JudgeSession:
    """Shared state of one ``judge()`` call.

    Attributes:
        rubric: The rubric rendering and parsing every batch.
        client: The judge endpoint (unused for calls when ``settings.offline``).
        settings: Generation and control options.
        store: Response store, or ``None`` to keep nothing.
        counters: Calls made, replayed and failed so far.
        on_items_done: Called with a number of items whenever a batch is final.
        rendered_ahead: Requests rendered before their turn (the estimate's samples), keyed by
            variant, run, batch label and item IDs; each is used once, when it is sent.
    """

    rubric: Rubric
    client: JudgeClient
    settings: JudgeSettings
    store: ResponseStore | None = None
    counters: CallCounters = field(default_factory=CallCounters)
    on_items_done: Callable[[int], None] = lambda _count: None
    rendered_ahead: dict[tuple[Any, ...], ChatRequest] = field(default_factory=dict)

    @property
    def model(self) -> str:
        """The judge model's name."""
        return self.client.model

    def options(self, item_ids: Sequence[str], run: int) -> dict[str, Any]:
        """Every generation option for one request, exactly as it will be sent and recorded."""
        settings = self.settings
        options: dict[str, Any] = {"temperature": settings.temperature}
        if settings.seed is not None and self.client.supports_seed:
            options["seed"] = settings.seed + (run - 1 if settings.seed_per_run else 0)
        if settings.max_tokens is not None:
            options[self.client.max_tokens_param] = settings.max_tokens
        if settings.structured:
            schema = self.rubric.response_schema(item_ids)
            name = f"{self.rubric.name}_reply"[:64]
            options.update(structured_options(self.client.structured_mode, schema, name))
        if settings.logprobs:
            options["logprobs"] = True
            options["top_logprobs"] = settings.top_logprobs
        return options

    def build_request(
        self, items: Sequence[Item], *, variant: str, run: int, batch_label: str
    ) -> ChatRequest:
        """Render one batch into the request that will be sent (the run is not in the prompt).

        This is the only rendering of the batch (one rendered ahead is taken as it is): the
        request carries the items' shown texts to the reader, which needs nothing else from it.
        """
        ahead = (variant, run, batch_label, tuple(item.id for item in items))
        if (ready := self.rendered_ahead.pop(ahead, None)) is not None:
            return ready
        messages = self.rubric.render(
            items, variant=variant, structured=self.settings.structured, batch_label=batch_label
        )
        options = self.options([item.id for item in items], run)
        shown = self.rubric.shown_texts(items)
        return ChatRequest(messages=tuple(messages), options=options, shown=shown)

    def request_key(
        self, request: ChatRequest, *, variant: str, run: int, attempt: int, reask_hint: str = ""
    ) -> RequestKey:
        """The store key of a request (endpoint, model, rubric, variant, run and attempt).

        ``reask_hint`` is the hint a re-ask carries (already in its messages), for the store.
        """
        return RequestKey(
            model=self.model,
            rubric=self.rubric.name,
            variant=variant,
            run=run,
            attempt=attempt,
            request=request,
            endpoint=self.client.endpoint,
            reask_hint=reask_hint,
        )

    def stored(self, key: RequestKey) -> StoredCall | None:
        """What the store holds for ``key`` (see :meth:`ResponseStore.find`), if any."""
        if self.store is None:
            return None
        return self.store.find(key, offline=self.settings.offline)

    async def call_or_replay(self, key: RequestKey) -> CallOutcome:
        """Answer a request from the store if it was answered before, else call the judge.

        Online, a stored failure is retried; offline, it is replayed as the failure it was.

        Raises:
            OfflineStoreMissError: Offline, when the store has no answer for the request.
            JudgeCallError: When the failure is fatal for the whole run (bad key, no model).
        """
        stored = self.stored(key)
        if stored is not None and (stored.reply is not None or self.settings.offline):
            self.counters.replayed += 1
            return CallOutcome.replay(stored, key.request)
        request_hash = key.hash
        if self.settings.offline:
            where = f"the store at {self.store.path}" if self.store is not None else "no store"
            raise OfflineStoreMissError(
                f"offline run: no stored reply for rubric {key.rubric!r}, variant "
                f"{key.variant!r}, model {key.model!r}, run {key.run}, attempt {key.attempt} "
                f"(request {request_hash[:12]}; {where}). Re-run online to fill the store.",
                key,
            )
        pending = None if self.store is None else self.store.submit_request(key)
        self.counters.api_calls += 1
        try:
            reply = await self.client.complete(key.request)
        except JudgeCallError as error:
            if error.fatal:
                raise
            self.counters.failed += 1
            if self.store is not None and pending is not None:
                await self.store.arecord_error(request_hash, str(error), error.attempts)
                pending.result()  # committed before the error (writes commit in order)
            return CallOutcome(
                request_hash,
                None,
                str(error),
                replayed=False,
                failed_attempts=error.attempts,
                request=key.request,
            )
        if self.store is not None and pending is not None:
            await self.store.arecord_reply(request_hash, reply)
            pending.result()  # committed before the reply (writes commit in order)
        return CallOutcome(request_hash, reply, None, replayed=False, request=key.request)


def describe_options(options: Mapping[str, Any]) -> str:
    """Short human-readable summary of request options (for logs; schemas elided)."""
    shown = {k: v for k, v in options.items() if k not in ("response_format", "extra_body")}
    if len(shown) != len(options):
        shown["schema"] = "enforced"
    return ", ".join(f"{k}={v}" for k, v in shown.items())
