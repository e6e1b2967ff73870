"""What ``judgekit judge`` was asked to do, and the check of all of it before anything runs.

Every input, output path, option and endpoint setting is checked here (:func:`prepare`) before a
server starts or a call is paid; :mod:`judgekit.judging.run` then judges and writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from judgekit.data import TABLE_SUFFIXES, Table, read_table
from judgekit.data.columns import check_lookalikes, column_map
from judgekit.engine import JudgeOptions
from judgekit.judging.clients import EndpointOptions
from judgekit.judging.pairs import PairPlan, is_pairwise, pair_study_items
from judgekit.judging.panel import JudgeSpec, check_panel, command_judges
from judgekit.rubrics import PromptRubric
from judgekit.study.accumulate import check_rewritable, merged_items, read_manifest
from judgekit.study.folder import StudyFolder
from judgekit.study.items import study_items
from judgekit.study.label_map import choose_labels
from judgekit.study.own_prompt import check_placeholders, header_pairs, load_any_rubric
from judgekit.types import Item, Rubric, UsageError


@dataclass(frozen=True)
class JudgeCommand:
    """Everything ``judgekit judge`` was asked to do, built once by the CLI.

    Attributes:
        items: The user's items table (never written to).
        rubric: Rubric name.
        output: Judgments table (``.parquet``, ``.csv`` or ``.tsv``); default in the study.
        study: Study folder to write (see :mod:`judgekit.study.folder`).
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
        batch_api: Judge through the provider's Batch API (:mod:`judgekit.judging.batch`).
        write_requests: Write the unanswered requests to this batch-input JSONL file instead
            of sending them (:mod:`judgekit.judging.requests_file`).
        column_map: ``placeholder=Column`` pairs for a prompt file's placeholders; with a
            packaged rubric or rubric folder, ``HEADER=COLUMN`` pairs that read the items
            file's ``HEADER`` as the canonical ``COLUMN`` (``Reference=Ref_Answer``).
        format_reminder: Override the rubric's ``format_reminder`` (``None``: keep it).
        judges: ``[NAME=]PROVIDER:MODEL[@BASE_URL]`` of each judge (``--judge``).
        panel: A panel file of judges (``--panel``, see :mod:`judgekit.judging.panel`).
        label_map: Labels off the rubric's scale put on it (``--label-map``).
        no_labels: Leave the human labels out (``--no-labels``).
        command_line: The command as typed, recorded in ``study.json``.
        orders: A pairwise rubric's orders: ``both``, ``ab`` or ``random`` (seeded by the
            judging seed; :mod:`judgekit.judging.pairs`).
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
    orders: str = "both"

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> JudgeCommand:
        """The command from values named after fields (the CLI's flags, :func:`split_options`).

        Raises:
            TypeError: For a name that is no field of the command or its two options objects.
        """
        judging, endpoint, rest = split_options(flags)
        return cls(**rest, endpoint=endpoint, judging=judging)


def split_options(
    values: Mapping[str, Any],
) -> tuple[JudgeOptions, EndpointOptions, dict[str, Any]]:
    """The one options path: each value to the object with a field of its name.

    The engine's :class:`~judgekit.engine.JudgeOptions` (how to judge), the
    :class:`~judgekit.judging.clients.EndpointOptions` (who judges, how it is reached; the
    client is built from it) and whatever neither has (the command's own, for the caller).
    The CLI and :func:`~judgekit.judging.judge_study.judge_study` build their options here.
    """
    judging_fields = {f.name for f in fields(JudgeOptions)}
    endpoint_fields = {f.name for f in fields(EndpointOptions)}
    judging = JudgeOptions(**{k: v for k, v in values.items() if k in judging_fields})
    endpoint = EndpointOptions(**{k: v for k, v in values.items() if k in endpoint_fields})
    rest = {k: v for k, v in values.items() if k not in judging_fields | endpoint_fields}
    return judging, endpoint, rest


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
    pairs: PairPlan | None = None  # a pairwise rubric's orders (judgekit.judging.pairs)
    pair_frame: pd.DataFrame | None = None  # its checked pair frame (the items the study keeps)

    def options(self, spec: JudgeSpec | None = None) -> JudgeOptions:
        """The judging options for ``spec`` (its own prices, else the command's) on the store."""
        judging = self.command.judging
        prices = spec.prices if spec is not None and spec.prices else judging.prices
        return judging.updated(store=self.store, prices=prices)


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


