"""``--from long``: one row per item x judge [x run x sample], with a score or the raw reply.

Columns are found by role (:data:`judgekit.importers.tables.SPELLINGS`) or named with
``--column ROLE=COLUMN``. A ``score`` column is taken as given (empty: unparseable); a
``reply`` column is read by ``--format`` or ``--rubric`` exactly as a live reply. A table
without a judge column needs ``--judge NAME``.

A ``winner`` column instead of a score makes a pairwise study: one row per pair x judge
[x run] x order, the winner in the ORIGINAL A/B (``a``/``b``/``tie`` in any case, or 1/2/0;
empty: unparseable), ``order`` ``ab``/``ba`` (default ``ab``), ``model_a``/``model_b``
optional; a ``label`` column (``human_winner``) holds the human verdict of the pair, rater
``human``.
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
        return _pair_rows(frame, roles, path, options)
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


def _pair_rows(
    frame: pd.DataFrame, roles: dict[str, str], path: Path, options: ImportOptions
) -> pd.DataFrame:
    """The comparison records of a long table with a ``winner`` column."""
    from judgekit.data.pairwise import read_pair_label

    def side(column: str, number: int, value: str) -> str:
        return read_pair_label(value, source=str(path), row=number, column=column)

    def text(role: str, default: str = "") -> pd.Series:
        if role not in roles:
            return pd.Series(default, index=frame.index, dtype=object)
        return texts(frame[roles[role]]).str.strip()

    winner = [side(roles["winner"], i + 2, v) for i, v in enumerate(frame[roles["winner"]])]
    label = [side(roles["label"], i + 2, v) for i, v in enumerate(frame[roles["label"]])] if (
        "label" in roles) else [""] * len(frame)  # fmt: skip
    order = text("order", "ab").str.lower()
    if not order.isin(("ab", "ba")).all():
        bad = order[~order.isin(("ab", "ba"))].iloc[0]
        raise UsageError(f"{path}: column {roles['order']!r} holds {bad!r}; write ab or ba")
    return pd.DataFrame(
        {
            "item_id": texts(frame[roles["item"]]).str.strip(),
            "judge": text("judge") if "judge" in roles else options.judge,
            "variant": "", "run": _integers(frame, roles.get("run"), path), "order": order,
            "verdict": winner,
            "status": [Status.OK.value if w else Status.UNPARSEABLE.value for w in winner],
            "reason": ["" if w else "no winner in the table" for w in winner],
            "raw_reply": text("reply"), "model_a": text("model_a"), "model_b": text("model_b"),
            "question": text("question"), "label": label,
        }
    )  # fmt: skip


def _read_pairs(raw: pd.DataFrame, paths: Sequence[Path], options: ImportOptions) -> Imported:
    from judgekit.importers.pairs import PAIR_SCALE, pair_judgments, pair_labels, pair_records

    source = "long:" + ";".join(p.name for p in paths)
    judgments = pair_judgments(pair_records(raw.to_dict("records")), options, rubric="imported",
                               source=source)  # fmt: skip
    labelled = raw[raw["label"] != ""].drop_duplicates(["item_id", "label"])
    clash = labelled["item_id"].duplicated()
    if clash.any():
        raise UsageError(
            f"{paths[0]}: pair {labelled[clash]['item_id'].iloc[0]!r} has two different human "
            "winners; one label column holds one verdict per pair"
        )
    human = pair_labels([(i, "human", v) for i, v in zip(labelled["item_id"], labelled["label"],
                                                          strict=True)])  # fmt: skip
    first = raw.drop_duplicates("item_id")
    items = pd.DataFrame({"ID": first["item_id"].to_numpy()})
    for column, role in (("Question", "question"), ("Model_A", "model_a"), ("Model_B", "model_b")):
        if (first[role] != "").any():
            items[column] = first[role].to_numpy()
    items = items.sort_values("ID", kind="stable").reset_index(drop=True)
    return Imported(judgments, items, labels=human, scale=PAIR_SCALE, pairwise=True)


@register("long")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read long judgments tables (one or several files, concatenated)."""
    raw = pd.concat([read_one(p, options) for p in paths], ignore_index=True)
    if "order" in raw.columns and "verdict" in raw.columns:
        if raw["verdict"].isna().any():
            raise UsageError(f"{paths[0]}: some tables hold winners and some scores; import apart")
        return _read_pairs(raw, paths, options)
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
