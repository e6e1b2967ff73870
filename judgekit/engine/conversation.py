"""Conversation mode: one running chat per (variant, run), the way seed 000 is used by hand.

The instructions go once, as the system message; every batch is the next user turn and the
judge's replies stay in the history. Rows a reply failed are asked again *inside* the chat, as a
follow-up user turn that lists only those rows. When the next turn would not fit the context
budget (``context_tokens``, estimated at four characters per token), a new conversation starts
with the instructions sent again; the ``conversation`` and ``turn`` columns record where each
row was answered.

Every request carries the whole history, and its store key hashes that history, so a killed run
resumes by replaying the stored turns one by one until it reaches the first unanswered one.
A turn whose call fails for good is left out of the history (as if the message had not been
sent) and its rows are recorded as ``error``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.data import Batch
from judgekit.engine.plan import FirstAsks, RunPlan
from judgekit.engine.rows import Asked, reask_key, reask_label, reask_loop
from judgekit.engine.session import CallOutcome, JudgeSession
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.types import ChatRequest, Item, UsageError

logger = logging.getLogger(__name__)

Row = dict[str, Any]
Message = dict[str, str]

#: Tokens kept free for each row of the reply when ``max_tokens`` is not set.
REPLY_TOKENS_PER_ROW = 16

#: What the follow-up turn says before listing the rows to score again.
REASK_PREAMBLE = (
    "Your last reply did not give a usable score for every row. Score only the rows below, "
    "in the same output format as before."
)


class ContextBudgetError(ValueError):
    """A single turn does not fit the context budget even in a fresh conversation."""


@dataclass
class Conversation:
    """The running chat of one (variant, run).

    Attributes:
        system: The instructions, sent once at the top of every conversation.
        budget: Estimated prompt + reply tokens one request may use (``None`` = unlimited).
        index: Number of the current conversation (0 for the first).
        history: User and assistant turns of the current conversation, in order.
        shown: The item texts the history's user turns showed the judge (for the echo check).
    """

    system: Message
    budget: int | None
    index: int = 0
    history: list[Message] = field(default_factory=list)
    shown: tuple[str, ...] = ()

    @property
    def turn(self) -> int:
        """0-based number of the next user turn in the current conversation."""
        return len(self.history) // 2

    def messages_with(self, user: Message) -> list[Message]:
        """The full message list of a request that adds ``user`` to this conversation."""
        return [self.system, *self.history, user]

    def make_room(self, user: Message, reply_tokens: int, label: str) -> None:
        """Start a new conversation when ``user`` plus its reply would overflow the budget.

        Raises:
            ContextBudgetError: If the turn does not fit even after the instructions alone.
        """
        if self.budget is None:
            return
        if estimate_message_tokens(self.messages_with(user)) + reply_tokens <= self.budget:
            return
        alone = estimate_message_tokens([self.system, user]) + reply_tokens
        if alone > self.budget:
            raise ContextBudgetError(
                f"context_tokens={self.budget} is too small for {label}: the instructions and "
                f"this turn alone need about {alone} tokens; raise it or lower batch_size"
            )
        logger.info(
            "conversation %d full after %d turns; starting conversation %d at %s",
            self.index,
            self.turn,
            self.index + 1,
            label,
        )
        self.index += 1
        self.history = []
        self.shown = ()

    def record(self, user: Message, reply_text: str, shown: tuple[str, ...] = ()) -> None:
        """Keep an answered turn (and the item texts it showed) in the history."""
        self.history += [user, {"role": "assistant", "content": reply_text}]
        self.shown += shown


def _split_render(
    session: JudgeSession, items: Sequence[Item], variant: str, label: str
) -> tuple[Message, Message]:
    messages = session.rubric.render(
        items, variant=variant, structured=session.settings.structured, batch_label=label
    )
    if len(messages) != 2 or messages[0].get("role") != "system":
        raise UsageError(
            f"rubric {session.rubric.name}: conversation mode sends the instructions once, as "
            "a system message, and this rubric has none (give the prompt a system text)"
        )
    return dict(messages[0]), dict(messages[1])


def _reply_reserve(session: JudgeSession, rows: int) -> int:
    return session.settings.max_tokens or REPLY_TOKENS_PER_ROW * max(rows, 1)


def _expected_reply_tokens(session: JudgeSession, rows: int) -> int:
    """The estimate's guess of a reply's length (as :func:`estimate_cost` guesses it)."""
    guess = session.rubric.format.completion_tokens_per_item * rows
    return session.settings.max_tokens or guess


async def _ask(
    session: JudgeSession,
    chat: Conversation,
    user: Message,
    pending: Sequence[Item],
    *,
    variant: str,
    run: int,
    attempt: int,
    label: str,
    hint: str | None = None,
) -> tuple[CallOutcome, int, int]:
    """Send one user turn (ending with ``hint``, if any) with the history.

    Returns:
        The outcome, and the conversation and turn it was asked in.
    """
    hinted = {**user, "content": f"{user['content'].rstrip()}\n\n{hint}"} if hint else user
    chat.make_room(hinted, _reply_reserve(session, len(pending)), label)
    where = (chat.index, chat.turn)
    shown = session.rubric.shown_texts(pending)
    plain = ChatRequest(
        messages=tuple(chat.messages_with(user)),
        options=session.options([item.id for item in pending], run),
        shown=chat.shown + shown,
    )
    key = reask_key(session, plain, hint, variant=variant, run=run, attempt=attempt)
    outcome = await session.call_or_replay(key)
    if outcome.reply is not None:
        chat.record(dict(key.request.messages[-1]), outcome.reply.text, shown)
    return outcome, where[0], where[1]


def _placed(row: Row, conversation: int, turn: int) -> Row:
    return {**row, "conversation": conversation, "turn": turn}


async def judge_batch_in_conversation(
    session: JudgeSession, chat: Conversation, plan: RunPlan, batch: Batch
) -> list[Row]:
    """Ask one batch of ``plan`` as the next turn of ``chat``, then re-ask its failed rows there.

    Returns the batch's final rows (one per item, then foreign-ID rows), like the engine's
    independent mode, plus the ``conversation`` and ``turn`` where each row was answered.
    """

    async def ask(pending: list[Item], attempt: int, hint: str | None) -> Asked:
        label = reask_label(batch.label, attempt)
        system, user = _split_render(session, pending, plan.variant, label)
        if system != chat.system:
            raise ValueError(
                f"rubric {session.rubric.name}: the system message changes between batches, "
                "so the instructions cannot be sent once per conversation"
            )
        content = f"{REASK_PREAMBLE}\n\n{user['content']}" if attempt > 1 else user["content"]
        outcome, conversation, turn = await _ask(
            session,
            chat,
            {**user, "content": content},
            pending,
            variant=plan.variant,
            run=plan.run,
            attempt=attempt,
            label=label,
            hint=hint,
        )
        return Asked(outcome, functools.partial(_placed, conversation=conversation, turn=turn))

    return await reask_loop(session, plan, batch, ask)


async def judge_conversation(
    session: JudgeSession, plan: RunPlan, *, context_tokens: int | None
) -> list[Row]:
    """Judge the batches of one run as consecutive turns of one chat (split at the budget).

    Args:
        session: The shared state of the ``judge()`` call.
        plan: The run's batches in sending order.
        context_tokens: Estimated tokens (prompt plus reserved reply) one request may use;
            ``None`` keeps a single conversation however long it grows.

    Raises:
        ValueError: If ``context_tokens`` is not positive or a turn cannot fit it.
    """
    if context_tokens is not None and context_tokens < 1:
        raise ValueError(f"context_tokens must be positive, got {context_tokens}")
    if not plan.batches:
        return []
    system, _ = _split_render(session, plan.batches[0].items, plan.variant, plan.batches[0].label)
    chat = Conversation(system=system, budget=context_tokens)
    rows: list[Row] = []
    for batch in plan.batches:
        rows += await judge_batch_in_conversation(session, chat, plan, batch)
    return rows


def planned_turns(session: JudgeSession, plan: RunPlan) -> list[tuple[ChatRequest, int]]:
    """The first-ask requests of a run's conversation, for the cost estimate before sending.

    Stored replies are replayed into the history, so already-answered turns hash as they will
    be sent; an unanswered turn gets a stand-in reply of the expected length (re-ask turns are
    not foreseen, so after a stored re-ask the later turns are counted as unsent).

    Returns:
        Each batch's request (with the history it will carry) and its number of items.
    """
    if not plan.batches:
        return []
    system, _ = _split_render(session, plan.batches[0].items, plan.variant, plan.batches[0].label)
    chat = Conversation(system=system, budget=plan.context_tokens)
    planned = []
    for batch in plan.batches:
        _, user = _split_render(session, batch.items, plan.variant, batch.label)
        chat.make_room(user, _reply_reserve(session, len(batch.items)), batch.label)
        request = ChatRequest(
            messages=tuple(chat.messages_with(user)), options=session.options(batch.ids, plan.run)
        )
        key = session.request_key(request, variant=plan.variant, run=plan.run, attempt=1)
        stored = session.stored(key)
        if stored is not None and stored.reply is not None:
            reply = stored.reply.text
        else:
            reply = "#" * 4 * _expected_reply_tokens(session, len(batch.items))
        chat.record(user, reply)
        planned.append((request, len(batch.items)))
    return planned


def conversation_asks(session: JudgeSession, plans: Sequence[RunPlan]) -> FirstAsks:
    """Conversation mode's first asks: each turn with its history, looked up in the store."""
    asks, stored, first = [], 0, None
    for plan in plans:
        for request, n_items in planned_turns(session, plan):
            first = first or request
            asks.append((estimate_message_tokens(request.messages, session.model), n_items))
            key = session.request_key(request, variant=plan.variant, run=plan.run, attempt=1)
            found = session.stored(key)
            answered = found is not None and (found.reply is not None or session.settings.offline)
            stored += answered
    return asks, stored, first


async def run_conversation(session: JudgeSession, plan: RunPlan) -> list[Row]:
    """The ``"conversation"`` judging mode (budget from ``plan.context_tokens``)."""
    return await judge_conversation(session, plan, context_tokens=plan.context_tokens)
