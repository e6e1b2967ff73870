"""What one (variant, run) of ``judge()`` sends, and the signatures every judging mode has.

Kept apart from :mod:`judgekit.engine.runner` so that modes (conversation, batch collection)
can name it without importing the runner that lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.data import Batch
from judgekit.engine.session import JudgeSession
from judgekit.types import ChatRequest

Row = dict[str, Any]


@dataclass(frozen=True)
class RunPlan:
    """The batches of one (variant, run), in the order the judge will see them, and mode options."""

    variant: str
    run: int
    batches: tuple[Batch, ...]
    context_tokens: int | None = None  # conversation mode's per-request token budget


#: A judging mode: sends the batches of one run and returns their final rows in order.
ModeRunner = Callable[[JudgeSession, RunPlan], Coroutine[Any, Any, list[Row]]]

#: A mode's first asks, foreseen for the estimate without sending: each request's estimated
#: prompt tokens and number of items, how many of them the store answers, and the first
#: request exactly as it will be sent (``None`` when there is none).
FirstAsks = tuple[list[tuple[int, int]], int, ChatRequest | None]

#: How a mode foresees its first asks over every plan of a call.
AsksPlanner = Callable[[JudgeSession, Sequence[RunPlan]], FirstAsks]