def _real(path: Path) -> Path:
    """``path`` absolute, links and ``..`` resolved, whether or not it exists yet."""
    return Path(os.path.realpath(path))


def _check_names(paths: Sequence[tuple[str, Path | None]]) -> None:
    """Refuse a path whose name is not UTF-8: study.json, the store and the tables hold paths."""
    for what, path in paths:
        if path is None:
            continue
        try:
            os.path.abspath(path).encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                f"{what} {os.fsencode(os.path.abspath(path))!r}: a file or folder name on this "
                "path is not UTF-8 text; rename it (judgekit records paths as UTF-8)"
            ) from None


def _check_distinct(
    command: JudgeCommand, outputs: Sequence[tuple[str, Path]], folder: StudyFolder | None
) -> None:
    """Refuse an output that is another output, an input, or a file the study keeps itself."""
    inputs = [("the items file", command.items), ("--panel", command.panel)]
    seen: dict[Path, str] = {_real(p): what for what, p in inputs if p is not None}
    for what, path in outputs:
        other = seen.get(_real(path))
        if other is not None:
            raise UsageError(f"{what} {path} is also {other}; give each its own file")
        seen[_real(path)] = what
    if folder is None:
        return
    owned = {
        _real(path)
        for path in (
            folder.manifest, folder.items, folder.judgments, folder.judgments_csv,
            folder.human_labels, folder.long_labels, folder.labelling_plan, folder.settings,
        )
    }  # fmt: skip
    kept_apart = (_real(folder.scores), _real(folder.report))
    for what, path in outputs:
        real = _real(path)
        if what != "--store" and real == _real(folder.store):
            owned.add(real)
        if real in owned or any(real.is_relative_to(kept) for kept in kept_apart):
            raise UsageError(
                f"{what} {path} is a file the study {folder.root} writes itself; leave "
                f"{what} out, or give a file outside the study"
            )


def _check_ids(items: Sequence[Item], source: Path) -> None:
    """Refuse an ID the prompts cannot carry: judges reply ``ID,score`` lines, one per line."""
    for item in items:
        if any(mark in item.id for mark in ",\r\n"):
            plain = "-".join(part for part in re.split(r"[,\r\n]+", item.id) if part)
            raise UsageError(
                f"{source}: item ID {item.id!r} contains a comma or a line break, which a "
                f"judge's 'ID,score' reply cannot carry; rename it (e.g. {plain!r})"
            )


