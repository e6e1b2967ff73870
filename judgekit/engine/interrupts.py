"""What a judging command says when it is interrupted.

A Ctrl-C never loses a paid reply (each is committed as it arrives); the user still needs to
know how many are kept and how to carry on, so :func:`interrupted_message` says both in one
line. (Commands that wait for Ctrl-C use :func:`judgekit.config.stop_on_signals`.)
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from judgekit.config import stop_on_signals
from judgekit.engine.store import ResponseStore


def interrupted_message(store: Path | None, command: Sequence[str]) -> str:
    """One line: how many replies the store keeps and the command that resumes the run.

    Args:
        store: The run's response store (``None``: replies were not kept).
        command: The command line as typed (its first word is shown as ``judgekit``).
    """
    again = shlex.join(["judgekit", *command[1:]])
    if store is None or not store.is_file():
        return f"interrupted: no response store, so no reply was kept; rerun with: {again}"
    with ResponseStore.open_readonly(store) as opened:
        kept = opened.counts()["ok"]
    return f"interrupted: {kept} replies are stored in {store}; resume with: {again}"


@contextlib.contextmanager
def interrupt_explained(store: Path | None) -> Iterator[None]:
    """On Ctrl-C inside the block, print :func:`interrupted_message` and exit with 130.

    Ctrl-C works even when the process was started with SIGINT ignored (see
    :func:`judgekit.config.stop_on_signals`).
    """
    try:
        with stop_on_signals():
            yield
    except KeyboardInterrupt:
        print(interrupted_message(store, sys.argv), file=sys.stderr, flush=True)
        raise SystemExit(130) from None
