"""Plots of judge-versus-human agreement: score distributions, confusion heatmaps, kappa forests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from judgekit.plots._common import format_level, ordered_levels, require_columns, subplots
from judgekit.plots.style import (
    Width,
    categorical_colours,
    figure_size,
    ordinal_colours,
    panel_grid,
    publication_style,
)


def plot_score_distributions(
    scores: pd.DataFrame,
    *,
    group: str = "model",
    panel: str = "rater",
    score: str = "score",
    levels: Sequence[float] | None = None,
    group_order: Sequence[object] | None = None,
    panel_order: Sequence[object] | None = None,
    score_label: str = "Score",
    width: Width = "two",
) -> Figure:
    """Stacked horizontal bars: the share of each score level per ``group``, one panel per rater.

    Args:
        scores: Long table, one row per scored item, with ``group``, ``panel`` and ``score``
            columns (e.g. model, rater, score). Rows without a score are left out.
        group: Column whose values become the bars (the models judged).
        panel: Column whose values become the panels (the human and each judge).
        score: The score column.
        levels: Score levels in order; default the sorted distinct scores.
        group_order: Bar order; default sorted.
        panel_order: Panel order; default order of appearance.
        score_label: Legend title.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(scores, [group, panel, score], "plot_score_distributions")
    scored = scores.dropna(subset=[score])
    level_list = ordered_levels(scored[score], levels)
    groups = ordered_levels(scored[group], group_order)
    panels = list(panel_order) if panel_order is not None else list(pd.unique(scored[panel]))
    colours = ordinal_colours(len(level_list))
    rows, cols = panel_grid(len(panels), max_columns=4)
    with publication_style():
        size = figure_size(width, aspect=0.16 + (0.05 * len(groups) + 0.06) * rows)
        fig, axes = subplots(rows, cols, size, sharey=True)
        for ax, name in zip(axes, panels, strict=False):
            subset = scored[scored[panel] == name]
            table = pd.crosstab(subset[group], subset[score], normalize="index")
            table = table.reindex(index=groups, columns=level_list, fill_value=0.0)
            left = np.zeros(len(groups))
            for colour, level in zip(colours, level_list, strict=True):
                share = table[level].to_numpy()
                ax.barh(
                    range(len(groups)),
                    share,
                    left=left,
                    color=colour,
                    height=0.72,
                    label=format_level(level),
                    edgecolor="white",
                    linewidth=0.4,
                )
                left += share
            ax.set_yticks(range(len(groups)), [str(g) for g in groups])
            ax.invert_yaxis()
            ax.set_xlim(0, 1)
            ax.set_xticks([0, 0.5, 1], ["0", "50%", "100%"])
            ax.set_title(f"{name}\nn={len(subset)}", fontsize=7.5)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        fig.supxlabel("Share of scored items", fontsize=8)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            title=score_label,
            loc="outside upper center",
            ncol=len(level_list),
            handlelength=1.0,
            columnspacing=0.9,
        )
    return fig


