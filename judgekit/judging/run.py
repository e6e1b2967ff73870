"""Judging a prepared ``judgekit judge`` command and writing its outputs.

Replies go to a store (the study's, the ``--store`` or a temporary one beside the output) until
the outputs are written; a temporary store is removed once they are (:func:`run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data import write_id_score_csv
from judgekit.data.tidy import JUDGE, LABEL_COLUMNS, write_judgments
from judgekit.engine import ResponseStore
from judgekit.engine.batch_files import BatchState
from judgekit.engine.storelock import lock_path
from judgekit.judging.command import JudgeCommand, Prepared
from judgekit.judging.pairs import pair_labels, pairwise_rows
from judgekit.judging.panel_run import JudgeOutcome, judge_panel
from judgekit.study.accumulate import CommandRecord, label_slug, merged_items, write_study
from judgekit.study.errors import RunFailed
from judgekit.study.items import human_labels, with_context
from judgekit.study.record import judging_record, keep_rubric

#: The side files SQLite keeps beside a store in WAL mode.
WAL_FILES = ("-wal", "-shm")


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
        prices = {spec.label: prepared.options(spec).prices for spec in prepared.judges}
        return judge_panel(
            prepared.items, prepared.rubric, clients, prepared.options(), prices, checked=True
        )
    outcomes = {}
    for spec in prepared.judges:
        table = judge_with(
            prepared.items, prepared.rubric, clients[spec.label], prepared.options(spec)
        )
        table[JUDGE] = spec.label
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
        if prepared.pairs is not None:  # each order's rows back to the pair's, with its verdict
            tables = [pairwise_rows(table, prepared.pairs) for table in tables]
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
        write_judgments(judgments, prepared.output)
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
    if prepared.pairs is not None:
        labels = pair_labels(prepared.pairs, prepared.rubric.name)
    elif prepared.label_column is not None:
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
    if prepared.pairs is not None:
        details["pairwise"] = prepared.pairs.record()
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
        items=merged_items(command.study, study_items_frame(prepared)),
        judgments=judgments,
        labels=labels,
        judges=[s.describe(clients.get(s.label)) for s in prepared.judges if s.label in judged],
        record=record,
        settings=settings,
    )


def study_items_frame(prepared: Prepared) -> pd.DataFrame:
    """The items the study keeps: the file as read, or a pairwise file's canonical pair frame."""
    return prepared.table.frame if prepared.pair_frame is None else prepared.pair_frame


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
