"""The Batch API's files: input lines from pending requests, replies from output lines.

Also the batches submitted and not yet recorded, saved beside the store so that a rerun with
the same inputs resumes polling instead of submitting again.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from openai.types.chat import ChatCompletion

from judgekit.data.atomic import atomic_write_text
from judgekit.engine.replies import chat_reply
from judgekit.engine.store import RequestKey
from judgekit.types import ChatReply, ChatRequest

ENDPOINT: Final = "/v1/chat/completions"


@dataclass(frozen=True)
class PendingRequest:
    """A request the store cannot answer, with where it sits in the study."""

    key: RequestKey
    batch_index: int

    @property
    def custom_id(self) -> str:
        """``rubric/variant/run/batch/attempt/hash``: readable, unique, maps to the store key."""
        key = self.key
        return (
            f"{key.rubric}/{key.variant}/run{key.run}/batch{self.batch_index}"
            f"/attempt{key.attempt}/{key.hash}"
        )


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


def batch_lines(pending: Iterable[PendingRequest]) -> list[dict[str, Any]]:
    """One Batch API input line per request, in a stable order."""
    ordered = sorted(pending, key=lambda p: p.custom_id)
    return [
        {
            "custom_id": p.custom_id,
            "method": "POST",
            "url": ENDPOINT,
            "body": request_body(p.key.model, p.key.request),
        }
        for p in ordered
    ]


def write_batch_jsonl(pending: Iterable[PendingRequest], path: str | Path) -> Path:
    """Write the Batch API input file for ``pending`` (atomically) and return its path."""
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in batch_lines(pending))
    return atomic_write_text(path, text)


def reply_from_result(line: Mapping[str, Any]) -> tuple[ChatReply | None, str | None]:
    """Read one Batch API output/error line into (reply, None) or (None, error text)."""
    response = line.get("response") or {}
    status = response.get("status_code")
    body = response.get("body") or {}
    if line.get("error"):
        error = line["error"]
        return None, f"batch line error {error.get('code')}: {error.get('message')}"
    if status != 200:
        message = (body.get("error") or {}).get("message", "no message")
        return None, f"batch line HTTP {status}: {message}"
    completion = ChatCompletion.model_validate(body)
    if not completion.choices:
        return None, "batch line reply has no choices"
    reply = chat_reply(
        completion,
        model=completion.model,
        latency_s=0.0,
        request_id=response.get("request_id") or completion.id,
        http_attempts=1,
    )
    return reply, None


class BatchState:
    """Submitted, unfinished batches, saved beside the store as ``<store>.batches.json``.

    Keyed by a fingerprint of the submitted requests, so the same inputs find their batch.
    """

    def __init__(self, store_path: Path) -> None:
        self.path = store_path.with_name(store_path.name + ".batches.json")

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{self.path}: not JSON ({error.msg}); delete it to resubmit"
            ) from None
        return dict(data)

    def get(self, fingerprint: str) -> str | None:
        """The batch ID submitted for these requests, if any."""
        entry = self._read().get(fingerprint)
        return str(entry["batch_id"]) if entry else None

    def put(self, fingerprint: str, batch_id: str, requests: int) -> None:
        """Remember a submitted batch."""
        data = self._read()
        data[fingerprint] = {"batch_id": batch_id, "requests": requests, "submitted": time.time()}
        atomic_write_text(self.path, json.dumps(data, indent=1, sort_keys=True))

    def drop(self, fingerprint: str) -> None:
        """Forget a batch whose results are recorded."""
        data = self._read()
        if data.pop(fingerprint, None) is not None:
            atomic_write_text(self.path, json.dumps(data, indent=1, sort_keys=True))


def fingerprint(pending: Iterable[PendingRequest]) -> str:
    """sha256 of the sorted custom IDs: the same requests give the same fingerprint."""
    joined = "\n".join(sorted(p.custom_id for p in pending))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()
