"""Plots of judge reliability: paraphrase sensitivity and run-to-run consistency."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from judgekit.plots._common import require_columns, subplots
from judgekit.plots.style import (
    OKABE_ITO,
    Width,
    categorical_colours,
    figure_size,
    publication_style,
)


def plot_paraphrase_matrix(
    kappas: pd.DataFrame,
    *,
    row: str = "rater_a",
    column: str = "rater_b",
    value: str = "estimate",
    order: Sequence[str] | None = None,
    gate: float = 0.8,
    title: str | None = None,
    width: Width = "one",
) -> Figure:
    """Heatmap of pairwise agreement between prompt variants, with the gate marked.

    A pair passes only when its kappa is strictly above ``gate`` (seed 004: "kappa > 0.8"); the
    other cells are outlined in vermillion and counted in the title; the colour bar carries a
    line at the gate.

    Args:
        kappas: Tidy table with one row per variant pair (``row``, ``column``, ``value``), or a
            square matrix whose index and columns are the variant names.
        row: Column of the first variant (tidy input).
        column: Column of the second variant (tidy input).
        value: Column of the agreement (tidy input).
        order: Variant order; default order of appearance.
        gate: Agreement every pair must reach (0.8 by default).
        title: First title line (e.g. rubric and judge); the count of failing pairs follows.
        width: ``"one"`` or ``"two"`` column figure.
    """
    matrix = _square(kappas, row, column, value)
    names = list(order) if order is not None else list(matrix.index)
    matrix = matrix.reindex(index=names, columns=names)
    values = matrix.to_numpy(dtype=float)
    off_diagonal = ~np.eye(len(names), dtype=bool) & ~np.isnan(values)
    # Each unordered pair counts once even when the matrix holds both triangles.
    upper = np.triu(off_diagonal)
    failing = int(((values <= gate) & upper).sum())
    pairs = int(upper.sum())
    with publication_style():
        side = figure_size(width)[0]
        fig, axes = subplots(1, 1, (side, side * 0.82))
        ax = axes[0]
        # The colour range starts at 0.4 (or lower if needed) so differences near the gate show.
        floor = min(0.4, float(np.floor(np.nanmin(values) * 10) / 10))
        # seaborn leaves missing pairs blank and picks each value's text colour from the cell.
        sns.heatmap(
            matrix,
            ax=ax,
            cmap="cividis",
            vmin=floor,
            vmax=1.0,
            annot=True,
            fmt=".2f",
            annot_kws={"fontsize": 7},
            cbar=False,
        )
        for i, j in zip(*np.nonzero(off_diagonal & (values <= gate)), strict=True):
            # Cell (i, j) spans [j, j + 1] x [i, i + 1] in seaborn's axes.
            ax.add_patch(Rectangle((j, i), 1, 1, fill=False, edgecolor=OKABE_ITO[4], linewidth=1.6))
        ax.tick_params(length=0)
        ax.set_xticks(ax.get_xticks(), names, rotation=30, ha="right")
        ax.set_yticks(ax.get_yticks(), names, rotation=0)
        ax.set_xlabel("")
        ax.set_ylabel("")
        heading = f"{failing} of {pairs} pairs at or below {gate:g}"
        ax.set_title(f"{title}\n{heading}" if title else heading)
        bar = fig.colorbar(ax.collections[0], ax=ax, shrink=0.85)
        bar.ax.axhline(gate, color=OKABE_ITO[4], linewidth=1.4)
        bar.set_label(f"Weighted kappa (gate {gate:g})")
    return fig


def plot_consistency(
    per_item: pd.DataFrame,
    *,
    flip_rate: str = "flip_rate",
    panel: str | None = None,
    panel_order: Sequence[object] | None = None,
    width: Width = "one",
) -> Figure:
    """Distribution of per-item flip rates across repeated runs, one bar colour per panel.

    A flip rate of 0 means the item got the same score in every run; the legend states that
    share for each panel.

    Args:
        per_item: One row per item (and panel) with a ``flip_rate`` in [0, 1].
        flip_rate: Column with the share of runs disagreeing with the item's modal score.
        panel: Optional column separating judges or variants.
        panel_order: Panel order; default order of appearance.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(per_item, [flip_rate, *([panel] if panel else [])], "plot_consistency")
    frame = per_item.dropna(subset=[flip_rate]).copy()
    frame["_rate"] = frame[flip_rate].astype(float).round(3)
    frame["_panel"] = frame[panel] if panel else "all items"
    panels = list(panel_order) if panel_order is not None else list(pd.unique(frame["_panel"]))
    rates = sorted(frame["_rate"].unique())
    colours = categorical_colours(panels)
    bar_width = 0.8 / len(panels)
    with publication_style():
        fig, axes = subplots(1, 1, figure_size(width, aspect=0.62))
        ax = axes[0]
        for k, name in enumerate(panels):
            subset = frame[frame["_panel"] == name]
            shares = subset["_rate"].value_counts(normalize=True).reindex(rates, fill_value=0.0)
            identical = float((subset["_rate"] == 0).mean())
            positions = np.arange(len(rates)) + (k - (len(panels) - 1) / 2) * bar_width
            ax.bar(
                positions,
                shares.to_numpy(),
                width=bar_width,
                color=colours[name],
                label=f"{name}: {identical:.0%} identical (n={len(subset)})",
            )
        ax.set_xticks(range(len(rates)), [f"{r:.2g}" for r in rates])
        ax.set_xlabel("Flip rate across runs (0 = same score every run)")
        ax.set_ylabel("Share of items")
        ax.set_ylim(0, 1.05)
        fig.legend(loc="outside upper center", ncol=1)
        ax.grid(axis="y")
    return fig


def _square(frame: pd.DataFrame, row: str, column: str, value: str) -> pd.DataFrame:
    """Return a square variant-by-variant matrix from tidy pairs or an already square frame."""
    if {row, column, value} <= set(frame.columns):
        if frame.empty:
            raise ValueError("plot_paraphrase_matrix: the frame is empty, nothing to plot")
        names = list(pd.unique(pd.concat([frame[row], frame[column]])))
        matrix = frame.pivot_table(index=row, columns=column, values=value, aggfunc="mean")
        matrix = matrix.reindex(index=names, columns=names)
        # Fill the mirror image of pairs given only once, and put 1 on the diagonal.
        values = matrix.to_numpy(dtype=float)
        values = np.where(np.isnan(values), values.T, values)
        np.fill_diagonal(values, 1.0)
        return pd.DataFrame(values, index=names, columns=names)
    if list(frame.index) == list(frame.columns):
        return frame.astype(float)
    raise ValueError(
        f"plot_paraphrase_matrix: expected columns {[row, column, value]} or a square matrix; "
        f"got columns {list(frame.columns)}"
    )
