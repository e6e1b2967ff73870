"""``judgekit judge`` as plain functions: check everything, then judge, write, and summarise.

Order matters: every input, output path, option and endpoint setting is checked before a
server starts or a call is paid (:func:`prepare`); replies go to a store (the study's, the
``--store`` or a temporary one beside the output) until the outputs are written; the run ends
with a summary table and an exit code that says whether it did its job (:func:`finish`).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import pandas as pd

from judgekit import __version__
from judgekit.data import TABLE_SUFFIXES, Table, read_table, write_id_score_csv, write_table
from judgekit.data.atomic import atomic_write_text
from judgekit.data.tidy import final_verdicts
from judgekit.engine import JudgeOptions, ResponseStore, judge, preview
from judgekit.engine.batch_files import BatchState
from judgekit.engine.interrupts import interrupt_explained
from judgekit.engine.storelock import lock_path
from judgekit.rubrics import PromptRubric
from judgekit.types import Item, JudgeClient, Rubric, Status, UsageError
from judgekit.workflows.batch import (
    at_batch_rates,
    batch_client,
    check_batch_command,
    run_batch_api,
)
from judgekit.workflows.clients import (
    EndpointOptions,
    check_endpoint,
    default_judge_client,
    planning_client,
    probe_endpoint,
)
from judgekit.workflows.errors import RunFailed
from judgekit.workflows.own_prompt import check_placeholders, load_any_rubric, prompt_notice
from judgekit.workflows.replay import judging_record
from judgekit.workflows.requests_file import write_requests
from judgekit.workflows.study import (
    StudyFolder,
    check_label_column,
    check_labels,
    human_labels,
    study_items,
    with_context,
)

#: The side files SQLite keeps beside a store in WAL mode.
WAL_FILES = ("-wal", "-shm")

#: Statuses that leave an item without a score because the reply could not be used.
UNSCORED_STATUSES = frozenset(
    {
        Status.MISSING.value,
        Status.DUPLICATE.value,
        Status.OUT_OF_RANGE.value,
        Status.UNPARSEABLE.value,
        Status.INCONSISTENT.value,
    }
)


@dataclass(frozen=True)
class JudgeCommand:
    """Everything ``judgekit judge`` was asked to do, built once by the CLI.

    Attributes:
        items: The user's items table (never written to).
        rubric: Rubric name.
        output: Judgments table (``.parquet``, ``.csv`` or ``.tsv``); default in the study.
        study: Study folder to write (see :mod:`judgekit.workflows.study`).
        id_score_csv: Also write the seed-style ``ID,score`` file(s).
        labels_column: Human label column of the items file (default: the rubric's).
        limit: Judge only the first N items.
        encoding: Force the items file's encoding.
        sep: Force the items file's separator.
        sheet: Worksheet of an xlsx file.
        max_unscored: Final verdicts that may end unscored by an unusable reply (parse
            failures) before the run counts as failed; ``error`` rows always fail it.
        dry_run: Print the first request, the request count and the estimate; call nothing.
        endpoint: Which judge and how to reach it.
        judging: How to judge (passed to the engine as is).
        batch_api: Judge through the provider's Batch API (:mod:`judgekit.workflows.batch`).
        write_requests: Write the unanswered requests to this batch-input JSONL file instead
            of sending them (:mod:`judgekit.workflows.requests_file`).
        column_map: ``placeholder=Column`` pairs for a prompt file's placeholders.
        format_reminder: Override the rubric's ``format_reminder`` (``None``: keep it).
    """

    items: Path
    rubric: str
    output: Path | None = None
    study: Path | None = None
    id_score_csv: Path | None = None
    labels_column: str | None = None
    limit: int | None = None
    encoding: str | None = None
    sep: str | None = None
    sheet: str | None = None
    max_unscored: int = 0
    dry_run: bool = False
    endpoint: EndpointOptions = field(default_factory=EndpointOptions)
    judging: JudgeOptions = field(default_factory=JudgeOptions)
    batch_api: bool = False
    write_requests: Path | None = None
    column_map: tuple[str, ...] = ()
    format_reminder: bool | None = None


@dataclass(frozen=True)
class Prepared:
    """A checked command: the rubric, the items, where everything goes."""

    command: JudgeCommand
    rubric: Rubric
    table: Table
    items: list[Item]
    unused_columns: list[str]
    label_column: str | None
    output: Path
    store: Path
    temporary_store: bool


def _writable_folder(path: Path, what: str) -> None:
    folder = path
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: cannot write into {folder}; choose another location")


def _check_output(path: Path, items: Path, what: str, suffixes: Sequence[str]) -> None:
    if path.suffix.lower() not in suffixes:
        raise UsageError(f"{what} {path}: the file name must end in {', '.join(suffixes)}")
    if path.exists() and path.resolve() == items.resolve():
        raise UsageError(f"{what} {path} is the items file; choose another name")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    _writable_folder(path.parent, what)


def output_paths(command: JudgeCommand) -> tuple[Path, Path, bool]:
    """The judgments table, the store and whether the store is temporary; all checked.

    Raises:
        UsageError: For an output that is the items file, of an unknown type, or unwritable.
    """
    if command.output is None and command.study is None:
        raise UsageError("say where the judgments go: --study FOLDER or --output FILE")
    if command.study is not None and command.study.exists() and not command.study.is_dir():
        raise UsageError(f"--study {command.study} is a file; give a folder")
    folder = StudyFolder(command.study) if command.study is not None else None
    output = command.output or (folder.judgments if folder else Path())
    _check_output(output, command.items, "--output", TABLE_SUFFIXES)
    if command.id_score_csv is not None:
        _check_output(command.id_score_csv, command.items, "--id-score-csv", (".csv",))
    store = command.judging.store
    if isinstance(store, str | Path):
        _check_output(Path(store), command.items, "--store", (".sqlite", ".db", ".sqlite3"))
        return output, Path(store), False
    if folder is not None:
        return output, folder.store, False
    if command.judging.offline:
        raise UsageError("--offline answers from a store: pass --store FILE (or --study FOLDER)")
    return output, output.with_name(f".{output.name}.responses.sqlite"), True


def prepare(command: JudgeCommand) -> Prepared:
    """Check the whole command before any server starts or any call is made.

    Raises:
        UsageError: One line naming the option or file and what to do.
    """
    output, store, temporary = output_paths(command)
    if command.sep is not None and len(command.sep) != 1:
        raise UsageError(f"--sep {command.sep!r}: give one character, e.g. ';' or ','")
    if command.limit is not None and command.limit < 1:
        raise UsageError(f"--limit {command.limit}: give at least 1")
    rubric = load_any_rubric(command.rubric, command.column_map, command.format_reminder)
    table = read_table(
        command.items,
        required=() if isinstance(rubric, PromptRubric) else rubric.required_columns,
        encoding=command.encoding,
        sep=command.sep,
        sheet=command.sheet,
    )
    if isinstance(rubric, PromptRubric):
        check_placeholders(rubric, [str(c) for c in table.frame.columns], command.items)
    label_column = command.labels_column
    if label_column is not None:
        check_label_column(table, label_column)
    elif rubric.label_column in table.frame.columns:
        label_column = rubric.label_column
    if label_column is not None:
        check_labels(table, label_column, rubric)
    items, unused = study_items(table, rubric, label_column=label_column)
    items = items[: command.limit] if command.limit else items
    check_endpoint(command.endpoint)
    return Prepared(command, rubric, table, items, unused, label_column, output, store, temporary)


def describe_inputs(prepared: Prepared, err: TextIO) -> None:
    """Say once what is sent, what is not, and where the human labels come from."""
    rubric, items = prepared.rubric, prepared.items
    sent = [c for c in rubric.input_columns if any(c in item.fields for item in items)]
    print(f"{len(items)} items; sent to the judge: {', '.join(sent)}", file=err)
    if prepared.unused_columns:
        print(f"not sent to the judge: {', '.join(prepared.unused_columns)}", file=err)
    if prepared.label_column is None:
        print(
            f"no human labels: no column '{rubric.label_column}'; name yours with --labels-column",
            file=err,
        )
    else:
        print(f"human labels: column '{prepared.label_column}'", file=err)


def dry_run(prepared: Prepared, out: TextIO) -> None:
    """Print the first request exactly as it would be sent, the request count and estimate."""
    client = planning_client(prepared.command.endpoint)
    options = _options(prepared)
    request, estimate = preview(prepared.items, prepared.rubric, client, options)
    print(prompt_notice(prepared.rubric, client, options), file=out)
    if prepared.command.batch_api:
        estimate = at_batch_rates(estimate, batch_client(client))
    print(f"judge: {client.model} at {getattr(client, 'base_url', '?')}", file=out)
    if request is not None:
        for message in request.messages:
            print(f"--- {message['role']} ---\n{message['content']}", file=out)
        print(f"--- options ---\n{json.dumps(request.options, indent=1)}", file=out)
    print(estimate.describe(), file=out)
    print("dry run: nothing was sent.", file=out)


def _options(prepared: Prepared) -> JudgeOptions:
    return prepared.command.judging.updated(store=prepared.store)


def check_options(prepared: Prepared) -> None:
    """Check the judging options against the rubric and the endpoint, without a call.

    Raises:
        UsageError: For inconsistent options, or a store file that cannot be opened.
    """
    client = planning_client(prepared.command.endpoint)
    try:
        preview(prepared.items, prepared.rubric, client, _options(prepared))
    except sqlite3.DatabaseError as error:
        raise UsageError(
            f"--store {prepared.store}: cannot open it ({error}); move it away or pass another"
        ) from None


def _replies_in(store: Path) -> int:
    if not store.is_file():
        return 0
    with ResponseStore.open_readonly(store) as opened:
        return opened.counts()["ok"]


def _remove_store(store: Path) -> None:
    saved_batches = BatchState(store).path
    for path in (
        store,
        lock_path(store),
        saved_batches,
        *(store.with_name(store.name + s) for s in WAL_FILES),
    ):
        path.unlink(missing_ok=True)


def _holds_nothing(store: Path) -> bool:
    """No reply stored and no Batch API batch left running (nothing a rerun would need)."""
    return _replies_in(store) == 0 and not BatchState(store).unrecorded()


def run(
    prepared: Prepared, client: JudgeClient, judge_with: Callable[..., pd.DataFrame] = judge
) -> pd.DataFrame:
    """Judge the prepared items on ``client`` and write every output; return the judgments.

    ``judge_with`` takes ``judge()``'s arguments (the Batch API run passes its own). A
    temporary store is removed once the outputs are written, or when the run fails before
    any reply was stored or batch submitted; a failed run that paid for replies (or left
    batches running) keeps it, so a rerun replays (or resumes) them.

    Raises:
        RunFailed: When an output cannot be written (a full disk): the replies stay stored.
    """
    try:
        judgments = judge_with(prepared.items, prepared.rubric, client, _options(prepared))
        judgments = with_context(judgments, prepared.items)
        try:
            write_outputs(prepared, judgments, client)
        except OSError as error:  # a full disk, a folder gone; the atomic writer left no part
            where = error.filename or prepared.output
            raise RunFailed(
                f"cannot write {where} ({error.strerror or error}); the "
                f"{_replies_in(prepared.store)} replies are kept in {prepared.store}: free space "
                "and rerun the same command, which replays them without a call"
            ) from None
    except BaseException:
        if prepared.temporary_store and _holds_nothing(prepared.store):
            _remove_store(prepared.store)
        raise
    if prepared.temporary_store:  # the outputs hold everything now; leave no trace beside them
        _remove_store(prepared.store)
    return judgments


def write_outputs(prepared: Prepared, judgments: pd.DataFrame, client: JudgeClient) -> None:
    """Write the judgments, and with ``--study`` the labels, score files and manifest."""
    command = prepared.command
    write_table(judgments, prepared.output)
    if command.id_score_csv is not None:
        for (variant, repeat), path in _id_score_paths(command.id_score_csv, command).items():
            write_id_score_csv(judgments, path, run=repeat, variant=variant)
    if command.study is None:
        return
    folder = StudyFolder(command.study)
    if not (folder.items.exists() and folder.items.samefile(command.items)):
        write_table(prepared.table.frame, folder.items)  # the study travels with its items
    if prepared.output != folder.judgments:
        write_table(judgments, folder.judgments)
    write_table(judgments, folder.judgments_csv)
    labels = human_labels(prepared.items, prepared.rubric, prepared.label_column)
    write_table(labels, folder.human_labels)
    keys = judgments[["rubric", "variant", "run"]].drop_duplicates()
    for name, variant, repeat in keys.itertuples(index=False):
        write_id_score_csv(
            judgments,
            folder.scores / f"{name}-{variant}-run{repeat}.csv",
            rubric=str(name),
            variant=str(variant),
            run=int(repeat),
        )
    manifest = {
        "judgekit": __version__,
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "items_file": str(command.items.resolve()),
        "rubric": prepared.rubric.name,
        "judge_model": str(judgments["model"].iloc[0]) if len(judgments) else "",
        "variants": list(command.judging.variants),
        "runs": command.judging.runs,
        "batch_size": command.judging.batch_size_for(prepared.rubric),
        "label_column": prepared.label_column,
        "human_labels": len(labels),
        "unused_columns": prepared.unused_columns,
        "settings": judging_record(command.judging, client),
    }
    atomic_write_text(folder.manifest, json.dumps(manifest, indent=1) + "\n")


def _id_score_paths(base: Path, command: JudgeCommand) -> dict[tuple[str, int], Path]:
    """One ``ID,score`` file per (variant, run); the given name when there is only one."""
    variants, runs = list(command.judging.variants), command.judging.runs
    if len(variants) == 1 and runs == 1:
        return {(variants[0], 1): base}
    return {
        (variant, run): base.with_name(f"{base.stem}.{variant}.run{run}{base.suffix}")
        for variant in variants
        for run in range(1, runs + 1)
    }


def finish(prepared: Prepared, judgments: pd.DataFrame, err: TextIO) -> None:
    """Print the summary table; fail the run when rows ended ``error`` or too many unscored.

    Raises:
        RunFailed: One line saying how many rows failed and the first reason.
    """
    verdicts = final_verdicts(judgments)
    counts = verdicts["status"].value_counts()
    attrs = judgments.attrs
    print("status      rows", file=err)
    for status, count in counts.items():
        print(f"{status:<11} {count:>4}", file=err)
    print(
        f"calls made {attrs.get('api_calls', 0)}, replayed {attrs.get('replayed', 0)}, "
        f"failed {attrs.get('failed_calls', 0)}; judgments: {prepared.output}",
        file=err,
    )
    errors = verdicts[verdicts["status"] == Status.ERROR.value]
    if len(errors):
        reason = str(errors["reason"].iloc[0]).splitlines()[0][:200]
        raise RunFailed(f"{len(errors)} of {len(verdicts)} rows ended 'error' (first: {reason})")
    unscored = int(verdicts["status"].isin(UNSCORED_STATUSES).sum())
    if unscored > prepared.command.max_unscored:
        raise RunFailed(
            f"{unscored} of {len(verdicts)} rows have no score (unusable replies), more than "
            f"--max-unscored {prepared.command.max_unscored}; see the status column"
        )


def execute(command: JudgeCommand, out: TextIO | None = None, err: TextIO | None = None) -> None:
    """Run ``judgekit judge``: check, (dry-run or) judge, write, summarise.

    Raises:
        UsageError: A mistake found before any call (one line).
        RunFailed: The run ended without doing its job (one line; outputs are written).
    """
    out, err = out or sys.stdout, err or sys.stderr  # the streams of the moment, not of import
    prepared = prepare(command)
    check_options(prepared)
    if command.batch_api or command.write_requests is not None:
        check_batch_command(
            batch_api=command.batch_api, write_requests=command.write_requests,
            judging=command.judging, endpoint=command.endpoint, items=command.items,
            temporary_store=prepared.temporary_store,
        )  # fmt: skip
    if not command.dry_run:
        planning = planning_client(command.endpoint)
        print(prompt_notice(prepared.rubric, planning, _options(prepared)), file=err)
    describe_inputs(prepared, err)
    if command.dry_run:
        dry_run(prepared, out)
        return
    endpoint = command.endpoint
    if command.write_requests is not None:
        client = planning_client(endpoint)
        path = command.write_requests
        if write_requests(
            prepared.items, prepared.rubric, client, command.judging, prepared.store, path, err
        ):
            return
        print("every request is answered in the store: building the table from it", file=err)
        command = replace(command, judging=command.judging.updated(offline=True))
        prepared = replace(prepared, command=command)
    if command.batch_api:
        client = batch_client(planning_client(endpoint))
        probe_endpoint(endpoint)

        in_batches = functools.partial(run_batch_api, store=prepared.store, err=err)
        finish(prepared, run(prepared, client, in_batches), err)
        return
    if command.judging.offline:  # replies come from the store: no server, no connection
        finish(prepared, run(prepared, planning_client(endpoint)), err)
        return
    if endpoint.remote:
        probe_endpoint(endpoint)
    with (
        default_judge_client(
            endpoint.model,
            base_url=endpoint.base_url,
            provider=endpoint.provider,
            log_dir=command.study,
            notice_stream=err,
            **endpoint.client_options(),
        ) as client,
        interrupt_explained(prepared.store),
    ):
        judgments = run(prepared, client)
    finish(prepared, judgments, err)
