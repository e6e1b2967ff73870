"""Summary plots for a study: group means with intervals and ranked categories."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgekit.plots._common import require_columns, subplots, wrap_label
from judgekit.plots.style import Width, categorical_colours, figure_size, publication_style


def plot_grouped_bars(
    frame: pd.DataFrame,
    *,
    category: str,
    value: str,
    group: str | None = None,
    low: str | None = None,
    high: str | None = None,
    ylabel: str = "",
    xlabel: str | None = None,
    percent: bool = False,
    category_order: Sequence[object] | None = None,
    group_order: Sequence[object] | None = None,
    width: Width = "one",
) -> Figure:
    """Bars of ``value`` per ``category``, dodged by ``group``, with optional interval whiskers.

    Used for composite scores per model and input mode, hallucination rates, API versus UI.

    Args:
        frame: One row per (category, group) with the value (and bounds, if given).
        category: Column on the x axis.
        value: Bar height column.
        group: Optional column for dodged, coloured bars and a legend.
        low: Optional lower bound column (whisker).
        high: Optional upper bound column (whisker).
        ylabel: Y-axis label.
        xlabel: X-axis label; default the category column's name, capitalised.
        percent: Show values in [0, 1] as percentages.
        category_order: X order; default order of appearance.
        group_order: Group order; default order of appearance.
        width: ``"one"`` or ``"two"`` column figure.
    """
    bounds = [c for c in (low, high) if c]
    require_columns(
        frame, [category, value, *([group] if group else []), *bounds], "plot_grouped_bars"
    )
    categories = list(category_order or pd.unique(frame[category]))
    groups = list(group_order or pd.unique(frame[group])) if group else [None]
    colours = categorical_colours(groups)
    bar_width = 0.8 / len(groups)
    scale = 100.0 if percent else 1.0
    with publication_style():
        fig, axes = subplots(1, 1, figure_size(width, aspect=0.68))
        ax = axes[0]
        for k, name in enumerate(groups):
            rows = frame if name is None else frame[frame[group] == name]
            rows = rows.set_index(category).reindex(categories)
            x = np.arange(len(categories)) + (k - (len(groups) - 1) / 2) * bar_width
            heights = rows[value].to_numpy(dtype=float) * scale
            errors = None
            if low and high:
                errors = np.vstack(
                    [
                        heights - rows[low].to_numpy(dtype=float) * scale,
                        rows[high].to_numpy(dtype=float) * scale - heights,
                    ]
                )
            ax.bar(
                x,
                heights,
                width=bar_width,
                color=colours[name],
                yerr=errors,
                error_kw={"elinewidth": 0.8, "capsize": 2},
                label=None if name is None else str(name),
            )
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
        ax.set_xlabel(category.replace("_", " ").capitalize() if xlabel is None else xlabel)
        ax.set_ylabel(ylabel + (" (%)" if percent and "%" not in ylabel else ""))
        ax.grid(axis="y")
        if group:
            fig.legend(title=group.replace("_", " ").capitalize(), loc="outside right upper")
    return fig


def plot_ranked_dots(
    frame: pd.DataFrame,
    *,
    category: str,
    value: str,
    low: str | None = None,
    high: str | None = None,
    xlabel: str = "",
    ascending: bool = True,
    width: Width = "one",
) -> Figure:
    """Categories ranked by ``value`` as dots with optional intervals (e.g. topic difficulty).

    Args:
        frame: One row per category.
        category: Category column (y axis).
        value: Value column (x axis, ranking key).
        low: Optional lower bound column.
        high: Optional upper bound column.
        xlabel: X-axis label.
        ascending: Put the lowest value on top.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(frame, [category, value, *[c for c in (low, high) if c]], "plot_ranked_dots")
    ranked = frame.sort_values(value, ascending=ascending).reset_index(drop=True)
    y = np.arange(len(ranked))
    with publication_style():
        fig, axes = subplots(
            1, 1, figure_size(width, aspect=(0.45 + 0.17 * len(ranked)) / figure_size(width)[0])
        )
        ax = axes[0]
        if low and high:
            ax.hlines(y, ranked[low], ranked[high], color="#0072B2", linewidth=1.0)
        ax.plot(ranked[value], y, "o", color="#0072B2")
        ax.set_yticks(y, [str(c) for c in ranked[category]])
        ax.invert_yaxis()
        ax.set_xlabel(wrap_label(xlabel, figure_size(width)[0] - 1.2))
        ax.grid(axis="x")
    return fig
