"""The one thread that writes a response store, so no write blocks the event loop.

:class:`StoreWriter` owns its own SQLite connection and a queue of statements. It takes what
is queued (up to :data:`BATCH_ROWS` statements, waiting at most :data:`BATCH_WAIT_S` for more)
and runs it as one transaction; only after that transaction commits does it resolve each
statement's future. A caller that reports a reply once its future resolved has it on disk: a
kill -9 loses at most the statements whose futures were not yet resolved.

A failed transaction (a full disk, an I/O error) is rolled back and fails its futures, and every
later one: statements depend on earlier ones (a reply on its pending row, a request on its
instructions), so none is written after a lost one.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

#: Most statements grouped into one transaction.
BATCH_ROWS = 2048
#: Longest wait (seconds) for more statements once one is queued.
BATCH_WAIT_S = 0.003

_Write = tuple[str, Sequence[Any], Future[None]]


class StoreWriteError(RuntimeError):
    """The store file could not be written (a full disk, a read-only folder); names the file."""


def connect(path: Path) -> sqlite3.Connection:
    """A writing connection to the store at ``path``: autocommit off by hand, WAL, NORMAL sync."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class StoreWriter:
    """A thread running queued statements in grouped transactions, each acknowledged on commit.

    Args:
        path: The store's SQLite file (already created and migrated).
    """

    def __init__(self, path: Path):
        self.path = path
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._failure: Exception | None = None
        self._db = connect(path)
        self._thread = threading.Thread(target=self._run, name=f"store writer {path.name}")
        self._thread.daemon = True
        self._thread.start()

    def submit(self, sql: str, params: Sequence[Any]) -> Future[None]:
        """Queue one statement; its future resolves once the transaction holding it committed."""
        if not self._thread.is_alive():
            raise RuntimeError("the store writer is closed")
        done: Future[None] = Future()
        self._queue.put((sql, params, done))
        return done

    def flush(self) -> None:
        """Wait until everything queued so far is committed (or failed)."""
        self.submit("SELECT 1", ()).result()

    def close(self) -> None:
        """Commit what is queued, stop the thread and close its connection."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _take(self) -> tuple[list[_Write], bool]:
        """The next group of statements (blocking for the first) and whether to stop after it."""
        first = self._queue.get()
        if first is None:
            return [], True
        group = [first]
        deadline = time.monotonic() + BATCH_WAIT_S
        while len(group) < BATCH_ROWS:
            try:
                following = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if following is None:
                return group, True
            group.append(following)
        return group, False

    def _run(self) -> None:
        stop = False
        while not stop:
            group, stop = self._take()
            if group:
                self._commit(group)
        self._db.close()

    def _commit(self, group: list[_Write]) -> None:
        if self._failure is None:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params, _ in group:
                    self.execute(sql, params)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._failure = StoreWriteError(
                    f"{self.path}: cannot write the response store ({exc}); the replies stored "
                    "so far are kept: free space there, or give another --store, and rerun"
                )
        for *_, done in group:
            if done.cancelled():  # its awaiting task was cancelled (Ctrl-C); the write stands
                continue
            if self._failure is None:
                done.set_result(None)
            else:
                done.set_exception(self._failure)

    def execute(self, sql: str, params: Sequence[Any]) -> None:
        """Run one statement inside the current transaction (on the writer's thread)."""
        self._db.execute(sql, params)
