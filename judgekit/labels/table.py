"""The long labels table of a study folder (``labels.csv``) and the rubric version it records.

One row per (item, labeller): ``item_id, labeller, score, status, note, labelled_at, rubric,
rubric_version``. ``status`` is ``ok`` (a score), ``skip`` (not labelled yet, come back) or
``abstain`` (the labeller cannot score it); ``score`` is empty unless the status is ``ok``.
The file is comma-separated UTF-8 without a BOM and is rewritten atomically at every label,
so a crash never leaves half a file.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Hashable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from filelock import FileLock

from judgekit.data.atomic import atomic_write_text
from judgekit.data.tables import read_text_table
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import UsageError

#: Columns of ``labels.csv``, in order.
LABEL_TABLE_COLUMNS: tuple[str, ...] = (
    "item_id",
    "labeller",
    "score",
    "status",
    "note",
    "labelled_at",
    "rubric",
    "rubric_version",
)
#: The optional column of a pairwise label: ``a``, ``b`` or ``tie`` in the original A/B.
VERDICT = "verdict"
#: What a labeller can say about an item.
LABEL_STATUSES: tuple[str, ...] = ("ok", "skip", "abstain")


def rubric_version(rubric: JinjaRubric) -> str:
    """A 12-hex-digit hash of everything that defines the rubric: config, scale and prompts.

    Two labellers (or a labeller and a judge) used the same instrument if and only if their
    versions match; editing an anchor, a template or the scale changes it.
    """
    parts = {
        "name": rubric.name,
        "output_format": rubric.output_format,
        "scale": [list(rubric.scale.allowed), list(rubric.scale.abstain)],
        "input_columns": list(rubric.input_columns),
        "template_data": rubric.template_data,
        "prompts": {variant: rubric.system_prompt(variant) for variant in rubric.variants},
    }
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def empty_labels() -> pd.DataFrame:
    """A labels table with no rows and the agreed columns."""
    return pd.DataFrame({column: pd.Series(dtype=object) for column in LABEL_TABLE_COLUMNS})


def read_labels_table(path: str | Path) -> pd.DataFrame:
    """Read ``labels.csv``; a missing file is an empty table (nobody has labelled yet).

    The file may have been saved again by a spreadsheet: ``;`` or tab separated, with a BOM,
    in Windows-1250/1252, with decimal commas; it reads the same.

    Returns:
        The agreed columns; ``score`` as float (NaN unless ``ok``), the rest as text.

    Raises:
        UsageError: If the file lacks a column, has an unknown status, or a score that does
            not match its status (one line naming the file and the row).
    """
    source = Path(path)
    if not source.exists():
        return empty_labels()
    # Read as tolerantly as an items file: a spreadsheet in a `;` locale, a BOM, Windows-1250.
    frame = read_text_table(source, what="labels table")
    missing = [c for c in LABEL_TABLE_COLUMNS if c not in frame.columns]
    if missing:
        raise UsageError(
            f"{source}: labels table lacks column(s) {missing}; it has {list(frame.columns)}"
        )
    bad_status = ~frame["status"].isin(LABEL_STATUSES)
    if bad_status.any():
        row = int(bad_status.to_numpy().argmax())
        raise UsageError(
            f"{source} row {row + 2}: status {frame['status'].iloc[row]!r} is not one of "
            f"{', '.join(LABEL_STATUSES)}"
        )
    text = frame["score"].str.strip().str.replace(",", ".", regex=False)  # decimal comma
    score = pd.to_numeric(text.replace("", None), errors="coerce")
    # a pairwise label has a verdict (a / b / tie) instead of a score
    verdict = frame.get(VERDICT, pd.Series("", index=frame.index)).fillna("").str.strip()
    mismatch = (frame["status"] == "ok") != (score.notna() | (verdict != ""))
    if mismatch.any():
        row = int(mismatch.to_numpy().argmax())
        raise UsageError(
            f"{source} row {row + 2}: a score is required when status is ok and only then "
            f"(got status {frame['status'].iloc[row]!r}, score {frame['score'].iloc[row]!r})"
        )
    frame = frame[list(LABEL_TABLE_COLUMNS)].copy()
    frame["score"] = score.astype(float)
    if (verdict != "").any():
        frame[VERDICT] = verdict.str.lower()
    return frame


def write_labels_table(labels: pd.DataFrame, path: str | Path) -> Path:
    """Write the whole labels table atomically (the one place this package writes labels)."""
    text = io.StringIO()
    columns = [*LABEL_TABLE_COLUMNS, *([VERDICT] if VERDICT in labels.columns else [])]
    out = labels[columns].copy()
    out["score"] = [("" if pd.isna(s) else f"{float(s):g}") for s in out["score"]]
    out.to_csv(text, index=False, lineterminator="\n")
    return atomic_write_text(path, text.getvalue())


def now_utc() -> str:
    """The current time as ISO-8601 UTC with seconds (``2026-12-01T02:03:04+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_label(
    path: str | Path,
    *,
    item_id: str,
    labeller: str,
    status: str,
    score: float | None,
    note: str,
    rubric: str,
    version: str,
    verdict: str = "",
) -> pd.DataFrame:
    """Put one label in the file (replacing the labeller's earlier one) and return the table.

    A pairwise label gives ``verdict`` (``a``/``b``/``tie``) with status ``ok`` and no score.

    The file is read, changed and rewritten under a lock, so labellers working at the same
    time on one ``labels.csv`` never drop each other's labels.

    Raises:
        ValueError: On an unknown status or a score that does not match it.
    """
    if status not in LABEL_STATUSES:
        raise ValueError(f"status must be one of {LABEL_STATUSES}, got {status!r}")
    if (status == "ok") != (score is not None or bool(verdict)):
        raise ValueError(f"item {item_id}: a score goes with status ok and only with it")
    row: dict[Hashable, Any] = {
        "item_id": str(item_id),
        "labeller": labeller,
        "score": float("nan") if score is None else float(score),
        "status": status,
        "note": note,
        "labelled_at": now_utc(),
        "rubric": rubric,
        "rubric_version": version,
    }
    with FileLock(f"{path}.lock"):
        labels = read_labels_table(path)
        columns = list(LABEL_TABLE_COLUMNS)
        if verdict or VERDICT in labels.columns:
            row[VERDICT] = verdict
            columns.append(VERDICT)
        same = (labels["item_id"] == str(item_id)) & (labels["labeller"] == labeller)
        records: list[dict[Hashable, Any]] = labels[~same].to_dict("records")
        records.append(row)
        updated = pd.DataFrame.from_records(records, columns=columns)
        write_labels_table(updated, path)
    return updated


#: Columns of the one table of human labels: every label, whichever file it came from.
HUMAN_LABEL_COLUMNS: tuple[str, ...] = (
    "item_id",
    "rubric",
    "source",
    "labeller",
    "score",
    "status",
    "rubric_version",
)
#: Where a human label came from.
ITEMS_FILE, LABELLING_TOOL = "items file", "labelling tool"


def column_labeller(column: str) -> str:
    """The rater name of an items file's label column (``column human``)."""
    return f"column {column}"


def human_label_table(
    column_labels: pd.DataFrame, column: str | Mapping[str, str], tool_labels: pd.DataFrame
) -> pd.DataFrame:
    """One long table of every human label: the items file's column and the labelling tool's.

    Args:
        column_labels: The items file's label column as ``item_id, rubric, score`` (labelled
            items only), e.g. a study's ``human_labels.parquet``.
        column: That column's name (the rater is called ``column NAME``), or each rubric's
            (a study judging several items files, each with its label column).
        tool_labels: ``labels.csv`` as :func:`read_labels_table` returns it.

    Returns:
        :data:`HUMAN_LABEL_COLUMNS`, one row per (item, rubric, rater); ``score`` only when
        ``status`` is ``ok``. Conflicts between raters stay as they are
        (:func:`label_conflicts` lists them); nothing is resolved here.
    """
    from_column = pd.DataFrame(
        {
            "item_id": column_labels["item_id"].astype(str),
            "rubric": column_labels["rubric"].astype(str),
            "source": ITEMS_FILE,
            "labeller": [
                column_labeller((column if isinstance(column, str) else column.get(rubric)) or "?")
                for rubric in column_labels["rubric"].astype(str)
            ],
            "score": column_labels["score"].astype(float),
            "status": "ok",
            "rubric_version": "",
        }
    )
    pairwise = VERDICT in column_labels.columns or VERDICT in tool_labels.columns
    columns = [*HUMAN_LABEL_COLUMNS, *([VERDICT] if pairwise else [])]
    if VERDICT in column_labels.columns:
        from_column[VERDICT] = column_labels[VERDICT].fillna("").astype(str).to_numpy()
    from_tool = tool_labels.assign(source=LABELLING_TOOL).reindex(columns=columns)
    parts = [part for part in (from_column, from_tool) if len(part)]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    table = pd.concat(parts, ignore_index=True).reindex(columns=columns)
    if pairwise:
        table[VERDICT] = table[VERDICT].fillna("").astype(str)
    table["item_id"] = table["item_id"].astype(str)
    table["score"] = table["score"].astype(float)
    return table


def describe_human_labels(table: pd.DataFrame) -> str:
    """One line: how many scored labels each rater gave, and from which source."""
    scored = table[table["status"] == "ok"]
    if scored.empty:
        return "no human labels"
    counts = scored.groupby(["labeller", "source"], sort=True).size().reset_index(name="n")
    return "; ".join(f"{r.n} by {r.labeller} ({r.source})" for r in counts.itertuples())


def label_conflicts(table: pd.DataFrame) -> pd.DataFrame:
    """Items that two raters scored differently: one row per item, one column per rater.

    Returns:
        ``item_id, rubric, <rater>...`` (the scores) and ``spread`` (max − min), largest
        first; empty when every rater who scored an item gave it the same score.
    """
    scored = table[table["status"] == "ok"]
    if scored.empty:
        return pd.DataFrame(columns=["item_id", "rubric", "spread"])
    wide = scored.pivot_table(
        index=["item_id", "rubric"], columns="labeller", values="score", aggfunc="first"
    )
    both = wide[wide.notna().sum(axis=1) >= 2]
    spread = both.max(axis=1) - both.min(axis=1)
    conflicts = both[spread > 0].assign(spread=spread[spread > 0])
    conflicts.columns.name = None
    order = conflicts["spread"].sort_values(ascending=False, kind="stable").index
    return conflicts.loc[order].reset_index()
