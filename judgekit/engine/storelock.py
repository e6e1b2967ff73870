"""One writer per response store: a lock file beside it, held while the store is open.

A second process that opens the same store for writing **waits** until the first closes it
(saying so once on stderr), then reads every reply the first one stored: nothing is paid
twice, and each process's table is exactly what an offline replay of the store gives. Read-only
opens (offline replays, exports being read) never wait. Within one process the lock is shared,
so several handles on one store do not block each other.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from filelock import FileLock, Timeout

_HELD: dict[Path, tuple[FileLock, int]] = {}
_GUARD = threading.Lock()


def lock_path(store: Path) -> Path:
    """The lock file of a store (``responses.sqlite`` -> ``responses.sqlite.lock``)."""
    return store.with_name(store.name + ".lock")


def acquire(store: Path, *, poll_s: float = 0.5) -> None:
    """Hold the store's lock, waiting for another process to release it."""
    key = store.resolve()
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            _HELD[key] = (held[0], held[1] + 1)
            return
        lock = FileLock(lock_path(key), thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            print(
                f"waiting for {store}: another judgekit process is writing it "
                "(its replies will be reused; Ctrl-C to stop waiting)",
                file=sys.stderr,
            )
            lock.acquire(poll_interval=poll_s)
        _HELD[key] = (lock, 1)


def release(store: Path) -> None:
    """Give back one hold of the store's lock; the last one unlocks the file."""
    key = store.resolve()
    with _GUARD:
        lock, count = _HELD[key]
        if count > 1:
            _HELD[key] = (lock, count - 1)
            return
        del _HELD[key]
        lock.release()
