"""The response store's rows: its columns, a row read back as a call, the portable forms.

:mod:`judgekit.engine.store` keeps the database; this module holds what turns its rows into
:class:`~judgekit.engine.store.StoredCall` s and back into an exported ``.jsonl.gz``'s lines.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.engine.keys import canonical_json
from judgekit.types import ChatReply, Usage

#: The requests table's columns, in the order rows are written and exported.
COLUMNS: tuple[str, ...] = (
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
    "endpoint",
    "base_hash",
    "reasoning",
    "refusal",
    "reask_hint",
)


@dataclass(frozen=True)
class StoredCall:
    """A finished request as recorded: its reply, or the error that ended it."""

    request_hash: str
    reply: ChatReply | None
    error: str | None
    failed_attempts: int = 0  # HTTP attempts spent on a call that failed


CALL_COLUMNS = (
    "request_hash, state, reply_text, reply_model, prompt_tokens, completion_tokens,"
    " cached_tokens, latency_s, finish_reason, request_id, top_logprobs, http_attempts, error,"
    " reasoning, refusal"
)


def stored_call(row: Sequence[Any]) -> StoredCall | None:
    """A row of :data:`CALL_COLUMNS` as a finished call (``None`` while pending)."""
    request_hash, state = row[0], row[1]
    if state == "pending":
        return None
    if state == "error":
        return StoredCall(request_hash, None, row[12], failed_attempts=row[11] or 0)
    logprobs = None
    if row[10] is not None:
        logprobs = tuple(tuple((tok, lp) for tok, lp in step) for step in json.loads(row[10]))
    reply = ChatReply(
        text=row[2],
        model=row[3],
        usage=Usage(row[4] or 0, row[5] or 0, row[6] or 0),
        latency_s=row[7] or 0.0,
        finish_reason=row[8],
        request_id=row[9],
        top_logprobs=logprobs,
        http_attempts=row[11] or 1,
        reasoning=row[13],
        refusal=row[14],
    )
    return StoredCall(request_hash, reply, None)


def written_out(messages: str, instructions: Mapping[str, str]) -> str:
    """Stored messages (JSON) with every instructions reference replaced by its text."""
    if '"instructions":' not in messages:
        return messages
    full = []
    for message in json.loads(messages):
        digest = message.pop("instructions", None)
        full.append(message if digest is None else {**message, "content": instructions[digest]})
    return canonical_json(full)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of an exported ``.jsonl.gz`` store; a line that is not JSON is named."""
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {line_number} is not JSON ({exc.msg})") from None
    return rows


def insert_rows(db: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add rows; an answered row also replaces a local row that was never answered."""
    placeholders = ", ".join("?" for _ in COLUMNS)
    updates = ", ".join(f"{column}=excluded.{column}" for column in COLUMNS[1:])
    db.execute("BEGIN")
    db.executemany(
        f"INSERT INTO requests ({', '.join(COLUMNS)}) VALUES ({placeholders})"
        f" ON CONFLICT(request_hash) DO UPDATE SET {updates}"
        " WHERE requests.state != 'ok' AND excluded.state = 'ok'",
        [tuple(with_endpoint(row).get(column) for column in COLUMNS) for row in rows],
    )
    db.execute("COMMIT")


def with_endpoint(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row exported before schema 2 gets the values migration 2 gives stored rows."""
    if row.get("base_hash") is not None:
        return row
    return {**row, "endpoint": row.get("endpoint") or "", "base_hash": row["request_hash"]}
