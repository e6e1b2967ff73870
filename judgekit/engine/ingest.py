"""Record a batch results file (OpenAI Batch API or ``vllm run-batch`` output) into a store.

The requests were written by ``judgekit judge --write-requests`` (each recorded ``pending`` in
the store, its ``custom_id`` ending in the store key), run elsewhere (e.g. ``vllm run-batch``
on a GPU machine), and their results come back here. Each line is checked on its own: a line
that is not a result object, names a request this store never wrote, or repeats a custom ID
of the same file is refused with one line saying why; every other line is recorded under its
request hash (a failed line as that request's error, asked again by the next
``--write-requests``). A line whose request is already answered is skipped, so a partial
results file can be ingested now and the complete one later.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from judgekit.engine.batch_files import hash_of, reply_from_result
from judgekit.engine.store import ResponseStore


@dataclass
class IngestReport:
    """What one results file added to a store.

    Attributes:
        replies: Lines recorded as replies.
        errors: Failed lines recorded as their request's error.
        already: Lines whose request the store had already answered (skipped).
        refused: One line per refused line: ``FILE line N: why``.
    """

    replies: int = 0
    errors: int = 0
    already: int = 0
    refused: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for the user."""
        return (
            f"{self.replies} replies and {self.errors} failed lines recorded, "
            f"{self.already} already stored, {len(self.refused)} lines refused"
        )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


def _result(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The line as a result object, or ``None`` and why not."""
    try:
        line = json.loads(raw)
    except json.JSONDecodeError as error:
        return None, f"not JSON ({error.msg}; a line cut short?)"
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        return None, "not a batch result (no custom_id)"
    if not isinstance(line.get("response"), dict) and not line.get("error"):
        return None, f"custom_id {line['custom_id']!r}: neither a response nor an error"
    return line, ""


def ingest_results(store: ResponseStore, path: str | Path) -> IngestReport:
    """Record every acceptable line of a results file in ``store`` (read line by line).

    Returns:
        What was recorded, skipped and refused (see :class:`IngestReport`).
    """
    source = Path(path)
    report = IngestReport()
    seen: dict[str, int] = {}
    writes: list[Future[None]] = []
    for number, raw in _lines(source):
        line, why = _result(raw)
        if line is None:
            report.refused.append(f"{source} line {number}: {why}")
            continue
        custom_id = line["custom_id"]
        if custom_id in seen:
            report.refused.append(
                f"{source} line {number}: custom_id {custom_id!r} repeats line {seen[custom_id]}"
            )
            continue
        seen[custom_id] = number
        request_hash = hash_of(custom_id)
        state = store.state(request_hash)
        if state is None:
            report.refused.append(
                f"{source} line {number}: custom_id {custom_id!r} is no request of {store.path}"
                " (written for another store, or edited)"
            )
            continue
        if state == "ok":
            report.already += 1
            continue
        try:
            reply, error = reply_from_result(line)
        except (pydantic.ValidationError, AttributeError, TypeError) as exc:
            what = " ".join(str(exc).split())[:160]
            report.refused.append(f"{source} line {number}: not a chat completion ({what})")
            continue
        if reply is not None:
            writes.append(store.submit_reply(request_hash, reply))
            report.replies += 1
        else:
            writes.append(store.submit_error(request_hash, error or "batch line failed", 1))
            report.errors += 1
    for written in writes:
        written.result()  # the report is returned once every reply is committed
    return report
