"""Small helpers shared by the plot modules: column checks and level ordering."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Literal

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from judgekit.data import require_columns as require_table_columns


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """:func:`judgekit.data.require_columns` for a figure: the columns, and at least one row."""
    require_table_columns(frame, columns, what, rows=True)


def ordered_levels(values: pd.Series, order: Sequence[object] | None = None) -> list[object]:
    """Return ``order`` restricted to present values, else the sorted distinct values."""
    present = list(pd.unique(values.dropna()))
    if order is not None:
        return [level for level in order if level in set(present)]
    try:
        return sorted(present)
    except TypeError:
        return present


def format_level(value: object) -> str:
    """Render a score level without a trailing ``.0`` (``5.0`` -> ``"5"``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def subplots(
    rows: int, cols: int, size: tuple[float, float], *, sharex: bool = False, sharey: bool = False
) -> tuple[Figure, list[Axes]]:
    """Create a constrained-layout figure and return it with a flat list of its axes."""
    fig, grid = plt.subplots(
        rows, cols, figsize=size, squeeze=False, layout="constrained", sharex=sharex, sharey=sharey
    )
    return fig, list(grid.ravel())


def shared_context(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[list[str], str]:
    """Split label ``columns`` into those that vary between rows and the context all rows share.

    A column with one value in every row says nothing about any row: it belongs in the title,
    named by its column (``"judge gpt-4.1 · variant base · run 1"``), not repeated in each row
    label. At least one column is kept for the rows (the last, when none varies).

    Returns:
        The varying columns, and the shared ones as ``column value`` joined with `` · ``.
    """
    varying = [c for c in columns if frame[c].astype(str).nunique() > 1]
    if not varying and columns:
        varying = [columns[-1]]
    shared = [f"{c.replace('_', ' ')} {frame[c].iloc[0]}" for c in columns if c not in varying]
    return varying, " · ".join(shared)


def join_labels(frame: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """Each row's values of ``columns`` joined with `` · ``; a number says its column (run 2)."""
    parts = [
        f"{c.replace('_', ' ')} " + frame[c].astype(str)
        if pd.api.types.is_numeric_dtype(frame[c])
        else frame[c].astype(str)
        for c in columns
    ]
    return list(pd.concat(parts, axis=1).agg(" · ".join, axis=1)) if parts else []


def join_title(*parts: str | None) -> str:
    """The non-empty ``parts`` as one title, joined with ``; ``."""
    return "; ".join(part for part in parts if part)


def wrap_label(text: str, width_in: float, fontsize: float = 8.0) -> str:
    """Break ``text`` into lines that fit ``width_in`` inches at ``fontsize`` points.

    The width of a character is taken as 0.6 em, a little over DejaVu Sans' average.
    """
    characters = max(int(width_in * 72 / (0.6 * fontsize)), 10)
    return "\n".join(textwrap.wrap(text, characters)) or text


#: Rough width of one character of an 8 pt label (inches), to size a figure before drawing.
CHAR_IN = 0.55 * 8.0 / 72
#: Largest share of a one-column figure its row labels may take before it goes two columns.
LABEL_SHARE = 0.6


def width_for_labels(labels: Sequence[object], one_column_in: float) -> Literal["one", "two"]:
    """The print width for row labels: two columns when one would squash the data.

    ``"two"`` when the longest label would take more than :data:`LABEL_SHARE` of one column.

    Examples:
        >>> width_for_labels(["GPT", "Claude"], 3.5), width_for_labels(["x" * 60], 3.5)
        ('one', 'two')
    """
    longest = max((len(str(label)) for label in labels), default=0) * CHAR_IN
    return "two" if longest > LABEL_SHARE * one_column_in else "one"
