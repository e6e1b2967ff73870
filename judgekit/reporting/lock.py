"""One ``judgekit report`` at a time per study: a second one refuses in one line.

Two reports on one study would execute the same notebooks into the same ``report/`` folder,
and one would find the other's half-written files. The lock is ``STUDY/.report.lock``
(:mod:`filelock`; hidden, so never bundled); the operating system releases it when the
process ends, however it ends.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from filelock import FileLock, Timeout

from judgekit.types import UsageError

LOCK_NAME = ".report.lock"
P = ParamSpec("P")
R = TypeVar("R")


def one_report_at_a_time(
    run: Callable[Concatenate[str | Path, P], R],
) -> Callable[Concatenate[str | Path, P], R]:
    """Run ``run(folder, ...)`` holding the study's report lock; refuse if another holds it.

    Raises:
        UsageError: If another report runs on the study, or the folder cannot be written.
    """

    @functools.wraps(run)
    def locked(folder: str | Path, *args: P.args, **kwargs: P.kwargs) -> R:
        root = Path(folder)
        if not (root / "study.json").is_file():  # no study: its own message names the folder,
            return run(folder, *args, **kwargs)  # and no lock file lands among a user's files
        lock = FileLock(root / LOCK_NAME)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise UsageError(
                f"{folder}: another `judgekit report` is running on this study; wait for it "
                f"to finish (it holds {root / LOCK_NAME})"
            ) from None
        except PermissionError:
            raise UsageError(f"{folder}: cannot write in the study folder (read-only?)") from None
        try:
            return run(folder, *args, **kwargs)
        finally:
            lock.release()

    return locked
