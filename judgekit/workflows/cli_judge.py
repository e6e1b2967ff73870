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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from judgekit.data import TABLE_SUFFIXES, Table, read_table, write_id_score_csv, write_table
from judgekit.data.columns import check_lookalikes, column_map
from judgekit.data.tidy import LABEL_COLUMNS
from judgekit.engine import JudgeOptions, ResponseStore, preview
from judgekit.engine.batch_files import BatchState
from judgekit.engine.interrupts import interrupt_explained
from judgekit.engine.storelock import lock_path
from judgekit.rubrics import PromptRubric
from judgekit.types import Item, Rubric, UsageError
from judgekit.workflows.accumulate import (
    CommandRecord,
    check_rewritable,
    merged_items,
    read_manifest,
    write_study,
)
from judgekit.workflows.batch import (
    at_batch_rates,
    batch_client,
    check_batch_command,
    run_batch_api,
)
from judgekit.workflows.clients import EndpointOptions
from judgekit.workflows.errors import RunFailed
from judgekit.workflows.label_map import choose_labels
from judgekit.workflows.own_prompt import check_placeholders, load_any_rubric, prompt_notice
from judgekit.workflows.panel import (
    JUDGE_COLUMN,
    JudgeOutcome,
    JudgeSpec,
    check_panel,
    command_judges,
    judge_panel,
    label_slug,
    panel_clients,
    planning_judge,
    probe_panel,
)
from judgekit.workflows.panel_summary import summarise_judge
from judgekit.workflows.replay import judging_record, keep_rubric
from judgekit.workflows.requests_file import write_requests
from judgekit.workflows.study import StudyFolder, human_labels, study_items, with_context

#: The side files SQLite keeps beside a store in WAL mode.
WAL_FILES = ("-wal", "-shm")


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
        endpoint: Which judge and how to reach it (with ``judges``/``panel``: the limits
            every judge has unless it gives its own).
        judging: How to judge (passed to the engine as is).
        batch_api: Judge through the provider's Batch API (:mod:`judgekit.workflows.batch`).
        write_requests: Write the unanswered requests to this batch-input JSONL file instead
            of sending them (:mod:`judgekit.workflows.requests_file`).
        column_map: ``placeholder=Column`` pairs for a prompt file's placeholders; with a
            packaged rubric or rubric folder, ``HEADER=COLUMN`` pairs that read the items
            file's ``HEADER`` as the canonical ``COLUMN`` (``Reference=Ref_Answer``).
        format_reminder: Override the rubric's ``format_reminder`` (``None``: keep it).
        judges: ``[NAME=]PROVIDER:MODEL[@BASE_URL]`` of each judge (``--judge``).
        panel: A panel file of judges (``--panel``, see :mod:`judgekit.workflows.panel`).
        label_map: Labels off the rubric's scale put on it (``--label-map``).
        no_labels: Leave the human labels out (``--no-labels``).
        command_line: The command as typed, recorded in ``study.json``.
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
    judges: tuple[str, ...] = ()
    panel: Path | None = None
    label_map: str | None = None
    no_labels: bool = False
    command_line: str = ""


@dataclass(frozen=True)
class Prepared:
    """A checked command: the rubric, the items, the judges, where everything goes."""

    command: JudgeCommand
    rubric: Rubric
    table: Table
    items: list[Item]
    unused_columns: list[str]
    label_column: str | None
    output: Path
    store: Path
    temporary_store: bool
    judges: tuple[JudgeSpec, ...]
    label_note: str = ""
    manifest: Mapping[str, Any] | None = None


