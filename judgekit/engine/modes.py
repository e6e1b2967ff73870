"""The judging modes ``judge(..., mode=NAME)`` knows, each carrying all that differs by mode.

A mode is how the batches of one run are sent (:attr:`Mode.run`), how its first asks are
foreseen for the estimate (:attr:`Mode.first_asks`) and whether it reads ``context_tokens``.
The runner and the option checks ask the mode; no code names one.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgekit.engine.conversation import conversation_asks, run_conversation
from judgekit.engine.independent import independent_asks, run_independent
from judgekit.engine.plan import AsksPlanner, ModeRunner


@dataclass(frozen=True)
class Mode:
    """One judging mode.

    Attributes:
        run: Sends the batches of one run and returns their final rows in order.
        first_asks: Foresees the first asks of every plan (tokens, stored, first request).
        context_tokens: Whether the mode reads the ``context_tokens`` budget.
        requests_alone: Whether every request can be sent without waiting for another's
            reply (what a request file for the Batch API or ``vllm run-batch`` needs).
    """

    run: ModeRunner
    first_asks: AsksPlanner = independent_asks
    context_tokens: bool = False
    requests_alone: bool = True


MODES: dict[str, Mode] = {
    "independent": Mode(run_independent),
    "conversation": Mode(
        run_conversation, conversation_asks, context_tokens=True, requests_alone=False
    ),
}


def register_mode(name: str, mode: Mode) -> None:
    """Make a judging mode available to ``judge(..., mode=name)``."""
    MODES[name] = mode
