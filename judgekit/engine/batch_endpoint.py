"""The Batch API endpoint: submit a round's requests, poll its batches, record their results.

:mod:`judgekit.engine.batch_api` decides what a round holds (the requests the store cannot
answer yet); this module sends it: each batch's input file uploaded and the batch created,
saved batches resumed rather than submitted again, each batch polled (bounded, with backoff),
its output and error lines written into the response store under their request hashes. Files
go through temporary files on disk both ways (uploaded and downloaded in chunks, read line by
line), so a batch of 200 MB is never held in memory whole.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import IO, Any

import openai
from openai.types import Batch as SDKBatch

from judgekit.engine.batch_files import (
    ENDPOINT,
    BatchLimits,
    BatchState,
    PendingRequest,
    encoded_lines,
    hash_of,
    reply_from_result,
    split_for_limits,
)
from judgekit.engine.providers import PLACEHOLDER_KEY
from judgekit.engine.store import ResponseStore

TERMINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class PollPolicy:
    """How a batch is polled: interval grows by ``factor`` up to a cap; give up after a bound.

    Attributes:
        initial_s: First wait between polls.
        factor: Growth of the wait after each poll.
        max_interval_s: Longest wait between polls.
        timeout_s: Stop waiting (the batch keeps running; rerun to resume) after this long.
    """

    initial_s: float = 2.0
    factor: float = 1.5
    max_interval_s: float = 60.0
    timeout_s: float = 26 * 3600.0


async def submit_batch(
    sdk: openai.AsyncOpenAI,
    pending: Sequence[PendingRequest],
    *,
    completion_window: str = "24h",
    metadata: Mapping[str, str] | None = None,
) -> str:
    """Upload the requests as JSONL (from a temporary file), create the batch, return its ID."""
    with tempfile.TemporaryFile() as data:
        for line in encoded_lines(pending):
            data.write(line)
        data.seek(0)  # httpx reads it in chunks (and from the start again on a retry)
        uploaded = await sdk.files.create(file=("judgekit_batch.jsonl", data), purpose="batch")
    batch = await sdk.batches.create(
        input_file_id=uploaded.id,
        endpoint=ENDPOINT,
        completion_window=completion_window,  # type: ignore[arg-type]
        metadata=dict(metadata) if metadata else None,
    )
    return batch.id


async def wait_for_batch(
    sdk: openai.AsyncOpenAI,
    batch_id: str,
    policy: PollPolicy,
    on_poll: Callable[[SDKBatch], None] = lambda _batch: None,
) -> SDKBatch:
    """Poll until the batch is completed, failed, expired or cancelled.

    Raises:
        TimeoutError: After ``policy.timeout_s``; the batch keeps running and a rerun resumes.
    """
    started = time.monotonic()
    interval = policy.initial_s
    while True:
        batch = await sdk.batches.retrieve(batch_id)
        on_poll(batch)
        if batch.status in TERMINAL_STATUSES:
            return batch
        if time.monotonic() - started + interval > policy.timeout_s:
            raise TimeoutError(
                f"batch {batch_id} still {batch.status} after {policy.timeout_s:.0f}s; "
                "rerun with the same inputs to resume waiting"
            )
        await asyncio.sleep(interval)
        interval = min(interval * policy.factor, policy.max_interval_s)


async def download_results(sdk: openai.AsyncOpenAI, batch: SDKBatch, into: IO[bytes]) -> None:
    """Write a finished batch's output and error files into ``into``, chunk by chunk."""
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            async with sdk.files.with_streaming_response.content(file_id) as response:
                async for chunk in response.iter_bytes():
                    into.write(chunk)
            into.write(b"\n")  # the error file's first line never joins the output's last


