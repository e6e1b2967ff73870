"""A SQLite record of every judge request and reply, so reruns cost nothing and replay exactly.

One row per request, keyed by :attr:`RequestKey.hash`, written when the request is queued for
sending (``pending``) and again when its reply (``ok``) or final failure (``error``) arrives.
Writes go to one writer thread (:mod:`judgekit.engine.store_writer`) that groups them into
transactions and acknowledges each after its commit; a reply is reported only once
acknowledged, so a killed run pays again only for the requests whose replies were not.
The database runs in WAL mode. Nothing but the request body, the endpoint (normalised base
URL) and the reply is stored: no keys, no headers. The reply includes the provider's separate
reasoning field and its refusal text, so an offline replay reads exactly what the run read.

The key includes the endpoint: the same model name on another base URL is another request.
Offline, the endpoint is not needed: a request is found by its endpoint-free ``base_hash``
when the store holds it from one endpoint only. Rows written before endpoints were recorded
(schema 1) have no endpoint and answer for any, as they always did.

The instructions (system messages) are stored once per distinct text in their own table and
referred to by digest from each request; :meth:`ResponseStore.rows` gives the full messages.

One process writes a store at a time (:mod:`judgekit.engine.storelock`); schema changes are
numbered migrations (:mod:`judgekit.engine.migrations`).

A store is shared beside a notebook with :meth:`ResponseStore.export` (a single SQLite file, or
``.jsonl.gz``) and reopened with :meth:`ResponseStore.open_readonly` for offline re-execution.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit.engine import storelock
from judgekit.engine.keys import RequestKey, canonical_json
from judgekit.engine.migrations import SCHEMA_VERSION, check_version, migrate, schema_version
from judgekit.engine.store_rows import (
    CALL_COLUMNS,
    COLUMNS,
    StoredCall,
    insert_rows,
    read_jsonl,
    stored_call,
    written_out,
)
from judgekit.engine.store_writer import StoreWriteError, StoreWriter, connect
from judgekit.types import ChatReply, UsageError

__all__ = [
    "SCHEMA_VERSION",
    "RequestKey",
    "ResponseStore",
    "StoreWriteError",
    "StoredCall",
    "canonical_json",
]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _prefix(request_hash: str) -> int:
    """The first 60 bits of a hex digest (a compact, collision-tolerant membership key)."""
    return int(request_hash[:15], 16)


class ResponseStore:
    """Every request and reply of a study, in one SQLite file.

    Safe to use from one asyncio loop (and from the worker thread ``judge()`` may use): reads
    are serialised by a lock; writes run on the store's writer thread, and the ``record_*``
    methods return once theirs is committed (``arecord_*`` await it without blocking the loop).

    Args:
        path: Database file (created with its folder if absent).
    """

    def __init__(self, path: str | Path, *, _readonly_connection: sqlite3.Connection | None = None):
        self.path = Path(path)
        self.readonly = _readonly_connection is not None
        self._lock = threading.Lock()
        self._instructions: dict[str, str] = {}  # text -> digest of those already stored
        self._writer: StoreWriter | None = None
        # Hashes (a 60-bit prefix) written since a store opened empty: only those can be found.
        self._written: set[int] | None = None
        if _readonly_connection is not None:
            self._db = _readonly_connection
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        storelock.acquire(self.path)
        try:
            self._db = connect(self.path)
            migrate(self._db, self.path)
            if self._db.execute("SELECT 1 FROM requests LIMIT 1").fetchone() is None:
                self._written = set()
            self._writer = StoreWriter(self.path)
        except sqlite3.DatabaseError as exc:
            storelock.release(self.path)
            raise UsageError(f"{self.path}: not a usable response store ({exc})") from None
        except BaseException:
            storelock.release(self.path)
            raise

    @classmethod
    def open_readonly(cls, path: str | Path) -> ResponseStore:
        """Open a store (SQLite or exported ``.jsonl.gz``) that will never be written.

        A store of an older schema is migrated in a private in-memory copy; one of a newer
        schema is refused, as for writing (its rows could be misread). Every reader (offline
        runs, ``status``, export, verify) opens stores here.

        Raises:
            FileNotFoundError: If ``path`` does not exist.
            UsageError: If the file is no store, or one written by a newer judgekit.
        """
        source = Path(path)
        if not source.is_file():
            raise FileNotFoundError(f"response store not found: {source}")
        if source.name.endswith(".jsonl.gz"):
            memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            migrate(memory, source)
            insert_rows(memory, read_jsonl(source))
            return cls(source, _readonly_connection=memory)
        uri = f"{source.resolve().as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        try:
            version = check_version(schema_version(connection), source)
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise UsageError(f"{source}: not a usable response store ({exc})") from None
        except UsageError:
            connection.close()
            raise
        if version < SCHEMA_VERSION:
            memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            connection.backup(memory)
            connection.close()
            migrate(memory, source)
            connection = memory
        return cls(source, _readonly_connection=connection)

    def __repr__(self) -> str:
        return f"ResponseStore({str(self.path)!r}, readonly={self.readonly})"

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Checkpoint the WAL into the main file, close the connection and release the lock."""
        if self._writer is not None:
            self._writer.close()
        with self._lock:
            if not self.readonly:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()
        if not self.readonly:
            storelock.release(self.path)

    def flush(self) -> None:
        """Wait until every write queued so far is committed."""
        if self._writer is not None:
            self._writer.flush()

    def _submit(self, sql: str, params: Sequence[Any]) -> Future[None]:
        """Queue a write for the writer thread; the future resolves after its commit."""
        if self._writer is None:
            raise PermissionError(f"{self.path} was opened read-only")
        return self._writer.submit(sql, params)

    def record_request(self, key: RequestKey) -> str:
        """Write a request as pending (or reset a failed one); return its hash once committed."""
        self.submit_request(key).result()
        return key.hash

    def submit_request(self, key: RequestKey) -> Future[None]:
        """Queue a request's pending row (see :meth:`record_request`) without waiting for it.

        Writes commit in the order they are queued, so once a later write of the same request is
        acknowledged this one is on disk too (its future then says whether it failed).
        """
        if self._written is not None:
            self._written.update((_prefix(key.hash), _prefix(key.base_hash)))
        messages = [self._by_reference(message) for message in key.request.messages]
        return self._submit(
            "INSERT INTO requests (request_hash, state, rubric, variant, model, run, attempt,"
            " options, messages, requested_at, endpoint, base_hash, reask_hint)"
            " VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(request_hash) DO UPDATE SET state='pending', error=NULL,"
            " requested_at=excluded.requested_at WHERE state != 'ok'",
            (
                key.hash,
                key.rubric,
                key.variant,
                key.model,
                key.run,
                key.attempt,
                canonical_json(dict(key.request.options)),
                canonical_json(messages),
                _now(),
                key.endpoint,
                key.base_hash,
                key.reask_hint,
            ),
        )

    def _by_reference(self, message: Mapping[str, str]) -> dict[str, str]:
        """A system message as a reference to its text in ``instructions`` (stored once)."""
        content = message.get("content")
        if message.get("role") != "system" or not isinstance(content, str):
            return dict(message)
        digest = self._instructions.get(content)
        if digest is None:
            digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
            self._submit(
                "INSERT INTO instructions (digest, content) VALUES (?, ?)"
                " ON CONFLICT(digest) DO NOTHING",
                (digest, content),
            )
            self._instructions[content] = digest
        return {**{k: v for k, v in message.items() if k != "content"}, "instructions": digest}

    def record_reply(self, request_hash: str, reply: ChatReply) -> None:
        """Store the reply to a recorded request; returns once it is committed."""
        self.submit_reply(request_hash, reply).result()

    async def arecord_reply(self, request_hash: str, reply: ChatReply) -> None:
        """:meth:`record_reply` for a coroutine: awaits the commit without blocking the loop."""
        await asyncio.wrap_future(self.submit_reply(request_hash, reply))

    def submit_reply(self, request_hash: str, reply: ChatReply) -> Future[None]:
        """Queue the reply to a recorded request; the future resolves after its commit."""
        logprobs = None if reply.top_logprobs is None else json.dumps(reply.top_logprobs)
        return self._submit(
            "UPDATE requests SET state='ok', reply_text=?, reply_model=?, prompt_tokens=?,"
            " completion_tokens=?, cached_tokens=?, latency_s=?, finish_reason=?, request_id=?,"
            " top_logprobs=?, http_attempts=?, reasoning=?, refusal=?, error=NULL, answered_at=?"
            " WHERE request_hash=?",
            (
                reply.text,
                reply.model,
                reply.usage.prompt_tokens,
                reply.usage.completion_tokens,
                reply.usage.cached_tokens,
                reply.latency_s,
                reply.finish_reason,
                reply.request_id,
                logprobs,
                reply.http_attempts,
                reply.reasoning,
                reply.refusal,
                _now(),
                request_hash,
            ),
        )

    def record_error(self, request_hash: str, error: str, http_attempts: int) -> None:
        """Store the final failure of a recorded request (retried on the next online run)."""
        self.submit_error(request_hash, error, http_attempts).result()

    async def arecord_error(self, request_hash: str, error: str, http_attempts: int) -> None:
        """:meth:`record_error` for a coroutine: awaits the commit without blocking the loop."""
        await asyncio.wrap_future(self.submit_error(request_hash, error, http_attempts))

    def submit_error(self, request_hash: str, error: str, http_attempts: int) -> Future[None]:
        """Queue the final failure of a recorded request; the future resolves after its commit."""
        return self._submit(
            "UPDATE requests SET state='error', error=?, http_attempts=?, answered_at=?"
            " WHERE request_hash=?",
            (error, http_attempts, _now(), request_hash),
        )

    def lookup(self, request_hash: str) -> StoredCall | None:
        """The finished call with this hash, or ``None`` if it was never answered."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {CALL_COLUMNS} FROM requests WHERE request_hash=?", (request_hash,)
            ).fetchone()
        return None if row is None else stored_call(row)

    def state(self, request_hash: str) -> str | None:
        """``pending``, ``ok`` or ``error`` for a recorded request; ``None`` if never recorded."""
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM requests WHERE request_hash=?", (request_hash,)
            ).fetchone()
        return None if row is None else str(row[0])

    def find(self, key: RequestKey, *, offline: bool = False) -> StoredCall | None:
        """The finished call answering ``key``, or ``None``.

        Tried in order: the exact key (endpoint included); a row recorded before endpoints were
        (schema 1), which answers for any endpoint; offline only, the one endpoint this request
        was recorded from, whatever the client's base URL now is.

        Raises:
            UsageError: Offline, when the request was recorded from several endpoints.
        """
        if self._written is not None and not self._written.intersection(
            (_prefix(key.hash), _prefix(key.base_hash))
        ):
            return None  # the store opened empty and this session never wrote this request
        if not key.endpoint:
            return self.lookup(key.hash)
        with self._lock:
            found = self._db.execute(
                f"SELECT {CALL_COLUMNS}, endpoint, request_hash FROM requests WHERE request_hash=?"
                " OR (base_hash=? AND state != 'pending') ORDER BY endpoint",
                (key.hash, key.base_hash),
            ).fetchall()
        for row in found:
            if row[-1] == key.hash:
                return stored_call(row[:-2])
        rows = [row[:-1] for row in found]
        legacy = [row for row in rows if row[-1] == ""]
        if legacy or not offline or not rows:
            return stored_call(legacy[0][:-1]) if legacy else None
        endpoints = sorted({row[-1] for row in rows})
        if len(endpoints) > 1:
            raise UsageError(
                f"{self.path}: this request was answered by {len(endpoints)} endpoints "
                f"({', '.join(endpoints)}); pass the base URL of the one to replay"
            )
        return stored_call(rows[0][:-1])

    def answered(
        self, *, model: str, rubric: str, variant: str, run: int, endpoint: str, offline: bool
    ) -> int:
        """How many first asks (attempt 1) of this judge, rubric, variant and run are answered.

        Online, a request counts when it has a reply from ``endpoint`` (or from before
        endpoints were recorded); offline, a reply or a final error from any endpoint counts,
        since both are replayed. The estimate reads this instead of looking up every request.
        """
        sql = (
            "SELECT COUNT(*) FROM requests WHERE model=? AND rubric=? AND variant=? AND run=?"
            " AND attempt=1"
        )
        params: list[Any] = [model, rubric, variant, run]
        if offline:
            sql += " AND state != 'pending'"
        else:
            sql += " AND state = 'ok' AND endpoint IN (?, '')"
            params.append(endpoint)
        with self._lock:
            return int(self._db.execute(sql, params).fetchone()[0])

    def counts(self) -> dict[str, int]:
        """Number of requests per state (``pending``, ``ok``, ``error``)."""
        self.flush()
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state")
            found = dict(rows.fetchall())
        return {state: int(found.get(state, 0)) for state in ("pending", "ok", "error")}

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored request as a dict of column -> value, in request order.

        ``messages`` holds the full messages, the instructions written out again.
        """
        self.flush()
        with self._lock:
            instructions = dict(self._db.execute("SELECT digest, content FROM instructions"))
            cursor = self._db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM requests ORDER BY requested_at, request_hash"
            )
            fetched = cursor.fetchall()
        for values in fetched:
            row = dict(zip(COLUMNS, values, strict=True))
            row["messages"] = written_out(row["messages"], instructions)
            yield row

    def export(self, path: str | Path) -> Path:
        """Write the whole store to one portable file and return its path.

        ``*.jsonl.gz`` gives one JSON object per request; any other name gives a self-contained
        SQLite copy (rollback journal, no WAL side files) made with SQLite's backup API.
        """
        self.flush()
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.unlink(missing_ok=True)
        if target.name.endswith(".jsonl.gz"):
            with gzip.open(partial, "wt", encoding="utf-8") as handle:
                for row in self.rows():
                    handle.write(canonical_json(row) + "\n")
        else:
            copy = sqlite3.connect(partial)
            with self._lock:
                self._db.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            copy.close()
        partial.replace(target)
        return target
