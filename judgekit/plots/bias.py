"""Plots of judge bias: self-preference (naive versus controlled for true quality)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgekit.plots._common import require_columns, subplots, width_for_labels, wrap_label
from judgekit.plots.style import Width, categorical_colours, figure_size, publication_style


def plot_self_bias(
    bias: pd.DataFrame,
    *,
    judge: str = "judge",
    method: str = "method",
    estimate: str = "estimate",
    low: str = "ci_low",
    high: str = "ci_high",
    method_order: Sequence[str] | None = None,
    xlabel: str = "Self-preference (score points, 95% CI)",
    width: Width | None = None,
) -> Figure:
    """Dot-and-interval plot of self-preference per judge, one colour per estimation method.

    Args:
        bias: One row per (judge, method) with an estimate and its confidence bounds; methods
            are typically ``naive`` (own-model mean minus others' mean) and ``controlled``
            (the same gap after adjusting for the human score).
        judge: Judge column (rows of the plot).
        method: Method column (dodged dots, colours, legend).
        estimate: Point estimate column.
        low: Lower bound column.
        high: Upper bound column.
        method_order: Method order; default order of appearance.
        xlabel: X-axis label.
        width: ``"one"`` or ``"two"`` column figure; default one, two when the judges' names
            would take more than 60 % of one column.
    """
    require_columns(bias, [judge, method, estimate, low, high], "plot_self_bias")
    judges = list(pd.unique(bias[judge]))
    if width is None:
        width = width_for_labels(judges, figure_size("one")[0])
    methods = list(method_order) if method_order is not None else list(pd.unique(bias[method]))
    colours = categorical_colours(methods)
    step = 0.5 / max(len(methods), 1)
    with publication_style():
        fig, axes = subplots(
            1, 1, figure_size(width, aspect=(0.8 + 0.32 * len(judges)) / figure_size(width)[0])
        )
        ax = axes[0]
        ax.axvline(0, color="#6f6f6f", linewidth=0.7, zorder=0)
        for k, name in enumerate(methods):
            rows = bias[bias[method] == name].set_index(judge).reindex(judges)
            y = np.arange(len(judges)) + (k - (len(methods) - 1) / 2) * step
            errors = np.vstack([rows[estimate] - rows[low], rows[high] - rows[estimate]])
            ax.errorbar(
                rows[estimate],
                y,
                xerr=errors,
                fmt="o",
                color=colours[name],
                capsize=2,
                elinewidth=1.0,
                markersize=4,
                label=str(name),
            )
        ax.set_yticks(range(len(judges)), [str(j) for j in judges])
        ax.invert_yaxis()
        # Ends at the axes' right edge and may run left over the row labels (as the forest's):
        # wrapped to the figure's width, never cut at its edge.
        ax.set_xlabel(wrap_label(xlabel, figure_size(width)[0] - 0.3), loc="right")
        ax.grid(axis="x")
        wide = sum(len(str(m)) + 6 for m in methods) * 0.55 * 8 / 72 > figure_size(width)[0]
        fig.legend(loc="outside upper center", ncol=1 if wide else len(methods))
    return fig