def result_lines(handle: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON lines :func:`download_results` wrote, read one at a time from the start."""
    handle.seek(0)
    for raw in handle:
        if raw.strip():
            yield json.loads(raw)


def record_results(
    store: ResponseStore,
    pending: Mapping[str, PendingRequest],
    batch: SDKBatch,
    lines: Iterable[Mapping[str, Any]],
    expected: Sequence[str],
    secret: str = "",
) -> tuple[int, int]:
    """Write each line's reply (or error) into the store; returns (replies, errors).

    Args:
        store: Where the replies go.
        pending: The requests still unanswered, by store key; lines for other requests of
            the batch (recorded by an earlier, interrupted run) are skipped.
        batch: The finished batch.
        lines: Its output and error lines.
        expected: The store keys of the batch's requests.
        secret: The key the batch was sent with, scrubbed from every reply.

    A pending request of the batch with no line (expired or cancelled batch) is recorded as
    an error naming the batch and its status.

    Raises:
        ValueError: If a line's ``custom_id`` is not one of the batch's requests.
    """
    members = set(expected)
    answered: set[str] = set()
    replies = errors = 0
    writes: list[Future[None]] = []
    for line in lines:
        request_hash = hash_of(str(line.get("custom_id")))
        if request_hash not in members:
            unknown = line.get("custom_id")
            raise ValueError(f"batch {batch.id}: result for unknown custom_id {unknown!r}")
        answered.add(request_hash)
        if request_hash not in pending:
            continue
        reply, error = reply_from_result(line, secret)
        if reply is not None:
            writes.append(store.submit_reply(request_hash, reply))
            replies += 1
        else:
            writes.append(store.submit_error(request_hash, error or "batch line failed", 1))
            errors += 1
    for request_hash in sorted(members & set(pending) - answered):
        writes.append(store.submit_error(request_hash, f"batch {batch.id} {batch.status}", 0))
        errors += 1
    for written in writes:
        written.result()  # returns once every reply of the batch is committed
    return replies, errors


@dataclass
class Round:
    """One round's batches: what they hold and where they go (shared by its waits)."""

    sdk: openai.AsyncOpenAI
    store: ResponseStore
    state: BatchState
    pending: dict[str, PendingRequest]
    poll: PollPolicy
    notify: Callable[[str], None]


async def run_round(
    work: Round, limits: BatchLimits, completion_window: str, where: Mapping[str, Any]
) -> list[str]:
    """Resume the saved batches holding pending requests, submit the rest (split), record all.

    Returns:
        The IDs of the round's batches.
    """
    resumed: list[dict[str, Any]] = []
    covered: set[str] = set()
    for entry in work.state.unrecorded():
        if set(entry.get("hashes", ())) & set(work.pending) and await _still_known(work, entry):
            resumed.append(entry)
            covered |= set(entry["hashes"])
            work.notify(
                f"resuming batch {entry['batch_id']} ({entry['requests']} requests, "
                f"{entry.get('status', '?')})"
            )
    to_submit = [p for h, p in work.pending.items() if h not in covered]
    for chunk in split_for_limits(to_submit, limits) if to_submit else []:
        hashes = [p.key.hash for p in chunk]
        for written in [work.store.submit_request(p.key) for p in chunk]:
            await asyncio.wrap_future(written)
        batch_id = await submit_batch(work.sdk, chunk, completion_window=completion_window)
        work.state.add(batch_id, hashes, **where)
        resumed.append({"batch_id": batch_id, "hashes": hashes, "requests": len(hashes)})
        work.notify(f"submitted batch {batch_id} ({len(hashes)} requests)")
    await asyncio.gather(*(_finish_batch(work, entry) for entry in resumed))
    return [entry["batch_id"] for entry in resumed]


async def _still_known(work: Round, entry: Mapping[str, Any]) -> bool:
    """Whether the endpoint still knows a saved batch (else its requests are submitted again)."""
    try:
        await work.sdk.batches.retrieve(entry["batch_id"])
    except openai.NotFoundError:
        work.notify(f"saved batch {entry['batch_id']} is unknown to the endpoint; submitting again")
        work.state.update(entry["batch_id"], recorded=True, status="unknown to the endpoint")
        return False
    return True


async def _finish_batch(work: Round, entry: Mapping[str, Any]) -> None:
    """Wait for one batch, then record its results (or fail on a batch rejected whole)."""
    batch_id = entry["batch_id"]

    def on_poll(batch: SDKBatch) -> None:
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        if work.state.update(batch_id, status=batch.status, counts=counts):
            done = f"{counts.get('completed', 0)}/{counts.get('total', 0)} done" if counts else ""
            work.notify(f"batch {batch_id}: {batch.status} {done}".rstrip())

    batch = await wait_for_batch(work.sdk, batch_id, work.poll, on_poll)
    if batch.status == "failed":
        problems = "; ".join(
            e.message or "" for e in (batch.errors.data if batch.errors else None) or []
        )
        work.state.update(batch_id, recorded=True)
        raise ValueError(f"batch {batch_id} was rejected: {problems or 'no reason given'}")
    key = str(work.sdk.api_key or "")
    secret = "" if key == PLACEHOLDER_KEY else key
    with tempfile.TemporaryFile() as results:
        await download_results(work.sdk, batch, results)
        replies, errors = record_results(
            work.store, work.pending, batch, result_lines(results), entry["hashes"], secret
        )
    work.state.update(batch_id, recorded=True)
    work.notify(f"batch {batch_id} {batch.status}: {replies} replies, {errors} failed lines")
