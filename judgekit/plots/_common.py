"""Small helpers shared by the plot modules: column checks and level ordering."""

from __future__ import annotations

from collections.abc import Sequence

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
