"""``judgekit judge --batch-api`` and ``judgekit status``: a study judged through a Batch API.

The judging is :func:`judgekit.engine.batch_api.batch_judge` (the online engine's steps, with
requests collected into batch files instead of sent); this module adds what the command line
needs around it: which presets have a Batch API and their limits, the dry run at batch rates,
one line per batch event on stderr, a Ctrl-C that leaves the batches running and prints how to
resume, and a status report of every batch saved beside the store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from judgekit.config import stop_on_signals
from judgekit.engine import PROVIDERS, JudgeOptions, OpenAIJudge, ResponseStore
from judgekit.engine.batch_files import BatchLimits, BatchState
from judgekit.engine.estimate import CostEstimate
from judgekit.engine.modes import MODES
from judgekit.judging.clients import EndpointOptions, planning_client
from judgekit.study.folder import StudyFolder
from judgekit.types import UsageError

#: Options of ``judge()`` that the Batch API run sets itself.
_SET_BY_BATCH = ("store", "mode", "offline", "progress")


def batch_presets() -> list[str]:
    """The presets whose endpoint offers the chat-completions Batch API."""
    return [name for name, preset in PROVIDERS.items() if preset.supports_batch_api]


def batch_client(client: Any) -> OpenAIJudge:
    """``client`` if its preset has a Batch API; else one line naming the presets that do.

    Raises:
        UsageError: For the local model, or a preset without a Batch API.
    """
    preset = getattr(client, "preset", None)
    if not isinstance(client, OpenAIJudge) or preset is None or not preset.supports_batch_api:
        name = getattr(preset, "name", "the local model")
        raise UsageError(
            f"--batch-api: {name} has no Batch API (presets with one: "
            f"{', '.join(batch_presets())}); for vLLM write the requests with --write-requests"
        )
    return client


def check_batch_command(
    *,
    batch_api: bool,
    write_requests: Path | None,
    judging: JudgeOptions,
    endpoint: EndpointOptions,
    items: Path,
    temporary_store: bool,
) -> None:
    """Refuse ``--batch-api`` / ``--write-requests`` options that cannot work (one line).

    Raises:
        UsageError: For both flags at once, ``--offline``, conversation mode, a preset
            without a Batch API, or ``--write-requests`` without a kept store or to a bad path.
    """
    flag = "--batch-api" if batch_api else "--write-requests"
    if batch_api and write_requests is not None:
        raise UsageError("--batch-api sends the requests, --write-requests writes them: pick one")
    if judging.offline:
        raise UsageError(f"{flag} is for requests the store cannot answer; leave out --offline")
    mode = MODES.get(judging.mode)  # an unknown mode is named by the engine's option check
    if mode is not None and not mode.requests_alone:
        raise UsageError(
            f"{flag} sends every request on its own; --mode {judging.mode} needs each "
            "reply before the next request (leave out --mode)"
        )
    if batch_api:
        batch_client(planning_client(endpoint))
        return
    assert write_requests is not None
    check_requests_path(write_requests, items)
    if temporary_store:
        raise UsageError("--write-requests keeps the requests in a store: pass --study or --store")


def check_requests_path(path: Path, items: Path) -> None:
    """Refuse a requests file that is the items file, not ``.jsonl``, or a folder (one line).

    Raises:
        UsageError: Naming the option and what to change.
    """
    if path.suffix.lower() != ".jsonl":
        raise UsageError(f"--write-requests {path}: the file name must end in .jsonl")
    if path.exists() and path.resolve() == items.resolve():
        raise UsageError(f"--write-requests {path} is the items file; choose another name")
    if path.is_dir():
        raise UsageError(f"--write-requests {path} is a folder; give a file name")


def parse_prices(text: str | None) -> dict[str, float] | None:
    """``--prices 2,8`` as ``{"input": 2.0, "output": 8.0}`` (USD per 1M tokens).

    Raises:
        UsageError: Unless two non-negative numbers separated by a comma.
    """
    if text is None:
        return None
    parts = text.split(",")
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 2 or min(numbers) < 0:
        raise UsageError(f"--prices {text!r}: give USD per 1M input and output tokens, e.g. 2,8")
    return {"input": numbers[0], "output": numbers[1]}


def batch_limits(client: OpenAIJudge) -> BatchLimits:
    """The provider's request and byte limits of one input file."""
    return BatchLimits(client.preset.batch_max_requests, client.preset.batch_max_bytes)


def at_batch_rates(estimate: CostEstimate, client: OpenAIJudge) -> CostEstimate:
    """The dry run's estimate priced at the preset's Batch API rate."""
    return estimate.at_rate(client.preset.batch_price_factor)


def judge_options(options: JudgeOptions) -> dict[str, Any]:
    """``options`` as the keyword arguments of ``batch_judge`` (what it sets itself left out)."""
    return {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if field.name not in _SET_BY_BATCH
    }


