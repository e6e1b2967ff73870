"""Plots of judge reliability: paraphrase sensitivity and run-to-run consistency."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from judgekit.plots._common import (
    join_labels,
    join_title,
    require_columns,
    shared_context,
    subplots,
    wrap_label,
)
from judgekit.plots.style import (
    MIN_FONT_PT,
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
    limits: tuple[float, float] = (0.0, 1.0),
    value_label: str = "Quadratic weighted kappa",
    title: str | None = None,
    width: Width = "one",
) -> Figure:
    """Heatmap of pairwise agreement between prompt variants, with the gate marked.

    A pair passes only when its kappa is strictly above ``gate`` (seed 004: "kappa > 0.8"); the
    other cells are outlined in vermillion and counted in the title; the colour bar carries a
    line at the gate. The colour limits are fixed (a kappa below the lower limit takes the end
    colour and keeps its printed number), so two studies' figures compare at a glance; the
    diagonal (a variant with itself) is left blank.

    Args:
        kappas: Tidy table with one row per variant pair (``row``, ``column``, ``value``), or a
            square matrix whose index and columns are the variant names.
        row: Column of the first variant (tidy input).
        column: Column of the second variant (tidy input).
        value: Column of the agreement (tidy input).
        order: Variant order; default order of appearance.
        gate: Agreement every pair must reach (0.8 by default).
        limits: Colour range (0-1 by default; -1-1 to show disagreement below chance).
        value_label: What the cells hold (the colour bar's label).
        title: First title line (e.g. rubric and judge); the count of failing pairs follows.
        width: ``"one"`` or ``"two"`` column figure.
    """
    matrix = _square(kappas, row, column, value)
    names = list(order) if order is not None else list(matrix.index)
    matrix = matrix.reindex(index=names, columns=names)
    values = matrix.to_numpy(dtype=float)
    diagonal = np.eye(len(names), dtype=bool)
    off_diagonal = ~diagonal & ~np.isnan(values)
    # Each unordered pair counts once even when the matrix holds both triangles.
    upper = np.triu(off_diagonal)
    failing = int(((values <= gate) & upper).sum())
    pairs = int(upper.sum())
    with publication_style():
        side = figure_size(width)[0]
        cell = min(0.55, (side - 1.9) / max(len(names), 1))
        fig, axes = subplots(1, 1, (side, len(names) * cell + 1.5))
        ax = axes[0]
        # seaborn leaves masked and missing cells blank and picks each value's text colour.
        sns.heatmap(
            matrix,
            ax=ax,
            mask=diagonal,
            cmap="cividis",
            vmin=limits[0],
            vmax=limits[1],
            annot=True,
            fmt=".2f",
            annot_kws={"fontsize": MIN_FONT_PT},
            cbar=False,
            square=True,
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
        bar.set_label(f"{value_label} (gate {gate:g})")
    return fig


def plot_consistency(
    per_item: pd.DataFrame,
    *,
    flip_rate: str = "flip_rate",
    runs: str = "n_runs",
    panel: str | Sequence[str] | None = None,
    panel_order: Sequence[object] | None = None,
    title: str | None = None,
    width: Width = "one",
) -> Figure:
    """How many of its runs disagree with each item's most common score, one colour per panel.

    The x axis counts runs (``flip_rate`` times the item's usable runs), so with two runs it
    reads 0 or 1, never a fraction of a run; 0 means the same score in every run. The legend
    states that share for each panel.

    Args:
        per_item: One row per item (and panel) with a ``flip_rate`` in [0, 1] and its number
            of usable runs.
        flip_rate: Column with the share of runs disagreeing with the item's modal score.
        runs: Column with the item's number of usable runs.
        panel: Optional column (or columns, joined with " · ") separating judges or rubrics; a
            column with one value in every row goes into the title instead.
        panel_order: Panel order (of the joined names); default order of appearance.
        title: What every item shares (e.g. the variant); shared panel values follow.
        width: ``"one"`` or ``"two"`` column figure.
    """
    panel_columns = [] if panel is None else [panel] if isinstance(panel, str) else list(panel)
    require_columns(per_item, [flip_rate, runs, *panel_columns], "plot_consistency")
    frame = per_item.dropna(subset=[flip_rate]).copy()
    frame["_flips"] = (frame[flip_rate].astype(float) * frame[runs].astype(float)).round()
    frame["_flips"] = frame["_flips"].astype(int)
    varying, context = shared_context(frame, panel_columns) if panel_columns else ([], "")
    frame["_panel"] = join_labels(frame, varying) if varying else "all items"
    heading = join_title(title, context)
    panels = list(panel_order) if panel_order is not None else list(pd.unique(frame["_panel"]))
    counts = list(range(int(frame["_flips"].max()) + 1))
    colours = categorical_colours(panels)
    bar_width = 0.8 / len(panels)
    run_counts = sorted(set(frame[runs].astype(int)))
    of_runs = f" (of {run_counts[0]})" if len(run_counts) == 1 else ""
    with publication_style():
        fig, axes = subplots(1, 1, (figure_size(width)[0], 1.9 + 0.2 * len(panels)))
        ax = axes[0]
        for k, name in enumerate(panels):
            subset = frame[frame["_panel"] == name]
            shares = subset["_flips"].value_counts(normalize=True).reindex(counts, fill_value=0.0)
            identical = float((subset["_flips"] == 0).mean())
            positions = np.arange(len(counts)) + (k - (len(panels) - 1) / 2) * bar_width
            ax.bar(
                positions,
                shares.to_numpy(),
                width=bar_width,
                color=colours[name],
                label=f"{name}: {identical:.0%} identical (n={len(subset)})",
            )
        ax.set_xticks(range(len(counts)), [str(c) for c in counts])
        label = f"Runs that differ from the item's most common score{of_runs}"
        ax.set_xlabel(wrap_label(label, figure_size(width)[0] - 0.8))
        ax.set_ylabel("Share of items")
        ax.set_ylim(0, 1.05)
        if heading:
            ax.set_title(wrap_label(heading, figure_size(width)[0] - 0.8))
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
