"""Human labels off the rubric's scale: mapped onto it (``--label-map``) or left out.

``--label-map 1=0,4=5`` maps the label cells ``1`` to ``0`` and ``4`` to ``5``; ``4=`` (nothing
after ``=``) leaves the cells ``4`` unlabelled. A named map holds a study's own mapping:
``riddles-v1`` is :data:`judgekit.riddles.V1_LABEL_MAPS` (the v1 riddles pilot's accuracy
labels, 0/1/3/5, on the study's 0/3/5 scale; its docstring gives the source). The user's file
is never changed: the map applies to the labels as read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from judgekit.data import Table
from judgekit.study.items import check_label_column, check_labels
from judgekit.types import Rubric, UsageError


def named_maps() -> Mapping[str, Mapping[str, Mapping[int, int | None]]]:
    """Named maps: label column -> {label as written: label on the rubric's scale, or None}."""
    from judgekit.riddles import V1_LABEL_MAPS  # here: judging imports no riddles statistics

    return {"riddles-v1": V1_LABEL_MAPS}


LabelMap = dict[float, float | None]


def parse_label_map(text: str, column: str) -> LabelMap:
    """The map ``text`` gives for the label column ``column``.

    Raises:
        UsageError: For text that is neither ``OLD=NEW`` pairs nor a named map.
    """
    named_map = named_maps().get(text)
    if named_map is not None:
        return {
            float(k): None if v is None else float(v) for k, v in named_map.get(column, {}).items()
        }
    mapping: LabelMap = {}
    for pair in text.split(","):
        old, equals, new = (part.strip() for part in pair.partition("="))
        try:
            mapping[float(old)] = float(new) if new else None
        except ValueError:
            old = ""
        if not equals or not old:
            named = ", ".join(named_maps())
            raise UsageError(
                f"--label-map {text!r}: write OLD=NEW pairs such as 1=0,4=5 (NEW empty: leave "
                f"unlabelled), or a named map ({named})"
            )
    return mapping


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def apply_label_map(
    frame: pd.DataFrame, column: str, mapping: LabelMap
) -> tuple[pd.DataFrame, str]:
    """``frame`` with ``column`` mapped, and one line saying what changed.

    Returns:
        A copy of ``frame`` (the column as text, mapped cells replaced, dropped cells empty)
        and e.g. ``"mapped 1->0 (92 cells), 4->unlabelled (1 cell)"``.
    """
    cells = frame[column].map(lambda v: "" if pd.isna(v) else str(v).strip())
    result = frame.copy()
    result[column] = cells
    said = []
    for old, new in mapping.items():
        hit = cells.map(lambda text, old=old: _number(text) == old)
        count = int(hit.sum())
        target = "unlabelled" if new is None else f"{new:g}"
        said.append(f"{old:g}->{target} ({count} cell{'s' * (count != 1)})")
        result.loc[hit, column] = "" if new is None else f"{new:g}"
    return result, "mapped " + ", ".join(said) if said else "nothing to map"


def choose_labels(
    table: Table,
    rubric: Rubric,
    labels_column: str | None,
    label_map: str | None,
    *,
    no_labels: bool = False,
) -> tuple[Table, str | None, str]:
    """The human labels of a command: the table with them mapped, their column, one line.

    Args:
        table: The items as read.
        rubric: The rubric (its scale, its default label column).
        labels_column: ``--labels-column`` (default: the rubric's, when the table has it).
        label_map: ``--label-map``.
        no_labels: ``--no-labels``.

    Returns:
        The table (labels mapped; the user's file is not touched), the label column
        (``None``: no labels) and the line that says so.

    Raises:
        UsageError: For contradictory options; DataError for a label still off the scale.
    """
    if no_labels:
        if labels_column or label_map:
            raise UsageError("--no-labels leaves the labels out: drop --labels-column/--label-map")
        return table, None, "human labels: left out (--no-labels)"
    column = labels_column
    if column is not None:
        check_label_column(table, column)
    elif rubric.label_column in table.frame.columns:
        column = rubric.label_column
    if column is None:
        if label_map:
            raise UsageError("--label-map: the items have no label column; name it --labels-column")
        missing = f"no column '{rubric.label_column}'; name yours with --labels-column"
        return table, None, f"no human labels: {missing}"
    note = f"human labels: column '{column}'"
    if label_map:
        frame, said = apply_label_map(table.frame, column, parse_label_map(label_map, column))
        table = replace(table, frame=frame)
        note += f", {said} (--label-map {label_map})"
    check_labels(table, column, rubric)
    return table, column, note
