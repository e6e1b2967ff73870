"""From pairwise records an adapter read to a pairwise study's tables (``_coord`` contract).

A pairwise adapter builds one *comparison record* per pair x judge x variant x run x order
(:data:`PAIR_RECORD_COLUMNS`: the verdict already in the ORIGINAL A/B, ``""`` unless the
status is ``ok``) and hands them to :func:`pair_judgments`, which refuses what cannot be
imported honestly (IDs differing only by case or whitespace, two records for one pair x judge
x variant x run x order, a verdict that is neither side) and returns the judgments table:
``JUDGMENT_COLUMNS`` (score NaN) plus ``judge``, ``order``, ``verdict``, ``model_a``,
``model_b`` and ``question``. Human pairwise labels go in as ``item_id, rater, verdict``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.data.pairwise import ORDERS, VERDICTS
from judgekit.importers import ImportOptions
from judgekit.importers.rows import check_ids, plain_text, request_hash, texts
from judgekit.types import JUDGMENT_COLUMNS, Scale, Status, UsageError

#: What a pairwise adapter gives per pair x judge x variant x run x order.
PAIR_RECORD_COLUMNS: tuple[str, ...] = (
    "item_id", "judge", "variant", "run", "order", "verdict", "status", "reason", "raw_reply",
    "model_a", "model_b", "question",
)  # fmt: skip
#: The scale an imported pairwise rubric records: the signed preference of the packaged
#: pairwise rubrics (1 = A, 0 = tie, -1 = B); verdicts, not scores, carry the judgments.
PAIR_SCALE = Scale((-1, 0, 1))
LABEL_COLUMNS = ("item_id", "rater", "verdict")


def pair_records(rows: Sequence[Mapping[Any, object]]) -> pd.DataFrame:
    """A comparison records table from dicts (missing text empty; run 1, variant ``""``)."""
    frame = pd.DataFrame(list(rows), columns=list(PAIR_RECORD_COLUMNS))
    frame["run"] = frame["run"].fillna(1)
    frame["status"] = frame["status"].fillna(Status.OK.value)
    for column in ("variant", "verdict", "reason", "raw_reply", "model_a", "model_b", "question"):
        frame[column] = texts(frame[column].astype(object).fillna(""))
    return frame


def _check(frame: pd.DataFrame, source: str) -> None:
    check_ids(frame["item_id"], "pair IDs")
    check_ids(frame["judge"], "judge names")
    bad_order = ~frame["order"].isin(ORDERS)
    if bad_order.any():
        raise UsageError(f"{source}: order {frame.loc[bad_order, 'order'].iloc[0]!r} is not ab/ba")
    ok = frame["status"] == Status.OK.value
    bad = (ok & ~frame["verdict"].isin(VERDICTS)) | (~ok & (frame["verdict"] != ""))
    if bad.any():
        row = frame[bad].iloc[0]
        raise UsageError(
            f"{source}: pair {row['item_id']!r}, judge {row['judge']!r}: winner "
            f"{row['verdict']!r} is neither side (A, B or tie)"
        )
    keys = ["item_id", "judge", "variant", "run", "order"]
    repeated = frame.duplicated(keys)
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise UsageError(
            f"{source}: {int(repeated.sum())} duplicate row(s) for one pair x judge x variant x "
            f"run x order, first: pair {first['item_id']!r}, judge {first['judge']!r}, order "
            f"{first['order']!r}; give each repetition its own run number"
        )


def pair_judgments(
    raw: pd.DataFrame, options: ImportOptions, *, rubric: str, source: str
) -> pd.DataFrame:
    """The pairwise judgments table (see the module docstring), sorted by pair, judge, order.

    ``variant`` is the record's own (LLMBar's prompting strategy) or the user's ``--variant``.

    Raises:
        UsageError: For an empty source, case-only ID clashes, a verdict that is neither
            side, or duplicate records.
    """
    if raw.empty:
        raise UsageError(f"{source}: no judgments found in it")
    raw = raw.assign(
        item_id=texts(raw["item_id"]).str.strip(), judge=texts(raw["judge"]),
        run=raw["run"].astype(int),
        variant=raw["variant"].where(raw["variant"] != "", options.variant),
    )  # fmt: skip
    _check(raw, source)
    name = options.rubric or rubric
    table = pd.DataFrame(
        {
            "item_id": raw["item_id"], "rubric": name, "variant": raw["variant"],
            "model": raw["judge"], "run": raw["run"], "attempt": 1, "status": raw["status"],
            "score": np.nan, "expected_score": np.nan, "reason": raw["reason"],
            "batch_index": 0, "position": 0,
            "request_hash": [request_hash(source, name, *k) for k in zip(
                raw["item_id"], raw["judge"], raw["variant"], raw["run"], raw["order"],
                strict=True)],
            "prompt_tokens": np.nan, "completion_tokens": np.nan, "latency_s": np.nan,
            "tolerances": "", "raw_reply": raw["raw_reply"],
        },
        columns=list(JUDGMENT_COLUMNS),
    )  # fmt: skip
    for column in ("judge", "order", "verdict", "model_a", "model_b", "question"):
        table[column] = raw[column].to_numpy()
    keys = ["item_id", "judge", "variant", "run", "order"]
    return plain_text(table.sort_values(keys, kind="stable").reset_index(drop=True))


def pair_labels(rows: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """Human pairwise labels ``item_id, rater, verdict`` (empty verdicts dropped)."""
    frame = pd.DataFrame(list(rows), columns=list(LABEL_COLUMNS))
    return frame[frame["verdict"] != ""].reset_index(drop=True)


def majority_note(labels: pd.DataFrame) -> list[str]:
    """One note on how many pairs the human labels cover and by how many raters."""
    if labels.empty:
        return ["no human pairwise labels in the source"]
    raters = labels["rater"].nunique()
    return [f"{labels['item_id'].nunique()} pairs labelled by {raters} rater(s)"]
