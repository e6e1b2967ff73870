"""``--from long``: one row per item x judge [x run x sample], with a score or the raw reply.

Columns are found by role (:data:`judgekit.importers.tables.SPELLINGS`) or named with
``--column ROLE=COLUMN``. A ``score`` column is taken as given (empty: unparseable); a
``reply`` column is read by ``--format`` or ``--rubric`` exactly as a live reply. A table
without a judge column needs ``--judge NAME``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.rows import judgments_table, texts
from judgekit.importers.tables import SPELLINGS, find_columns, read_long
from judgekit.types import Status, UsageError


def _numbers(column: pd.Series) -> pd.Series:
    text = column.astype(str).str.strip().str.replace(",", ".", regex=False)
    return pd.to_numeric(text.where(text != "", None), errors="coerce")


def _integers(frame: pd.DataFrame, column: str | None, path: Path) -> pd.Series:
    if column is None:
        return pd.Series(1, index=frame.index)
    values = _numbers(frame[column])
    if values.isna().any() or (values % 1 != 0).any():
        bad = frame.loc[values.isna() | (values % 1 != 0), column].iloc[0]
        raise UsageError(f"{path}: column {column!r} holds {bad!r}, not a whole number")
    return values.astype(int)


def read_one(path: Path, options: ImportOptions) -> pd.DataFrame:
    """The records of one long table (see the module docstring)."""
    frame = read_long(path, "long judgments table")
    roles = find_columns(frame, SPELLINGS, options.columns, source=path)
    headers = ", ".join(str(c) for c in frame.columns)
    if "item" not in roles:
        raise UsageError(
            f"{path}: no item ID column ({headers}); name it with --column item=COLUMN"
        )
    if "winner" in roles and "score" not in roles:
        raise UsageError(
            f"{path}: pairwise winners ({roles['winner']!r}) are imported by the pairwise "
            "adapters; a long table here holds direct scores or replies"
        )
    if options.reader is not None and "reply" not in roles:
        raise UsageError(f"{path}: --format/--rubric read replies, but no reply column ({headers})")
    if options.reader is None and "score" not in roles:
        raise UsageError(
            f"{path}: no score column ({headers}); name it with --column score=COLUMN, or give "
            "the reply column and --format/--rubric to read it"
        )
    if "judge" not in roles and not options.judge:
        raise UsageError(f"{path}: no judge column ({headers}); name the judge with --judge NAME")
    n = len(frame)

    def text(role: str) -> pd.Series:
        return (
            texts(frame[roles[role]])
            if role in roles
            else pd.Series("", index=frame.index, dtype=object)
        )

    if options.reader is None:
        score = _numbers(frame[roles["score"]])
        given = frame[roles["score"]].astype(str).str.strip()
        bad = score.isna() & (given != "")
        if bad.any():
            raise UsageError(
                f"{path}: score {given[bad].iloc[0]!r} is not a number; give the reply column "
                "and --format/--rubric to read texts"
            )
        status = np.where(score.notna(), Status.OK.value, Status.UNPARSEABLE.value)
    else:
        score = pd.Series(np.nan, index=frame.index)
        status = np.full(n, Status.OK.value)
    raw = pd.DataFrame(
        {
            "item_id": texts(frame[roles["item"]]).str.strip(),
            "judge": text("judge").str.strip() if "judge" in roles else options.judge,
            "run": _integers(frame, roles.get("run"), path),
            "sample": _integers(frame, roles.get("sample"), path),
            "status": status,
            "score": score,
            "expected_score": _numbers(frame[roles["expected_score"]])
            if "expected_score" in roles
            else np.nan,
            "probability": _numbers(frame[roles["probability"]])
            if "probability" in roles
            else np.nan,
            "reason": "",
            "raw_reply": text("reply"),
            "answer_model": text("answer_model"),
            "question": text("question"),
            "answer": text("answer"),
        }
    )
    return raw


@register("long")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read long judgments tables (one or several files, concatenated)."""
    raw = pd.concat([read_one(p, options) for p in paths], ignore_index=True)
    empty = raw["item_id"] == ""
    if empty.any():
        raise UsageError(f"{paths[0]}: {int(empty.sum())} row(s) without an item ID")
    source = "long:" + ";".join(p.name for p in paths)
    judgments, notes = judgments_table(raw, options, rubric="imported", source=source)
    first = raw.drop_duplicates("item_id")
    items = pd.DataFrame({"ID": first["item_id"].to_numpy()})
    for column, role in (("Question", "question"), ("Answer", "answer"), ("Model", "answer_model")):
        values = first[role].to_numpy()
        if (values != "").any():
            items[column] = values
    return Imported(
        judgments, items.sort_values("ID", kind="stable").reset_index(drop=True), notes=tuple(notes)
    )
