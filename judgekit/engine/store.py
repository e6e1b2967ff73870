"""A SQLite record of every judge request and reply, so reruns cost nothing and replay exactly.

One row per request, keyed by :attr:`RequestKey.hash`, written when the request is queued for
sending (``pending``) and committed again the moment its reply (``ok``) or final failure
(``error``) arrives, so a killed run pays again only for the requests that were in flight.
The database runs in WAL mode. Nothing but the request body and the reply is stored: no keys,
no headers, no base URL.

A store is shared beside a notebook with :meth:`ResponseStore.export` (a single SQLite file, or
``.jsonl.gz``) and reopened with :meth:`ResponseStore.open_readonly` for offline re-execution.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit.types import ChatReply, ChatRequest, Usage

SCHEMA_VERSION = 1

_COLUMNS: tuple[str, ...] = (
    "request_hash",
    "state",
    "rubric",
    "variant",
    "model",
    "run",
    "attempt",
    "options",
    "messages",
    "reply_text",
    "reply_model",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "latency_s",
    "finish_reason",
    "request_id",
    "top_logprobs",
    "http_attempts",
    "error",
    "requested_at",
    "answered_at",
)

_CREATE = f"""
CREATE TABLE IF NOT EXISTS requests (
    request_hash TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('pending', 'ok', 'error')),
    rubric TEXT NOT NULL, variant TEXT NOT NULL, model TEXT NOT NULL,
    run INTEGER NOT NULL, attempt INTEGER NOT NULL,
    options TEXT NOT NULL, messages TEXT NOT NULL,
    reply_text TEXT, reply_model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER,
    latency_s REAL, finish_reason TEXT, request_id TEXT, top_logprobs TEXT,
    http_attempts INTEGER, error TEXT, requested_at TEXT NOT NULL, answered_at TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');
