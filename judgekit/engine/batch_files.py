"""The Batch API's files: input lines from pending requests, replies from output lines.

Also the batches submitted and not yet recorded, saved beside the store so that a rerun with
the same inputs resumes polling instead of submitting again, and the split of a round's
requests into files within a provider's limits.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from judgekit.data.atomic import atomic_write, atomic_write_text
from judgekit.engine.replies import chat_reply, without_secret
from judgekit.engine.store import RequestKey
from judgekit.types import ChatReply, ChatRequest, UsageError

ENDPOINT: Final = "/v1/chat/completions"


@dataclass(frozen=True)
class PendingRequest:
    """A request the store cannot answer, with where it sits in the study."""

    key: RequestKey
    batch_index: int

    @property
    def custom_id(self) -> str:
        """``rubric/variant/run/batch/attempt/hash``: readable, unique, ends in the store key."""
        key = self.key
        return (
            f"{key.rubric}/{key.variant}/run{key.run}/batch{self.batch_index}"
            f"/attempt{key.attempt}/{key.hash}"
        )


def hash_of(custom_id: str) -> str:
    """The store key a ``custom_id`` written by :class:`PendingRequest` ends in."""
    return custom_id.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class BatchLimits:
    """How much one Batch API input file may hold (from the provider preset).

    Attributes:
        max_requests: Lines per file.
        max_bytes: Bytes per file.
    """

    max_requests: int = 50_000
    max_bytes: int = 200_000_000


def request_body(model: str, request: ChatRequest) -> dict[str, Any]:
    """The JSON body ``OpenAIJudge.complete`` sends for ``request`` (``extra_body`` merged)."""
    options = dict(request.options)
    extra_body = options.pop("extra_body", None) or {}
    return {
        "model": model,
        "messages": [dict(m) for m in request.messages],
        **options,
        **extra_body,
    }


def batch_line(pending: PendingRequest) -> dict[str, Any]:
    """One Batch API (and ``vllm run-batch``) input line."""
    return {
        "custom_id": pending.custom_id,
        "method": "POST",
        "url": ENDPOINT,
        "body": request_body(pending.key.model, pending.key.request),
    }


def encoded_lines(pending: Iterable[PendingRequest]) -> Iterator[bytes]:
    """The input lines as UTF-8 JSON, newline-terminated, in a stable (custom ID) order."""
    for p in sorted(pending, key=lambda p: p.custom_id):
        yield (json.dumps(batch_line(p), ensure_ascii=False) + "\n").encode("utf-8")


def write_batch_jsonl(pending: Iterable[PendingRequest], path: str | Path) -> Path:
    """Write the Batch API input file for ``pending`` (atomically, line by line); its path."""

    def write(staged: Path) -> None:
        with staged.open("wb") as handle:
            for line in encoded_lines(pending):
                handle.write(line)

    return atomic_write(path, write)


def split_for_limits(
    pending: Sequence[PendingRequest], limits: BatchLimits
) -> list[list[PendingRequest]]:
    """Cut requests (in custom ID order) into files within ``limits``, greedily.

    Raises:
        UsageError: If one request alone is larger than a file may be.
    """
    chunks: list[list[PendingRequest]] = []
    current: list[PendingRequest] = []
    size = 0
    ordered = sorted(pending, key=lambda p: p.custom_id)
    for p, line in zip(ordered, encoded_lines(ordered), strict=True):
        if len(line) > limits.max_bytes:
            raise UsageError(
                f"request {p.custom_id} is {len(line):,} bytes, more than a batch file may hold "
                f"({limits.max_bytes:,}); use a smaller --batch-size"
            )
        if current and (len(current) >= limits.max_requests or size + len(line) > limits.max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append(p)
        size += len(line)
    if current:
        chunks.append(current)
    return chunks


def reply_from_result(
    line: Mapping[str, Any], secret: str = ""
) -> tuple[ChatReply | None, str | None]:
    """Read one Batch API output/error line into (reply, None) or (None, error text).

    ``secret`` (the key the batch was sent with) is replaced by ``[key]`` in the reply's texts
    before anything stores them, as for an online reply.
    """
    response = line.get("response") or {}
    status = response.get("status_code")
    body = response.get("body") or {}
    if line.get("error"):
        error = line["error"]
        return None, f"batch line error {error.get('code')}: {error.get('message')}"
    if status != 200:
        message = (body.get("error") or {}).get("message", "no message")
        return None, f"batch line HTTP {status}: {message}"
    try:
        reply = chat_reply(
            body,
            model=str(body.get("model") or ""),
            latency_s=0.0,
            request_id=response.get("request_id") or body.get("id"),
            http_attempts=1,
        )
    except ValueError as exc:
        return None, f"batch line {exc}"
    return without_secret(reply, secret), None


class BatchState:
    """Every batch submitted for a store, saved beside it as ``<store>.batches.json``.

    Each entry holds the batch ID, where it was sent (base URL and preset, never a key), the
    store keys of its requests, its last known status and counts, and whether its results are
    recorded in the store. An unrecorded batch holding requests that are still pending is
    resumed instead of submitted again, whatever else changed since.
    """

    def __init__(self, store_path: Path) -> None:
        self.path = store_path.with_name(store_path.name + ".batches.json")

    def entries(self) -> list[dict[str, Any]]:
        """Every saved batch, oldest first."""
        if not self.path.is_file():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise UsageError(
                f"{self.path}: not JSON ({error.msg}); move it away to submit again"
            ) from None
        if isinstance(data, dict) and "batches" not in data:  # the first layout: by fingerprint
            return [{**entry, "hashes": [], "recorded": False} for entry in data.values()]
        return list(data.get("batches", []))

    def _save(self, entries: Sequence[Mapping[str, Any]]) -> None:
        atomic_write_text(self.path, json.dumps({"batches": list(entries)}, indent=1) + "\n")

    def unrecorded(self) -> list[dict[str, Any]]:
        """Batches whose results are not yet in the store."""
        return [entry for entry in self.entries() if not entry.get("recorded")]

    def add(self, batch_id: str, hashes: Sequence[str], **fields: Any) -> None:
        """Remember a submitted batch and the store keys of its requests."""
        entry = {
            "batch_id": batch_id,
            "requests": len(hashes),
            "submitted": time.time(),
            "status": "validating",
            "counts": {},
            "recorded": False,
            **fields,
            "hashes": sorted(hashes),
        }
        self._save([*self.entries(), entry])

    def update(self, batch_id: str, **fields: Any) -> bool:
        """Change a saved batch's fields; True if anything changed."""
        entries = self.entries()
        changed = False
        for entry in entries:
            if entry["batch_id"] == batch_id:
                new = {**entry, **fields}
                changed = new != entry
                entry.update(fields)
        if changed:
            self._save(entries)
        return changed
