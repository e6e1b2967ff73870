"""Numbered schema migrations of the response store, applied in order.

The store's ``meta`` table records ``schema_version``: the number of migrations applied. Opening
a store for writing applies the missing ones, each in its own transaction together with the
new version number, so a store is always at one version. A store newer than this judgekit is
refused (its rows could be misread). A read-only open migrates an in-memory copy, never the
file. Add a migration by appending a function to :data:`MIGRATIONS`; never edit a released one.

1. The original schema (judgekit's first stores, which already wrote ``schema_version = 1``).
2. ``endpoint`` (normalised base URL) and ``base_hash`` (the request hash without endpoint)
   per request. Request keys now include the endpoint; rows from version 1 have
   ``endpoint = ''`` and ``base_hash = request_hash``, since their hash was endpoint-free.
3. ``reasoning`` and ``refusal`` per reply: the provider's separate reasoning field and its
   refusal text (content null), so a replayed refusal is read ``refused`` again and the judge's
   reasoning is kept. Earlier rows have neither (``NULL``): their replies were stored without.
4. ``instructions``: each distinct system message once, keyed by its sha256. Requests written
   from then on store ``{"role": "system", "instructions": DIGEST}`` in place of the text (the
   2-4 KB instructions were repeated in every row); earlier rows keep their full messages.
   Both forms are read back as the full messages, and the request hashes are unchanged.
5. ``reask_hint`` per request: the hint a re-ask carried naming what was wrong with the last
   reply (``''`` for first asks and hint-less re-asks; ``NULL`` for rows stored before).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from judgekit.types import UsageError


def _create_requests(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE IF NOT EXISTS requests (
            request_hash TEXT PRIMARY KEY,
            state TEXT NOT NULL CHECK (state IN ('pending', 'ok', 'error')),
            rubric TEXT NOT NULL, variant TEXT NOT NULL, model TEXT NOT NULL,
            run INTEGER NOT NULL, attempt INTEGER NOT NULL,
            options TEXT NOT NULL, messages TEXT NOT NULL,
            reply_text TEXT, reply_model TEXT,
            prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER,
            latency_s REAL, finish_reason TEXT, request_id TEXT, top_logprobs TEXT,
            http_attempts INTEGER, error TEXT, requested_at TEXT NOT NULL, answered_at TEXT
        )"""
    )


def _add_endpoint(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE requests ADD COLUMN endpoint TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE requests ADD COLUMN base_hash TEXT")
    db.execute("UPDATE requests SET base_hash = request_hash")
    db.execute("CREATE INDEX requests_base_hash ON requests (base_hash)")


def _add_reasoning_and_refusal(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE requests ADD COLUMN reasoning TEXT")
    db.execute("ALTER TABLE requests ADD COLUMN refusal TEXT")


def _add_instructions(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE instructions (digest TEXT PRIMARY KEY, content TEXT NOT NULL)")


def _add_reask_hint(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE requests ADD COLUMN reask_hint TEXT")


#: Migration ``n`` (1-based) brings a store from version ``n - 1`` to ``n``.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _create_requests,
    _add_endpoint,
    _add_reasoning_and_refusal,
    _add_instructions,
    _add_reask_hint,
)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(db: sqlite3.Connection) -> int:
    """The version recorded in ``meta`` (0 for an empty database)."""
    has_meta = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if has_meta is None:
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row is not None else 0


def check_version(version: int, source: Path) -> int:
    """``version`` if this judgekit can read a store of it.

    Raises:
        UsageError: If the store was written by a newer judgekit (its rows could be misread).
    """
    if version > SCHEMA_VERSION:
        raise UsageError(
            f"{source}: response store schema {version} is newer than this judgekit's "
            f"({SCHEMA_VERSION}); upgrade judgekit to use it"
        )
    return version


def migrate(db: sqlite3.Connection, source: Path) -> int:
    """Apply every missing migration to ``db`` (autocommit connection) and return the version.

    Raises:
        UsageError: If the store was written by a newer judgekit.
    """
    version = check_version(schema_version(db), source)
    for number in range(version + 1, SCHEMA_VERSION + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            MIGRATIONS[number - 1](db)
            db.execute(
                "INSERT INTO meta VALUES ('schema_version', ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(number),),
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    return SCHEMA_VERSION