"""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RequestKey:
    """Everything that identifies one judge request."""

    model: str
    rubric: str
    variant: str
    run: int
    attempt: int
    request: ChatRequest

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the key (run and attempt included)."""
        payload = {
            "model": self.model,
            "messages": [dict(m) for m in self.request.messages],
            "options": dict(self.request.options),
            "run": self.run,
            "variant": self.variant,
            "rubric": self.rubric,
            "attempt": self.attempt,
        }
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StoredCall:
    """A finished request as recorded: its reply, or the error that ended it."""

    request_hash: str
    reply: ChatReply | None
    error: str | None
    failed_attempts: int = 0  # HTTP attempts spent on a call that failed


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ResponseStore:
    """Every request and reply of a study, in one SQLite file.

    Safe to use from one asyncio loop (and from the worker thread ``judge()`` may use): all
    access is serialised by a lock and every write commits at once.

    Args:
        path: Database file (created with its folder if absent).
    """

    def __init__(self, path: str | Path, *, _readonly_connection: sqlite3.Connection | None = None):
        self.path = Path(path)
        self.readonly = _readonly_connection is not None
        self._lock = threading.Lock()
        if _readonly_connection is not None:
            self._db = _readonly_connection
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_CREATE)

    @classmethod
    def open_readonly(cls, path: str | Path) -> ResponseStore:
        """Open a store (SQLite or exported ``.jsonl.gz``) that will never be written.

        Raises:
            FileNotFoundError: If ``path`` does not exist.
        """
        source = Path(path)
        if not source.is_file():
            raise FileNotFoundError(f"response store not found: {source}")
        if source.name.endswith(".jsonl.gz"):
            memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            memory.executescript(_CREATE)
            _insert_rows(memory, _read_jsonl(source))
            return cls(source, _readonly_connection=memory)
        uri = f"{source.resolve().as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        return cls(source, _readonly_connection=connection)

    def __repr__(self) -> str:
        return f"ResponseStore({str(self.path)!r}, readonly={self.readonly})"

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close the connection."""
        with self._lock:
            if not self.readonly:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        if self.readonly:
            raise PermissionError(f"{self.path} was opened read-only")
        with self._lock:
            self._db.execute(sql, params)

    def record_request(self, key: RequestKey) -> str:
        """Write a request as pending (or reset a failed one) and return its hash."""
        request_hash = key.hash
        self._write(
            "INSERT INTO requests (request_hash, state, rubric, variant, model, run, attempt,"
            " options, messages, requested_at) VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(request_hash) DO UPDATE SET state='pending', error=NULL,"
            " requested_at=excluded.requested_at WHERE state != 'ok'",
            (
                request_hash,
                key.rubric,
                key.variant,
                key.model,
                key.run,
                key.attempt,
                canonical_json(dict(key.request.options)),
                canonical_json([dict(m) for m in key.request.messages]),
                _now(),
            ),
        )
        return request_hash

    def record_reply(self, request_hash: str, reply: ChatReply) -> None:
        """Store the reply to a recorded request (committed immediately)."""
        logprobs = None if reply.top_logprobs is None else json.dumps(reply.top_logprobs)
        self._write(
            "UPDATE requests SET state='ok', reply_text=?, reply_model=?, prompt_tokens=?,"
            " completion_tokens=?, cached_tokens=?, latency_s=?, finish_reason=?, request_id=?,"
            " top_logprobs=?, http_attempts=?, error=NULL, answered_at=? WHERE request_hash=?",
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
                _now(),
                request_hash,
            ),
        )

    def record_error(self, request_hash: str, error: str, http_attempts: int) -> None:
        """Store the final failure of a recorded request (retried on the next online run)."""
        self._write(
            "UPDATE requests SET state='error', error=?, http_attempts=?, answered_at=?"
            " WHERE request_hash=?",
            (error, http_attempts, _now(), request_hash),
        )

    def lookup(self, request_hash: str) -> StoredCall | None:
        """The finished call with this hash, or ``None`` if it was never answered."""
        with self._lock:
            row = self._db.execute(
                "SELECT state, reply_text, reply_model, prompt_tokens, completion_tokens,"
                " cached_tokens, latency_s, finish_reason, request_id, top_logprobs,"
                " http_attempts, error FROM requests WHERE request_hash=?",
                (request_hash,),
            ).fetchone()
        if row is None or row[0] == "pending":
            return None
        if row[0] == "error":
            return StoredCall(request_hash, None, row[11], failed_attempts=row[10] or 0)
        logprobs = None
        if row[9] is not None:
            logprobs = tuple(tuple((tok, lp) for tok, lp in step) for step in json.loads(row[9]))
        reply = ChatReply(
            text=row[1],
            model=row[2],
            usage=Usage(row[3] or 0, row[4] or 0, row[5] or 0),
            latency_s=row[6] or 0.0,
            finish_reason=row[7],
            request_id=row[8],
            top_logprobs=logprobs,
            http_attempts=row[10] or 1,
        )
        return StoredCall(request_hash, reply, None)

    def counts(self) -> dict[str, int]:
        """Number of requests per state (``pending``, ``ok``, ``error``)."""
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state")
            found = dict(rows.fetchall())
        return {state: int(found.get(state, 0)) for state in ("pending", "ok", "error")}

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored request as a dict of column -> value, in request order."""
        with self._lock:
            cursor = self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM requests ORDER BY requested_at, request_hash"
            )
            fetched = cursor.fetchall()
        for values in fetched:
            yield dict(zip(_COLUMNS, values, strict=True))

    def export(self, path: str | Path) -> Path:
        """Write the whole store to one portable file and return its path.

        ``*.jsonl.gz`` gives one JSON object per request; any other name gives a self-contained
        SQLite copy (rollback journal, no WAL side files) made with SQLite's backup API.
        """
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

    def import_from(self, path: str | Path) -> int:
        """Merge finished requests from an exported file.

        Returns:
            How many rows were added, or upgraded from pending/error to answered.
        """
        source = ResponseStore.open_readonly(path)
        try:
            rows = [row for row in source.rows() if row["state"] != "pending"]
        finally:
            source.close()
        if self.readonly:
            raise PermissionError(f"{self.path} was opened read-only")
        with self._lock:
            before = self._db.total_changes
            _insert_rows(self._db, rows)
            return self._db.total_changes - before


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {line_number} is not JSON ({exc.msg})") from None
    return rows


def _insert_rows(db: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add rows; an answered row also replaces a local row that was never answered."""
    placeholders = ", ".join("?" for _ in _COLUMNS)
    updates = ", ".join(f"{column}=excluded.{column}" for column in _COLUMNS[1:])
    db.execute("BEGIN")
    db.executemany(
        f"INSERT INTO requests ({', '.join(_COLUMNS)}) VALUES ({placeholders})"
        f" ON CONFLICT(request_hash) DO UPDATE SET {updates}"
        " WHERE requests.state != 'ok' AND excluded.state = 'ok'",
        [tuple(row.get(column) for column in _COLUMNS) for row in rows],
    )
    db.execute("COMMIT")