def _writable_folder(path: Path, what: str) -> None:
    """Refuse a file whose folder is a file or not writable, naming the value given."""
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(
            f"{what} {path}: {folder} is a file, not a folder; choose another location"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: the folder {folder} is not writable; choose another")


def _check_output(path: Path, items: Path, what: str, suffixes: Sequence[str]) -> None:
    if path.suffix.lower() not in suffixes:
        raise UsageError(f"{what} {path}: the file name must end in {', '.join(suffixes)}")
    if path.exists() and path.resolve() == items.resolve():
        raise UsageError(f"{what} {path} is the items file; choose another name")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    _writable_folder(path, what)


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
    manifest = None
    if command.study is not None:  # never a folder of someone else's files
        manifest = read_manifest(command.study)
        check_rewritable(command.study, manifest)
    if command.sep is not None and len(command.sep) != 1:
        raise UsageError(f"--sep {command.sep!r}: give one character, e.g. ';' or ','")
    if command.limit is not None and command.limit < 1:
        raise UsageError(f"--limit {command.limit}: give at least 1")
    rubric = load_any_rubric(command.rubric, (), command.format_reminder)
    prompt = isinstance(rubric, PromptRubric)
    if prompt and command.column_map:  # a prompt's placeholders; else the items' headers
        rubric = load_any_rubric(command.rubric, command.column_map, command.format_reminder)
    table = read_table(
        command.items,
        required=() if prompt else rubric.required_columns,
        aliases=None if prompt else column_map(command.column_map),
        encoding=command.encoding,
        sep=command.sep,
        sheet=command.sheet,
        limit=command.limit,
    )
    check_lookalikes(table.frame.columns, rubric.optional_columns, table.path)
    if isinstance(rubric, PromptRubric):
        check_placeholders(rubric, [str(c) for c in table.frame.columns], command.items)
    labelled, label_column, label_note = choose_labels(
        table, rubric, command.labels_column, command.label_map, no_labels=command.no_labels
    )
    items, unused = study_items(labelled, rubric, label_column=label_column)
    items = items[: command.limit] if command.limit else items
    if command.study is not None:
        merged_items(command.study, table.frame)  # an item the study holds must not change
    judges = command_judges(command.judges, command.panel, command.endpoint)
    if len(judges) > 1 and command.write_requests is not None:
        raise UsageError(
            "--write-requests takes one judge (a batch file serves one model): run it once "
            "per judge (--judge NAME=PROVIDER:MODEL) into the same --study"
        )
    check_panel(judges)
    return Prepared(
        command, rubric, table, items, unused, label_column, output, store, temporary,
        judges, label_note, manifest,
    )  # fmt: skip


def describe_inputs(prepared: Prepared, err: TextIO) -> None:
    """Say once what is sent, what is not, and where the human labels come from."""
    rubric, items = prepared.rubric, prepared.items
    if prepared.table.renamed:
        read_as = ", ".join(f"'{h}' as {c}" for h, c in prepared.table.renamed)
        print(f"columns read under their canonical names: {read_as}", file=err)
    sent = [c for c in rubric.input_columns if any(c in item.fields for item in items)]
    print(f"{len(items)} items; sent to the judge: {', '.join(sent)}", file=err)
    if prepared.unused_columns:
        print(f"not sent to the judge: {', '.join(prepared.unused_columns)}", file=err)
    print(prepared.label_note, file=err)
    again = already_judged(prepared)
    if again:
        print(
            "already in the study, judged again (what the store holds is replayed, not paid): "
            + ", ".join(again),
            file=err,
        )


def already_judged(prepared: Prepared) -> list[str]:
    """The combinations of this command the study already holds, as rubric/variant/judge/run."""
    judged = {
        (entry["rubric"], combination["variant"], entry["judge"], str(combination["run"]))
        for entry in (prepared.manifest or {}).get("judged", [])
        for combination in entry.get("combinations", ())
    }
    judging = prepared.command.judging
    return [
        f"{prepared.rubric.name}/{variant}/{spec.label}/run{run}"
        for spec in prepared.judges
        for variant in judging.variants
        for run in range(1, judging.runs + 1)
        if (prepared.rubric.name, variant, spec.label, str(run)) in judged
    ]


def dry_run(prepared: Prepared, out: TextIO) -> None:
    """Print the first request as it would be sent, then each judge's options and estimate."""
    shown = False
    for spec in prepared.judges:
        client = planning_judge(spec)
        options = _options(prepared, spec)
        request, estimate = preview(prepared.items, prepared.rubric, client, options)
        if not shown:
            print(prompt_notice(prepared.rubric, client, options), file=out)
        if prepared.command.batch_api:
            estimate = at_batch_rates(estimate, batch_client(client))
        print(f"judge {spec.label}: {client.model} at {getattr(client, 'base_url', '?')}", file=out)
        if request is not None and not shown:  # the prompt is the same for every judge
            for message in request.messages:
                print(f"--- {message['role']} ---\n{message['content']}", file=out)
            shown = True
        if request is not None:
            print(f"--- options ---\n{json.dumps(request.options, indent=1)}", file=out)
        print(estimate.describe(), file=out)
    print("dry run: nothing was sent.", file=out)


def _options(prepared: Prepared, spec: JudgeSpec | None = None) -> JudgeOptions:
    prices = spec.prices if spec is not None and spec.prices else prepared.command.judging.prices
    return prepared.command.judging.updated(store=prepared.store, prices=prices)


def check_options(prepared: Prepared) -> None:
    """Check the judging options against the rubric and every judge, without a call.

    Raises:
        UsageError: For inconsistent options, or a store file that cannot be opened.
    """
    for spec in prepared.judges:
        client = planning_judge(spec)
        try:
            preview(prepared.items, prepared.rubric, client, _options(prepared, spec))
        except sqlite3.DatabaseError as error:
            raise UsageError(
                f"--store {prepared.store}: cannot open it ({error}); move it away or pass another"
            ) from None
        except UsageError as error:
            if len(prepared.judges) == 1:
                raise
            raise UsageError(f"judge {spec.label}: {error}") from None


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


def _judge_each(
    prepared: Prepared,
    clients: Mapping[str, Any],
    judge_with: Callable[..., pd.DataFrame] | None,
) -> dict[str, JudgeOutcome]:
    """Every judge at once (:func:`judge_panel`), or one after another through ``judge_with``.

    The Batch API run passes ``judge_with``: each judge's requests go into batches of their own.
    """
    if judge_with is None:
        prices = {spec.label: _options(prepared, spec).prices for spec in prepared.judges}
        return judge_panel(prepared.items, prepared.rubric, clients, _options(prepared), prices)
    outcomes = {}
    for spec in prepared.judges:
        table = judge_with(
            prepared.items, prepared.rubric, clients[spec.label], _options(prepared, spec)
        )
        table[JUDGE_COLUMN] = spec.label
        outcomes[spec.label] = JudgeOutcome(spec.label, table)
    return outcomes


def run(
    prepared: Prepared,
    clients: Mapping[str, Any],
    judge_with: Callable[..., pd.DataFrame] | None = None,
) -> dict[str, JudgeOutcome]:
    """Judge the prepared items with every judge at once and write the outputs.

    ``judge_with`` takes ``judge()``'s arguments (the Batch API run of one judge passes its
    own). A temporary store is removed once the outputs are written, or when the run fails
    before any reply was stored or batch submitted; a failed run that paid for replies (or
    left batches running) keeps it, so a rerun replays (or resumes) them.

    Raises:
        RunFailed: When an output cannot be written (a full disk): the replies stay stored.
    """
    try:
        outcomes = _judge_each(prepared, clients, judge_with)
        tables = [
            with_context(outcome.judgments, prepared.items)
            for outcome in outcomes.values()
            if outcome.judgments is not None
        ]
        try:
            if tables:
                write_outputs(prepared, pd.concat(tables, ignore_index=True), outcomes, clients)
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
    return outcomes


def write_outputs(
    prepared: Prepared,
    judgments: pd.DataFrame,
    outcomes: Mapping[str, JudgeOutcome],
    clients: Mapping[str, Any],
) -> None:
    """Write the judgments, and with ``--study`` add them to the study (never replacing it)."""
    command = prepared.command
    if command.study is None or command.output is not None:
        write_table(judgments, prepared.output)
    if command.id_score_csv is not None:
        several = len(prepared.judges) > 1
        for (variant, repeat), path in _id_score_paths(command.id_score_csv, command).items():
            for label in judgments["judge"].unique():
                target = path.with_stem(f"{path.stem}.{label_slug(label)}") if several else path
                rows = judgments[judgments["judge"] == label]
                write_id_score_csv(rows, target, run=repeat, variant=variant)
    if command.study is None:
        return
    labels = pd.DataFrame(columns=list(LABEL_COLUMNS))
    if prepared.label_column is not None:
        labels = human_labels(prepared.items, prepared.rubric, prepared.label_column)
    judging = command.judging
    details = {
        "rubric": prepared.rubric.name,
        "variants": list(judging.variants),
        "runs": judging.runs,
        "batch_size": judging.batch_size_for(prepared.rubric),
        "judges": [spec.label for spec in prepared.judges],
        "label_column": prepared.label_column,
        "label_map": command.label_map,
        "human_labels": len(labels),
        "unused_columns": prepared.unused_columns,
        "calls": {
            label: {
                k: o.judgments.attrs.get(k, 0) for k in ("api_calls", "replayed", "failed_calls")
            }
            for label, o in outcomes.items()
            if o.judgments is not None
        },
        "failed_judges": {label: o.failure for label, o in outcomes.items() if o.failure},
    }
    record = CommandRecord(command.command_line, str(command.items.resolve()), details)
    judged = {label for label, o in outcomes.items() if o.judgments is not None}
    rubric = {
        "source": keep_rubric(command.rubric, command.study),
        "column_map": list(command.column_map),
        "format_reminder": command.format_reminder,
    }
    settings = {label: judging_record(judging, clients[label], rubric) for label in judged}
    write_study(
        command.study,
        prepared.manifest,
        items=merged_items(command.study, prepared.table.frame),
        judgments=judgments,
        labels=labels,
        judges=[s.describe(clients.get(s.label)) for s in prepared.judges if s.label in judged],
        record=record,
        settings=settings,
    )


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


def finish(prepared: Prepared, outcomes: Mapping[str, JudgeOutcome], err: TextIO) -> None:
    """Print each judge's summary; fail the run when a judge failed, or rows did.

    Raises:
        RunFailed: One line saying which judge or how many rows failed, and the first reason.
    """
    problems = []
    for spec in prepared.judges:
        outcome = outcomes[spec.label]
        problems += summarise_judge(spec, outcome, prepared.command.max_unscored, err)
    print(f"judgments: {prepared.output}", file=err)
    failed = [o for o in outcomes.values() if o.failure]
    if len(outcomes) == 1 and failed and failed[0].error is not None:
        raise failed[0].error  # one judge: its own error, as without a panel
    if failed:
        kept = "; the other judges' judgments are written" if len(failed) < len(outcomes) else ""
        raise RunFailed(
            f"{len(failed)} of {len(outcomes)} judges failed (first: {failed[0].label}: "
            f"{failed[0].failure[:200]}){kept}"
        )
    if problems:
        raise RunFailed(
            problems[0]
            if len(problems) == 1
            else f"{problems[0]} (and {len(problems) - 1} more judges)"
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
    for spec in prepared.judges if command.batch_api or command.write_requests else ():
        check_batch_command(
            batch_api=command.batch_api, write_requests=command.write_requests,
            judging=command.judging, endpoint=spec.endpoint, items=command.items,
            temporary_store=prepared.temporary_store,
        )  # fmt: skip
    first = prepared.judges[0]
    if not command.dry_run:
        print(prompt_notice(prepared.rubric, planning_judge(first), _options(prepared)), file=err)
    describe_inputs(prepared, err)
    if command.dry_run:
        dry_run(prepared, out)
        return
    if command.write_requests is not None:
        client = planning_judge(first)
        path = command.write_requests
        if write_requests(
            prepared.items, prepared.rubric, client, command.judging, prepared.store, path, err
        ):
            return
        print("every request is answered in the store: building the table from it", file=err)
        command = replace(command, judging=command.judging.updated(offline=True))
        prepared = replace(prepared, command=command)
    if command.batch_api:
        clients = {spec.label: batch_client(planning_judge(spec)) for spec in prepared.judges}
        probe_panel(prepared.judges)
        in_batches = functools.partial(run_batch_api, store=prepared.store, err=err)
        finish(prepared, run(prepared, clients, in_batches), err)
        return
    if command.judging.offline:  # replies come from the store: no server, no connection
        clients = {spec.label: planning_judge(spec) for spec in prepared.judges}
        finish(prepared, run(prepared, clients), err)
        return
    probe_panel(prepared.judges)
    with (
        panel_clients(prepared.judges, log_dir=command.study, notice_stream=err) as clients,
        interrupt_explained(prepared.store),
    ):
        outcomes = run(prepared, clients)
    finish(prepared, outcomes, err)