def output_paths(command: JudgeCommand) -> tuple[Path, Path, bool]:
    """The judgments table, the store and whether the store is temporary; all checked.

    Raises:
        UsageError: For an output that is the items file, another output, a file the study
            writes, of an unknown type, unwritable, or with a name that is not UTF-8.
    """
    store = command.judging.store
    _check_names(
        [
            ("the items file", command.items),
            ("--panel", command.panel),
            ("--study", command.study),
            ("--output", command.output),
            ("--id-score-csv", command.id_score_csv),
            ("--write-requests", command.write_requests),
            ("--store", Path(store) if isinstance(store, str | Path) else None),
        ]
    )
    if command.output is None and command.study is None:
        raise UsageError("say where the judgments go: --study FOLDER or --output FILE")
    if command.study is not None and command.study.exists() and not command.study.is_dir():
        raise UsageError(f"--study {command.study} is a file; give a folder")
    folder = StudyFolder(command.study) if command.study is not None else None
    output = command.output or (folder.judgments if folder else Path())
    _check_output(output, command.items, "--output", TABLE_SUFFIXES)
    if command.id_score_csv is not None:
        _check_output(command.id_score_csv, command.items, "--id-score-csv", (".csv",))
    if isinstance(store, str | Path):
        _check_output(Path(store), command.items, "--store", (".sqlite", ".db", ".sqlite3"))
        chosen = (output, Path(store), False)
    elif folder is not None:
        chosen = (output, folder.store, False)
    elif command.judging.offline:
        raise UsageError("--offline answers from a store: pass --store FILE (or --study FOLDER)")
    else:
        chosen = (output, output.with_name(f".{output.name}.responses.sqlite"), True)
    outputs = [
        ("--output", command.output if folder is not None else output),
        ("--id-score-csv", command.id_score_csv),
        ("--store", chosen[1]),
        ("--write-requests", command.write_requests),
    ]
    _check_distinct(command, [(what, p) for what, p in outputs if p is not None], folder)
    return chosen


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
    rubric = load_any_rubric(command.rubric, command.column_map, command.format_reminder)
    prompt = isinstance(rubric, PromptRubric) or is_pairwise(rubric)  # pairs: checked below
    table = read_table(
        command.items,
        required=() if prompt else rubric.required_columns,
        aliases=column_map(header_pairs(rubric, command.column_map)),
        encoding=command.encoding,
        sep=command.sep,
        sheet=command.sheet,
        limit=command.limit,
    )
    check_lookalikes(table.frame.columns, rubric.optional_columns, table.path)
    if isinstance(rubric, PromptRubric):
        check_placeholders(rubric, [str(c) for c in table.frame.columns], command.items)
    plan, pair_frame = None, None
    if is_pairwise(rubric):
        if command.id_score_csv is not None or command.label_map is not None:
            flag = "--id-score-csv" if command.id_score_csv is not None else "--label-map"
            raise UsageError(f"{flag} is for direct scoring; {rubric.name} compares two answers")
        items, unused, label_column, label_note, plan, pair_frame = pair_study_items(
            table, rubric, command.labels_column, orders=command.orders,
            seed=command.judging.seed or 0, no_labels=command.no_labels,
        )  # fmt: skip
    else:
        labelled, label_column, label_note = choose_labels(
            table, rubric, command.labels_column, command.label_map, no_labels=command.no_labels
        )
        items, unused = study_items(labelled, rubric, label_column=label_column)
        items = items[: command.limit] if command.limit else items
    _check_ids(items, command.items)
    if command.study is not None:
        merged_items(
            command.study, table.frame if pair_frame is None else pair_frame
        )  # an item the study holds must not change
    judges = command_judges(command.judges, command.panel, command.endpoint)
    if len(judges) > 1 and command.write_requests is not None:
        raise UsageError(
            "--write-requests takes one judge (a batch file serves one model): run it once "
            "per judge (--judge NAME=PROVIDER:MODEL) into the same --study"
        )
    check_panel(judges)
    return Prepared(
        command, rubric, table, items, unused, label_column, output, store, temporary,
        judges, label_note, manifest, plan, pair_frame,
    )  # fmt: skip


def describe_inputs(prepared: Prepared, err: TextIO) -> None:
    """Say once what is sent, what is not, and where the human labels come from."""
    rubric, items = prepared.rubric, prepared.items
    if prepared.table.renamed:
        read_as = ", ".join(f"'{h}' as {c}" for h, c in prepared.table.renamed)
        print(f"columns read under their canonical names: {read_as}", file=err)
    sent = [c for c in rubric.input_columns if any(c in item.fields for item in items)]
    what = f"{len(items)} items"
    if prepared.pairs is not None:
        pairs = len({pair for pair, _ in prepared.pairs.shown.values()})
        what = f"{pairs} pairs, orders {prepared.pairs.orders}: {len(items)} requests"
    print(f"{what}; sent to the judge: {', '.join(sent)}", file=err)
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
