"""``judgekit import``: judgments made elsewhere into a study folder ``judgekit judge`` writes.

The adapter (:mod:`judgekit.importers`) reads the source files; the study is written by
:func:`judgekit.study.accumulate.write_study` exactly as a judging command writes it
(items, judgments, ``scores/``, ``study.json``; the response store is empty, as judgekit sent
no request), with human labels in ``labels.csv`` (one labeller per rater,
:func:`judgekit.labels.table.write_labels_table`). ``study.json``'s command entry records the
import: each source file with its SHA-256, the adapter and its options, and, for a rubric
judgekit does not package, its scale and output format (``imported_rubric``, read back by
:func:`judgekit.study.rubrics.imported_rubric`). Importing the same files with the
same options again changes nothing (byte for byte); an import never writes into its source
files.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.types import UsageError


@dataclass(frozen=True)
class ImportRequest:
    """One ``judgekit import`` as the user typed it (see :func:`import_command`)."""

    adapter: str
    files: tuple[Path, ...]
    study: Path
    columns: tuple[str, ...] = ()
    output_format: str = ""
    scale: str = ""
    score_marker: str = ""
    rubric: str = ""
    name: str = ""
    variant: str = "base"
    judge: str = ""
    labels: Path | None = None
    label_columns: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def _pairs(pairs: Sequence[str], option: str) -> dict[str, str]:
    found = {}
    for pair in pairs:
        role, sep, column = (part.strip() for part in pair.partition("="))
        if not sep or not role or not column:
            raise UsageError(f"{option} {pair!r}: write ROLE=COLUMN, e.g. item=doc_id")
        found[role] = column
    return found


def stated_scale(scale: str) -> Any:
    """``--scale MIN-MAX`` (whole numbers) as a :class:`judgekit.types.Scale`; None if not given.

    Raises:
        UsageError: For anything but two increasing whole numbers.
    """
    from judgekit.types import Scale

    if not scale:
        return None
    low, sep, high = scale.partition("-")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit() or int(low) >= int(high):
        raise UsageError(f"--scale {scale!r}: write MIN-MAX, e.g. 1-10")
    return Scale(tuple(range(int(low), int(high) + 1)))


def imported_rubric_record(request: ImportRequest, rubric: str, scale: Any) -> dict[str, Any]:
    """What ``study.json`` records of a rubric known only from this import (``{}``: none).

    A ``--rubric`` import is filed under a rubric judgekit loads, so it records none; so does a
    source that states no scale when no ``--scale`` is given (the report then cannot run).
    """
    scale = stated_scale(request.scale) or scale
    if request.rubric or scale is None:
        return {}
    return {
        "name": rubric, "adapter": request.adapter, "format": request.output_format,
        "score_marker": request.score_marker,
        "scale": {"allowed": list(scale.allowed), "abstain": list(scale.abstain),
                  "step": scale.step},
    }  # fmt: skip


class FormatReader:
    """Reads replies with a named output format on a given scale (``--format``, ``--scale``)."""

    def __init__(self, name: str, scale: str, marker: str) -> None:
        """Check the format name and the scale (``MIN-MAX``, whole numbers)."""
        from judgekit.formats import format_names, get_format
        from judgekit.types import Scale

        if name not in format_names():
            raise UsageError(
                f"--format {name!r}: no such output format; "
                f"choose one of {', '.join(format_names())}"
            )
        self.spec = get_format(name)
        self.scale = stated_scale(scale) or Scale(())
        if not self.scale.allowed:
            raise UsageError("--format needs --scale MIN-MAX, e.g. 1-10")
        self.marker = marker or None

    def parse(self, text: str, item_ids: Sequence[str]) -> Any:
        """Read one reply as :func:`judgekit.formats.parse_reply` reads a live one."""
        from judgekit.formats import parse_reply

        return parse_reply(
            text, output_format=self.spec, scale=self.scale, item_ids=item_ids,
            score_marker=self.marker,
        )  # fmt: skip


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_sources(request: ImportRequest) -> None:
    """Refuse missing sources and sources inside the study (an import never writes them)."""
    study = request.study.resolve()
    for path in (*request.files, *([request.labels] if request.labels else [])):
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
        if path.resolve().is_relative_to(study):
            raise UsageError(
                f"{path} is inside --study {request.study}; "
                "keep source files outside the study folder"
            )


def import_record(request: ImportRequest) -> dict[str, Any]:
    """What ``study.json`` records of an import: sources with SHA-256, adapter, options."""
    sources = [{"path": str(p.resolve()), "sha256": _sha256(p)} for p in request.files]
    options = {
        "columns": dict(sorted(_pairs(request.columns, "--column").items())),
        "format": request.output_format, "scale": request.scale,
        "score_marker": request.score_marker,
        "rubric": request.rubric, "name": request.name, "variant": request.variant,
        "judge": request.judge, **{k: v for k, v in sorted(request.extra.items()) if v},
    }  # fmt: skip
    record: dict[str, Any] = {"adapter": request.adapter, "sources": sources, "options": options}
    if request.labels is not None:
        record["labels"] = {
            "path": str(request.labels.resolve()), "sha256": _sha256(request.labels),
            "columns": dict(sorted(_pairs(request.label_columns, "--label-column").items())),
        }  # fmt: skip
    return record


def _options(request: ImportRequest) -> Any:
    from judgekit.importers import ImportOptions
    from judgekit.study.own_prompt import load_any_rubric

    if request.rubric and request.output_format:
        raise UsageError("give --rubric or --format, not both: each reads the replies")
    reader: Any = None
    name = request.name
    if request.rubric:
        reader = load_any_rubric(request.rubric, (), None)
        name = name or reader.name
    elif request.output_format:
        reader = FormatReader(request.output_format, request.scale, request.score_marker)
    return ImportOptions(
        rubric=name, variant=request.variant, columns=_pairs(request.columns, "--column"),
        reader=reader, judge=request.judge, extra=dict(request.extra),
    )  # fmt: skip


def _labels_table(request: ImportRequest, judgments: Any, root: Path) -> tuple[Any, list[str]]:
    """The study's ``labels.csv`` with the imported raters' labels (one labeller each)."""
    import pandas as pd

    from judgekit.importers.rows import check_ids
    from judgekit.importers.tables import read_human_labels
    from judgekit.labels.table import LABEL_TABLE_COLUMNS, read_labels_table
    from judgekit.study.folder import StudyFolder
    from judgekit.study.parameters import close_match

    assert request.labels is not None
    labels = read_human_labels(request.labels, _pairs(request.label_columns, "--label-column"))
    check_ids(labels["item_id"], "labelled item IDs")
    judged = set(judgments["item_id"].astype(str))
    foreign = sorted(set(labels["item_id"]) - judged)
    if foreign:
        raise UsageError(
            f"{request.labels}: {len(foreign)} labelled item(s) are not among the imported "
            f"judgments, first {foreign[0]!r}{close_match(foreign[0], sorted(judged))}; the "
            "labels and the judgments must name items alike"
        )
    twice = labels.duplicated(["item_id", "rater"])
    if twice.any():
        first = labels[twice].iloc[0]
        raise UsageError(
            f"{request.labels}: item {first['item_id']!r} has two labels "
            f"by rater {first['rater']!r}"
        )
    rubric = str(judgments["rubric"].iloc[0])
    new = pd.DataFrame(
        {
            "item_id": labels["item_id"], "labeller": labels["rater"], "score": labels["score"],
            "status": "ok", "note": f"imported from {request.labels.name}", "labelled_at": "",
            "rubric": rubric, "rubric_version": "",
        },
        columns=list(LABEL_TABLE_COLUMNS),
    )  # fmt: skip
    old = read_labels_table(StudyFolder(root).long_labels)
    replaced = set(zip(new["item_id"], new["labeller"], new["rubric"], strict=True))
    keep = [
        k not in replaced for k in zip(old["item_id"], old["labeller"], old["rubric"], strict=True)
    ]
    table = pd.concat([old[keep], new], ignore_index=True) if keep and any(keep) else new
    table = table.sort_values(["rubric", "labeller", "item_id"], kind="stable").reset_index(
        drop=True
    )
    unlabelled = len(judged - set(labels["item_id"]))
    notes = [f"{unlabelled} of {len(judged)} items have no human label"] * bool(unlabelled)
    return table, notes


def _pair_labels_table(labels: Any, judgments: Any, request: ImportRequest, root: Path) -> Any:
    """``labels.csv`` rows of the source's human pairwise verdicts (score empty, a verdict)."""
    import pandas as pd

    from judgekit.labels.table import LABEL_TABLE_COLUMNS, VERDICT, read_labels_table
    from judgekit.study.folder import StudyFolder

    rubric = str(judgments["rubric"].iloc[0])
    new = pd.DataFrame(
        {
            "item_id": labels["item_id"], "labeller": labels["rater"], "score": float("nan"),
            "status": "ok", "note": f"imported from {request.files[0].name}",
            "labelled_at": "", "rubric": rubric, "rubric_version": "",
            VERDICT: labels["verdict"],
        },
        columns=[*LABEL_TABLE_COLUMNS, VERDICT],
    )  # fmt: skip
    old = read_labels_table(StudyFolder(root).long_labels)
    key = ["item_id", "labeller", "rubric"]
    kept = old[~old.set_index(key).index.isin(new.set_index(key).index)]
    table = pd.concat([kept, new], ignore_index=True) if len(kept) else new
    table[VERDICT] = table[VERDICT].fillna("") if VERDICT in table else ""
    return table.sort_values(["rubric", "labeller", "item_id"], kind="stable").reset_index(
        drop=True
    )


