"""Cut items into judge batches and write the seed's ``ID,score`` result file.

Batch row numbers follow the seeds' wording ("the 1-60 rows from the attached csv, excluding
header row"): the first item is row 1. (Error messages about files count the header as row 1
instead, as a spreadsheet does.)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgekit.data.atomic import atomic_write_text
from judgekit.data.errors import DataError
from judgekit.data.tidy import final_verdicts
from judgekit.types import Item, Status

#: Columns of the status sidecar written next to every ``ID,score`` file.
STATUS_COLUMNS: tuple[str, ...] = ("ID", "status", "score", "attempt", "reason")


@dataclass(frozen=True)
class Batch:
    """A run of consecutive items judged in one request.

    Attributes:
        index: 0-based batch number.
        items: The items, in table order.
        first_row: 1-based row number of the first item (data rows, header not counted).
        last_row: 1-based row number of the last item, inclusive.
    """

    index: int
    items: tuple[Item, ...]
    first_row: int
    last_row: int

    @property
    def label(self) -> str:
        """How prompts name the batch: ``"rows 1-60"``."""
        return f"rows {self.first_row}-{self.last_row}"

    @property
    def ids(self) -> tuple[str, ...]:
        """The item IDs, in order."""
        return tuple(item.id for item in self.items)


def make_batches(items: Sequence[Item], size: int) -> list[Batch]:
    """Cut ``items`` into consecutive batches of ``size`` (the last one may be shorter).

    Args:
        items: Items in table order; their IDs must be unique.
        size: Items per batch (1 or more).

    Returns:
        The batches; an empty list for no items.

    Raises:
        ValueError: If ``size`` is below 1.
        DataError: If two items share an ID (a batched reply could not tell them apart).
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    seen: dict[str, int] = {}
    for position, item in enumerate(items, start=1):
        if item.id in seen:
            raise DataError(
                "<items>", f"duplicate ID '{item.id}' (also in row {seen[item.id]})", row=position
            )
        seen[item.id] = position
    return [
        Batch(
            index=number,
            items=tuple(items[start : start + size]),
            first_row=start + 1,
            last_row=min(start + size, len(items)),
        )
        for number, start in enumerate(range(0, len(items), size))
    ]


def _score_text(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else repr(float(score))


def _final_verdicts(judgments: pd.DataFrame, selection: dict[str, object]) -> pd.DataFrame:
    chosen = judgments
    for column, wanted in selection.items():
        if wanted is not None:
            chosen = chosen[chosen[column] == wanted]
    if chosen.empty:
        raise ValueError(f"no judgments match {selection}")
    # Foreign IDs (unknown_id rows) are not verdicts on any item and never reach this file.
    final = final_verdicts(chosen)
    first_seen = {item: order for order, item in enumerate(pd.unique(chosen["item_id"]))}
    final = final.sort_values("item_id", key=lambda ids: ids.map(first_seen), kind="stable")
    counts = final.groupby("item_id", sort=False).size()
    if (counts > 1).any():
        item = str(counts[counts > 1].index[0])
        clash = final[final["item_id"] == item]
        varying = [c for c in ("rubric", "variant", "model", "run") if clash[c].nunique() > 1]
        raise ValueError(
            f"item {item!r} has {int(counts[item])} final judgments; "
            f"choose one with {', '.join(f'{c}=' for c in varying) or 'fewer rows'}"
        )
    return final


def write_id_score_csv(
    judgments: pd.DataFrame,
    path: str | Path,
    *,
    run: int | None = None,
    variant: str | None = None,
    rubric: str | None = None,
    model: str | None = None,
) -> tuple[Path, Path]:
    """Write one judging run as the seed's ``ID,score`` file plus a status sidecar.

    The main file opens in any spreadsheet: a header line ``ID,score`` and one line per item
    in first-seen order, like the judge's own reply. An item without a usable verdict gets
    an empty score, never a number. The sidecar ``<stem>.status.csv`` has one line per item
    with ``ID,status,score,attempt,reason`` so every empty score is explained. For each item
    the last attempt counts (a re-ask replaces the failed first answer). Both files are
    written atomically.

    Args:
        judgments: Rows with at least ``item_id, rubric, variant, model, run, attempt,
            status, score, reason`` (see ``judgekit.types.JUDGMENT_COLUMNS``).
        path: The ``ID,score`` file to write.
        run: Keep only this run (needed when the table holds several).
        variant: Keep only this prompt variant.
        rubric: Keep only this rubric.
        model: Keep only this judge model.

    Returns:
        The paths of the score file and of the status sidecar.

    Raises:
        ValueError: If nothing matches, an item still has several final judgments, or an OK
            row lacks a score.
    """
    selection: dict[str, object] = {
        "run": run,
        "variant": variant,
        "rubric": rubric,
        "model": model,
    }
    final = _final_verdicts(judgments, selection)
    scores, statuses = io.StringIO(), io.StringIO()
    score_writer = csv.writer(scores, lineterminator="\n")
    status_writer = csv.writer(statuses, lineterminator="\n")
    score_writer.writerow(["ID", "score"])
    status_writer.writerow(STATUS_COLUMNS)
    columns = (final[c] for c in ("item_id", "status", "score", "attempt", "reason"))
    for item_id, status, value, attempt, given in zip(*columns, strict=True):
        item_id, status = str(item_id), str(status)
        ok = status == Status.OK.value
        has_score = value is not None and not pd.isna(value)
        if ok and not has_score:
            raise ValueError(f"item {item_id!r} is ok but has no score")
        text = _score_text(float(value)) if ok else ""
        reason = "" if pd.isna(given) else str(given)
        score_writer.writerow([item_id, text])
        status_writer.writerow([item_id, status, text, attempt, reason])
    target = Path(path)
    sidecar = target.with_name(f"{target.stem}.status.csv")
    atomic_write_text(sidecar, statuses.getvalue())
    atomic_write_text(target, scores.getvalue())
    return target, sidecar