def run_batch_api(
    items: Any, rubric: Any, client: OpenAIJudge, options: JudgeOptions, store: Path, err: TextIO
) -> pd.DataFrame:
    """Judge through the client's Batch API, saying each batch event in one line on ``err``.

    Ctrl-C (or SIGTERM) ends the wait with exit code 130 and one line naming the batches that
    keep running and the command that resumes them.
    """
    from judgekit.engine.batch_api import batch_judge

    def notify(line: str) -> None:
        print(line, file=err, flush=True)

    with batches_survive_interrupts(store):
        return batch_judge(
            items,
            rubric,
            client,
            store=store,
            limits=batch_limits(client),
            notify=notify,
            **judge_options(options),
        )


@contextlib.contextmanager
def batches_survive_interrupts(store: Path) -> Iterator[None]:
    """On Ctrl-C, leave the batches running, say how to resume, and exit with 130."""
    try:
        with stop_on_signals():
            yield
    except KeyboardInterrupt:
        print(interrupted_batches(store, sys.argv), file=sys.stderr, flush=True)
        raise SystemExit(130) from None


def interrupted_batches(store: Path, argv: list[str]) -> str:
    """One line: which batches keep running, where they are saved, the command that resumes."""
    again = shlex.join(["judgekit", *argv[1:]])
    running = [entry["batch_id"] for entry in BatchState(store).unrecorded()]
    if not running:
        return f"interrupted before a batch was submitted; rerun with: {again}"
    return (
        f"interrupted: {len(running)} batch(es) keep running at the provider "
        f"({', '.join(running)}; saved in {BatchState(store).path}); "
        f"`judgekit status` shows them; resume with: {again}"
    )


def store_of(path: Path) -> Path:
    """The response store of a study folder, or ``path`` itself when it is a store file.

    Raises:
        UsageError: If neither is there.
    """
    store = StudyFolder(path).store if path.is_dir() else path
    if not store.is_file() and not BatchState(store).path.is_file():
        raise UsageError(f"{path}: no response store here; pass a study folder or a --store file")
    return store


def show_status(path: Path, out: TextIO, *, live: bool = True) -> None:
    """Print the store's requests by state and every saved batch's status and counts.

    With ``live``, each unfinished batch is asked for at its endpoint (with the preset's own
    key variable); when that fails, the last saved status is shown and the reason said once.
    """
    store = store_of(path)
    if store.is_file():
        with ResponseStore.open_readonly(store) as opened:
            counts = opened.counts()
        print(
            f"{store}: {counts['ok']} replies, {counts['error']} failed, "
            f"{counts['pending']} pending",
            file=out,
        )
    state = BatchState(store)
    entries = state.entries()
    if not entries:
        print("no batches submitted for this store", file=out)
        return
    if live:
        problem = _refresh(state, [e for e in entries if not e.get("recorded")])
        if problem:
            print(f"(live status unavailable: {problem}; showing the saved status)", file=out)
        entries = state.entries()
    header = ("batch", "round", "requests", "status", "done", "failed", "recorded")
    print("{:<36} {:>5} {:>9}  {:<11} {:>5} {:>7}  {}".format(*header), file=out)
    for entry in entries:
        counts = entry.get("counts") or {}
        submitted = datetime.fromtimestamp(entry.get("submitted", 0), UTC)
        print(
            f"{entry['batch_id']:<36} {entry.get('round', '-')!s:>5} {entry['requests']:>9}  "
            f"{entry.get('status', '?'):<11} {counts.get('completed', 0):>5} "
            f"{counts.get('failed', 0):>7}  {'yes' if entry.get('recorded') else 'no'}"
            f"  (submitted {submitted:%Y-%m-%d %H:%M} UTC)",
            file=out,
        )
    running = [e for e in entries if not e.get("recorded")]
    if running:
        print(
            f"{len(running)} batch(es) not recorded yet: rerun the same `judgekit judge ... "
            "--batch-api` command to wait for them and record their results",
            file=out,
        )


def _refresh(state: BatchState, running: list[dict[str, Any]]) -> str:
    """Ask each running batch's endpoint for its state; the first problem, or ``""``."""
    import openai

    from judgekit.engine import get_provider
    from judgekit.engine.providers import resolve_api_key

    for entry in running:
        try:
            preset = get_provider(entry.get("provider") or "openai")
            base_url = entry.get("base_url") or preset.base_url or ""
            sdk = openai.OpenAI(
                base_url=base_url,
                api_key=resolve_api_key(preset, None, base_url),
                max_retries=1,
                timeout=20.0,
            )
            with sdk:
                batch = sdk.batches.retrieve(entry["batch_id"])
        except (UsageError, openai.OpenAIError) as error:
            return " ".join(str(error).split())[:200]
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        state.update(entry["batch_id"], status=batch.status, counts=counts)
    return ""
