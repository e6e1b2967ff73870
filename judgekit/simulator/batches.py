"""In-memory Files and Batch API state for the simulator."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.simulator.core import ChatAnswer
from judgekit.simulator.faults import unit

#: Answers one batch line's body (the simulator's chat logic with ``source="batch"``).
LineAnswerer = Callable[[Any], ChatAnswer]


@dataclass
class StoredFile:
    """An uploaded or generated file."""

    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def describe(self) -> dict[str, Any]:
        """The OpenAI ``file`` object."""
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class BatchJob:
    """One batch and its progress."""

    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: Mapping[str, str] | None
    created_at: float
    status: str = "validating"
    polls: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )
    stamps: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The OpenAI ``batch`` object."""
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": int(self.created_at),
            "expires_at": int(self.created_at) + 86400,
            **{
                f"{name}_at": self.stamps.get(name)
                for name in (
                    "in_progress",
                    "finalizing",
                    "completed",
                    "failed",
                    "expired",
                    "cancelling",
                    "cancelled",
                )
            },
            "request_counts": dict(self.counts),
            "metadata": dict(self.metadata) if self.metadata else None,
        }


class BatchStore:
    """Files and batches; a batch completes ``delay_s`` after creation or at the N-th poll."""

    def __init__(
        self, answer_line: LineAnswerer, *, delay_s: float, polls_to_complete: int | None, seed: int
    ) -> None:
        self._answer_line = answer_line
        self._delay_s = delay_s
        self._polls_to_complete = polls_to_complete
        self._seed = seed
        self._files: dict[str, StoredFile] = {}
        self._batches: dict[str, BatchJob] = {}
        self._lock = threading.RLock()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-sim-{uuid.uuid4().hex[:20]}"

    def add_file(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        """Store an uploaded file."""
        stored = StoredFile(self._new_id("file"), filename, purpose, data, int(time.time()))
        with self._lock:
            self._files[stored.id] = stored
        return stored

    def file(self, file_id: str) -> StoredFile | None:
        """A stored file, or None."""
        with self._lock:
            return self._files.get(file_id)

    def batch(self, batch_id: str) -> BatchJob | None:
        """A batch (advanced if it is due), or None."""
        with self._lock:
            job = self._batches.get(batch_id)
            if job is not None and job.status in ("validating", "in_progress"):
                job.polls += 1
                self._advance(job)
            return job

    def create_batch(
        self,
        input_file_id: str,
        endpoint: str,
        completion_window: str,
        metadata: Mapping[str, str] | None,
    ) -> BatchJob | str:
        """Create a batch from an uploaded JSONL file; an error message if the request is bad."""
        with self._lock:
            source = self._files.get(input_file_id)
            if source is None:
                return f"No such file: {input_file_id}"
            if endpoint != "/v1/chat/completions":
                return (
                    f"Unsupported endpoint {endpoint!r}; the simulator serves /v1/chat/completions"
                )
            job = BatchJob(
                self._new_id("batch"),
                input_file_id,
                endpoint,
                completion_window,
                metadata,
                time.time(),
            )
            problems = _validate_lines(source.data, endpoint)
            if problems:
                job.status, job.errors = "failed", problems
                job.stamps["failed"] = int(job.created_at)
            self._batches[job.id] = job
            return job

    def cancel(self, batch_id: str) -> BatchJob | None:
        """Cancel a batch that has not finished."""
        with self._lock:
            job = self._batches.get(batch_id)
            if job is not None and job.status in ("validating", "in_progress"):
                now = int(time.time())
                job.status = "cancelled"
                job.stamps.update(cancelling=now, cancelled=now)
            return job

    def _advance(self, job: BatchJob) -> None:
        if job.status == "validating":
            job.status = "in_progress"
            job.stamps["in_progress"] = int(time.time())
        due = (
            job.polls >= self._polls_to_complete
            if self._polls_to_complete is not None
            else time.time() - job.created_at >= self._delay_s
        )
        if due:
            self._complete(job)

    def _complete(self, job: BatchJob) -> None:
        lines = [
            json.loads(raw)
            for raw in self._files[job.input_file_id].data.splitlines()
            if raw.strip()
        ]
        outputs: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for line in lines:
            record = answer_batch_line(self._answer_line, line, seed=self._seed, batch_id=job.id)
            (outputs if record["response"]["status_code"] == 200 else failures).append(record)
        now = int(time.time())
        job.counts = {"total": len(lines), "completed": len(outputs), "failed": len(failures)}
        if outputs:
            job.output_file_id = self.add_file(
                f"{job.id}_output.jsonl", "batch_output", _jsonl(outputs)
            ).id
        if failures:
            job.error_file_id = self.add_file(
                f"{job.id}_error.jsonl", "batch_output", _jsonl(failures)
            ).id
        job.status = "completed"
        job.stamps.update(finalizing=now, completed=now)


def answer_batch_line(
    answer_line: LineAnswerer, line: Mapping[str, Any], *, seed: int, batch_id: str
) -> dict[str, Any]:
    """The output record of one batch input line, in the OpenAI (and vLLM run-batch) format."""
    answer = answer_line(line["body"])
    request_id = f"req_sim_{int(unit(seed, batch_id, line['custom_id']) * 1e15):015d}"
    record: dict[str, Any] = {
        "id": f"batch_req_{request_id[8:]}",
        "custom_id": line["custom_id"],
        "error": None,
    }
    if answer.status_code == 200 and answer.payload is not None:
        record["response"] = {"status_code": 200, "request_id": request_id, "body": answer.payload}
        return record
    body = answer.payload or {
        "error": {
            "message": "The simulated worker lost the request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    record["response"] = {
        "status_code": answer.status_code or 500,
        "request_id": request_id,
        "body": body,
    }
    return record


def run_batch_file(
    answer_line: LineAnswerer, source: Path, target: Path, *, seed: int = 0
) -> tuple[int, int]:
    """Answer every line of a batch input file into a results file, like ``vllm run-batch``.

    Lines are read and written one at a time (the results file grows as it goes, so a
    stopped run leaves a partial file). Returns (lines answered 200, lines failed).
    """
    answered = failed = 0
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as results:
        for raw in lines:
            if not raw.strip():
                continue
            line = json.loads(raw)
            record = answer_batch_line(answer_line, line, seed=seed, batch_id=source.name)
            results.write(json.dumps(record, ensure_ascii=False) + "\n")
            if record["response"]["status_code"] == 200:
                answered += 1
            else:
                failed += 1
    return answered, failed


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _validate_lines(data: bytes, endpoint: str) -> list[dict[str, Any]]:
    """Problems with a batch input file, as OpenAI batch error entries (empty if valid)."""
    problems: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    lines = data.decode("utf-8", errors="replace").splitlines()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append(
                _problem("invalid_json_line", f"line {number}: not JSON ({error.msg})", number)
            )
            continue
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str) or not custom_id:
            problems.append(_problem("missing_custom_id", f"line {number}: no custom_id", number))
        elif custom_id in seen_ids:
            problems.append(
                _problem(
                    "duplicate_custom_id", f"line {number}: custom_id {custom_id!r} repeats", number
                )
            )
        else:
            seen_ids.add(custom_id)
        if isinstance(line, dict) and (
            line.get("method") != "POST"
            or line.get("url") != endpoint
            or not isinstance(line.get("body"), dict)
        ):
            problems.append(
                _problem(
                    "invalid_request",
                    f"line {number}: needs method POST, url {endpoint}, a body object",
                    number,
                )
            )
    if not seen_ids and not problems:
        problems.append(_problem("empty_file", "the input file has no requests", None))
    return problems


def _problem(code: str, message: str, line: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}
