"""From an items table to the rubric's items, and what the analysis needs to know about each item.

The one way to turn a table into items (:func:`study_items`, for ``judgekit judge``), to
check its human label column, to attach each item's context to its judgments
(:func:`with_context`) and to take its human labels (:func:`human_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from judgekit.data import DataError, Table, items_from_frame
from judgekit.data.tidy import labels_from_items
from judgekit.study.folder import CLUSTER_COLUMN
from judgekit.types import Item, Rubric

#: Item columns that give the analysis its context, when the items file has them.
CONTEXT_SOURCES: dict[str, str] = {
    "answer_model": "Model",  # the model whose answer is judged (self-preference, per model)
    CLUSTER_COLUMN: "Question",
    "answer_chars": "Answer",  # answer length in characters (length bias)
}


def study_items(
    table: Table, rubric: Rubric, *, id_column: str = "ID", label_column: str | None = None
) -> tuple[list[Item], list[str]]:
    """Turn an items table into the rubric's items; the one path of ``judgekit judge``.

    Every input column the rubric uses is sent, the optional ones (e.g. ``Ref_Answer``) whenever
    the table has them; the other columns stay in ``Item.meta``.

    Args:
        table: The table read by :func:`judgekit.data.read_table`.
        rubric: The rubric.
        id_column: Column holding the item IDs.
        label_column: The human label column (default: the rubric's ``label_column``), named
            so that it is not reported as unused.

    Returns:
        The items, and the columns neither sent nor used as labels or context (to list once).

    Raises:
        DataError: For a missing required column or cell (names file, row and column).
    """
    items = items_from_frame(
        table.frame,
        rubric.input_columns,
        id_column=id_column,
        optional=rubric.optional_columns,
        source=str(table.path),
    )
    used = {id_column, *rubric.input_columns, label_column or rubric.label_column}
    used |= set(CONTEXT_SOURCES.values())
    unused = [str(c) for c in table.frame.columns if c not in used]
    return items, unused


def check_label_column(table: Table, column: str) -> None:
    """Refuse a ``--labels-column`` the items file does not have (one line).

    Raises:
        DataError: Naming the file, the column and the headers it has.
    """
    if column not in table.frame.columns:
        headers = ", ".join(str(c) for c in table.frame.columns)
        raise DataError(table.path, f"no label column '{column}'; the headers are: {headers}")


def check_labels(table: Table, column: str, rubric: Rubric) -> int:
    """Refuse label cells that are not scores on the rubric's scale; return how many there are.

    Empty cells mean "not labelled".

    Raises:
        DataError: For the first cell that is not a number on the scale (row and column named).
    """
    allowed = {float(value) for value in (*rubric.scale.allowed, *rubric.scale.abstain)}
    labelled = 0
    for row, value in table.frame[column].items():
        text = "" if value is None else str(value).strip()
        if text in ("", "nan"):
            continue
        try:
            number = float(text.replace(",", "."))
        except ValueError:
            number = float("nan")
        if number not in allowed:
            scale = ", ".join(str(v) for v in rubric.scale.allowed)
            raise DataError(
                table.path, f"label '{text}' is not on the {rubric.name} scale ({scale}); map "
                "labels onto it with --label-map OLD=NEW or leave them out with --no-labels",
                row=int(str(row)) if table.frame.index.name == "row" else None, column=column,
                position=list(table.frame.columns).index(column),
            )  # fmt: skip
        labelled += 1
    return labelled


def item_context(
    items: Sequence[Item], sources: Mapping[str, str] = CONTEXT_SOURCES
) -> pd.DataFrame:
    """Answering model, question and answer length of each item, where the items carry them.

    Args:
        items: The judged items.
        sources: Item column of each context column (default :data:`CONTEXT_SOURCES`).

    Returns:
        Indexed by item ID; only the context columns the items have.
    """
    records = {}
    for item in items:
        text = {**item.meta, **item.fields}
        record: dict[str, object] = {}
        for name, source in sources.items():
            value = text.get(source)
            if value is None or str(value).strip() == "":
                continue
            record[name] = len(str(value)) if name == "answer_chars" else str(value)
        records[item.id] = record
    return pd.DataFrame.from_dict(records, orient="index")


def with_context(
    judgments: pd.DataFrame, items: Sequence[Item], sources: Mapping[str, str] = CONTEXT_SOURCES
) -> pd.DataFrame:
    """``judgments`` with the :func:`item_context` columns mapped onto every row."""
    context = item_context(items, sources)
    result = judgments.copy()
    for column in context.columns:
        result[column] = result["item_id"].map(context[column])
    return result


def human_labels(
    items: Sequence[Item],
    rubric: Rubric,
    label_column: str | None = None,
    answer_model_column: str = CONTEXT_SOURCES["answer_model"],
) -> pd.DataFrame:
    """The human labels the items carry (``item_id, rubric, answer_model, score``)."""
    column = label_column or rubric.label_column
    return labels_from_items(items, rubric.name, answer_model_column, column)
