"""Every attempt of a study as its own table, from the response store.

The judgments table holds one row per item, variant and run: the verdict of the attempt that
settled it. The requests behind earlier attempts (the first ask of a row that was re-asked, a
call that failed and was retried on a later run) are kept in the store; this is that history,
one row per request.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit.engine.store import ResponseStore

#: The columns of :func:`attempt_history`, in order.
HISTORY_COLUMNS: tuple[str, ...] = (
    "request_hash",
    "rubric",
    "variant",
    "model",
    "run",
    "attempt",
    "state",
    "reply_text",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "requested_at",
    "answered_at",
)


def attempt_history(store: str | Path) -> pd.DataFrame:
    """One row per request the store holds (every attempt, answered or not).

    Sorted by rubric, variant, model, run and attempt (then by when it was requested).

    ``request_hash`` joins it to the judgments table; ``state`` is ``ok``, ``error`` or
    ``pending`` (sent, or written by ``--write-requests``, and not answered yet).

    Raises:
        FileNotFoundError: If ``store`` does not exist.
    """
    with ResponseStore.open_readonly(store) as opened:
        rows = [{column: row[column] for column in HISTORY_COLUMNS} for row in opened.rows()]
    history = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    order = ["rubric", "variant", "model", "run", "attempt", "requested_at"]
    return history.sort_values(order, kind="stable").reset_index(drop=True)