def _check_on_scale(judgments: Any, scale: Mapping[str, Any], request: ImportRequest) -> None:
    """Refuse a scored judgment off the scale the rubric will be recorded with (one line)."""
    from judgekit.types import Scale

    allowed = Scale(tuple(scale["allowed"]), tuple(scale["abstain"]), scale["step"])
    scored = judgments[judgments["status"] == "ok"]["score"].astype(float)
    off = scored[[not allowed.accepts(float(v)) for v in scored]]
    if len(off):
        stated = f"--scale {request.scale}" if request.scale else f"the {request.adapter} scale"
        raise UsageError(
            f"{len(off)} imported score(s) are not on {stated} ({allowed.describe()}), first "
            f"{off.iloc[0]:g}; give the scale the scores were made on"
        )


def run_import(request: ImportRequest, out: Any = None, command_line: str = "") -> Path:
    """Import the request's files into its study; return the study folder.

    Raises:
        UsageError: For every user mistake (one line): unknown adapter, a file of another
            format, unreadable replies, labels of other items, case-only ID clashes,
            duplicate rows, a folder that is not a judgekit study.
    """
    import pandas as pd

    from judgekit.data.tidy import LABEL_COLUMNS
    from judgekit.engine.store import ResponseStore
    from judgekit.importers import get_adapter
    from judgekit.labels.table import write_labels_table
    from judgekit.study.accumulate import (
        CommandRecord,
        check_rewritable,
        merged_items,
        read_manifest,
        write_study,
    )  # fmt: skip
    from judgekit.study.folder import StudyFolder

    out = out or sys.stderr
    adapter = get_adapter(request.adapter)
    _check_sources(request)
    root = request.study
    manifest = read_manifest(root)
    check_rewritable(root, manifest)
    record = import_record(request)
    done = [c.get("import") for c in (manifest or {}).get("commands", []) if isinstance(c, dict)]
    if record in done:
        print(
            f"{root}: these files were imported already with these options; the study is unchanged",
            file=out,
        )
        return root
    imported = adapter(request.files, _options(request))
    notes = list(imported.notes)
    labels_csv = None
    if imported.pairwise and request.labels is not None:
        raise UsageError(
            f"--labels {request.labels}: pairwise human labels are read from the source or the "
            "long table's label column (--column label=COLUMN)"
        )
    if request.labels is not None:
        labels_csv, label_notes = _labels_table(request, imported.judgments, root)
        notes += label_notes
    elif imported.pairwise and len(imported.labels):
        labels_csv = _pair_labels_table(imported.labels, imported.judgments, request, root)
    judgments = imported.judgments
    judges = [
        {"label": j, "model": j, "provider": "imported", "adapter": request.adapter}
        for j in sorted(judgments["judge"].unique())
    ]
    details: dict[str, Any] = {
        "import": record,
        "rubric": str(judgments["rubric"].iloc[0]),
        "notes": notes,
        "human_labels": 0 if labels_csv is None else len(labels_csv),
    }
    rubric_record = imported_rubric_record(request, details["rubric"], imported.scale)
    if rubric_record:
        if imported.pairwise:  # verdicts, not scores: nothing to check on the scale
            rubric_record["kind"] = "pairwise"
        else:
            _check_on_scale(judgments, rubric_record["scale"], request)
        scale = rubric_record["scale"]["allowed"]
        details["scale"] = [scale[0], scale[-1]]
        details["imported_rubric"] = rubric_record
    items = merged_items(root, imported.items)
    write_study(
        root, manifest, items=items, judgments=judgments,
        labels=pd.DataFrame(columns=list(LABEL_COLUMNS)), judges=judges,
        record=CommandRecord(command_line, str(request.files[0].resolve()), details),
    )  # fmt: skip
    if labels_csv is not None:
        write_labels_table(labels_csv, StudyFolder(root).long_labels)
    if not StudyFolder(root).store.is_file():  # no request was sent: the store is empty
        ResponseStore(StudyFolder(root).store).close()
    for note in notes:
        print(f"note: {note}", file=out)
    n_items, n_judges = judgments["item_id"].nunique(), len(judges)
    print(
        f"imported {len(judgments)} judgments ({n_items} items, {n_judges} judge(s)) into {root}",
        file=out,
    )
    return root