def plot_confusion_grid(
    confusion: pd.DataFrame,
    *,
    panel: str = "judge",
    reference: str = "level_a",
    rating: str = "level_b",
    count: str = "count",
    levels: Sequence[float] | None = None,
    panel_order: Sequence[object] | None = None,
    reference_label: str = "Human score",
    rating_label: str = "Judge score",
    width: Width = "two",
) -> Figure:
    """Small multiples of confusion heatmaps, one per judge.

    Cell colour is the row share (how the judge scored items the human gave that score);
    the number printed in each cell is the raw count.

    Args:
        confusion: Tidy confusion table: one row per (panel, reference, rating) with a count.
        panel: Column naming the judge of each matrix.
        reference: Column with the human (reference) score.
        rating: Column with the judge's score.
        count: Column with the number of items in the cell.
        levels: Score levels on both axes; default each panel's own levels (the tidy tables
            of ``judgekit.stats.confusion_table`` list every scale level).
        panel_order: Panel order; default order of appearance.
        reference_label: Y-axis label.
        rating_label: X-axis label.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(confusion, [panel, reference, rating, count], "plot_confusion_grid")
    panels = list(panel_order) if panel_order is not None else list(pd.unique(confusion[panel]))
    rows, cols = panel_grid(len(panels), max_columns=4)
    with publication_style():
        panel_in = figure_size(width)[0] / cols
        fig, axes = subplots(rows, cols, (figure_size(width)[0], panel_in * rows * 0.98 + 0.3))
        image = None
        for position, (ax, name) in enumerate(zip(axes, panels, strict=False)):
            subset = confusion[confusion[panel] == name]
            # Each panel keeps its own scale: rubrics with different scales can share a figure.
            both = pd.concat([subset[reference], subset[rating]])
            level_list = ordered_levels(both, levels)
            tick_labels = [format_level(v) for v in level_list]
            matrix = subset.pivot_table(
                index=reference, columns=rating, values=count, aggfunc="sum", fill_value=0
            )
            matrix = matrix.reindex(index=level_list, columns=level_list, fill_value=0)
            counts = matrix.to_numpy(dtype=float)
            totals = counts.sum(axis=1, keepdims=True)
            shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
            # seaborn picks each count's text colour from its cell; empty cells stay blank.
            labels = np.where(counts > 0, counts.astype(int).astype(str), "")
            sns.heatmap(
                pd.DataFrame(shares, index=tick_labels, columns=tick_labels),
                ax=ax,
                cmap="cividis",
                vmin=0,
                vmax=1,
                square=True,
                cbar=False,
                annot=labels,
                fmt="",
                annot_kws={"fontsize": 6.5},
            )
            image = ax.collections[0]
            ax.tick_params(length=0, rotation=0)
            ax.set_title(str(name))
            ax.set_xlabel(rating_label)
            ax.set_ylabel(reference_label if position % cols == 0 else "")
            ax.spines[:].set_visible(False)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        if image is not None:
            bar = fig.colorbar(image, ax=list(axes[: len(panels)]), shrink=0.8, pad=0.02)
            bar.set_label("Row share")
    return fig


def plot_kappa_forest(
    estimates: pd.DataFrame,
    *,
    label: str | Sequence[str] = "rater_b",
    estimate: str = "estimate",
    low: str = "ci_low",
    high: str = "ci_high",
    colour_by: str | None = None,
    reference_lines: Sequence[float] = (0.6, 0.8),
    xlabel: str = "Weighted kappa (95% CI)",
    width: Width = "one",
) -> Figure:
    """Forest plot: one row per estimate with its confidence interval.

    Args:
        estimates: One row per estimate with ``estimate``, ``low`` and ``high`` columns.
        label: Column (or columns, joined with " · ") naming each row, e.g. judge, variant, run.
        estimate: Point estimate column.
        low: Lower confidence bound column.
        high: Upper confidence bound column.
        colour_by: Optional column whose levels get distinct colours and a legend.
        reference_lines: X positions of dotted guide lines (e.g. 0.6 and 0.8 agreement).
        xlabel: X-axis label.
        width: ``"one"`` or ``"two"`` column figure.
    """
    label_columns = [label] if isinstance(label, str) else list(label)
    extra = [colour_by] if colour_by else []
    require_columns(estimates, [*label_columns, estimate, low, high, *extra], "plot_kappa_forest")
    frame = estimates.reset_index(drop=True)
    names = frame[label_columns].astype(str).agg(" · ".join, axis=1)
    colours = categorical_colours(list(pd.unique(frame[colour_by]))) if colour_by else {}
    with publication_style():
        height = 0.55 + 0.19 * len(frame) + (0.4 if colour_by else 0.0)
        size = figure_size(width, aspect=height / figure_size(width)[0])
        fig, axes = subplots(1, 1, size)
        ax = axes[0]
        y = np.arange(len(frame))
        for line in reference_lines:
            ax.axvline(line, color="#9a9a9a", linestyle=":", linewidth=0.7, zorder=0)
        keys = list(frame[colour_by]) if colour_by else [None] * len(frame)
        points = zip(y, frame[estimate], frame[low], frame[high], keys, strict=True)
        for position, point, lower, upper, key in points:
            colour = colours.get(key, "#000000")
            ax.plot([lower, upper], [position, position], color=colour, linewidth=1.1)
            ax.plot(point, position, "o", color=colour, markersize=4)
        ax.set_yticks(y, list(names))
        ax.invert_yaxis()
        # Undefined estimates (NaN) keep their row label but draw nothing.
        lows = frame[low].to_numpy(dtype=float)
        finite = lows[np.isfinite(lows)]
        lo = float(finite.min()) if finite.size else 0.0
        ax.set_xlim(min(lo, *reference_lines) - 0.05, 1.0)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x")
        if colour_by:
            handles = [ax.plot([], [], "o-", color=c)[0] for c in colours.values()]
            fig.legend(
                handles,
                [str(k) for k in colours],
                title=colour_by,
                loc="outside upper center",
                ncol=min(len(colours), 4),
            )
    return fig
