"""Plots of judge-versus-human agreement: score distributions, confusion heatmaps, kappa forests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from judgekit.plots._common import (
    format_level,
    join_labels,
    join_title,
    ordered_levels,
    require_columns,
    shared_context,
    subplots,
    width_for_labels,
    wrap_label,
)
from judgekit.plots.style import (
    GUIDE_STYLES,
    LANDIS_KOCH,
    MIN_FONT_PT,
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
    sizes = [int((scored[panel] == name).sum()) for name in panels]
    same_n = len(set(sizes)) == 1  # then said once, not in every panel's title
    rows, cols = panel_grid(len(panels), max_columns=5 if width == "two" else 2)
    with publication_style():
        height = 0.75 + rows * (0.22 * len(groups) + 0.55)
        size = (figure_size(width)[0], height)
        fig, axes = subplots(rows, cols, size, sharey=True)
        for position, (ax, name) in enumerate(zip(axes, panels, strict=False)):
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
            first = position % cols == 0
            ax.tick_params(axis="y", labelleft=first, left=first)  # the rows say it once
            ax.set_ylim(len(groups) - 0.5, -0.5)
            ax.set_xlim(0, 1)
            ax.set_xticks([0, 0.5, 1], ["0", "50", "100"])
            shown = wrap_label(str(name), figure_size(width)[0] / cols - 0.15)
            ax.set_title(shown if same_n else f"{shown}\nn={len(subset)}")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        each = f", n = {sizes[0]} per panel" if same_n else ""
        fig.supxlabel(f"Share of scored items (%{each})")
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


#: Side of one confusion-matrix cell at print size (inches): room for a 3-digit count at 8 pt.
CELL_IN = 0.3
#: Room around each panel for its tick labels, axis labels and title (inches).
PANEL_MARGIN_IN = (0.55, 0.75)


#: Tallest saved figure (inches): a grid with more rows is split into pages.
MAX_HEIGHT_IN = 9.0
#: Cell size on scales of more than six levels (1-10): two panels still fit side by side.
SMALL_CELL_IN = 0.25


def _cell_in(n_levels: int) -> float:
    return CELL_IN if n_levels <= 6 else SMALL_CELL_IN


def confusion_layout(n_panels: int, n_levels: int) -> tuple[Width, int, int]:
    """The narrowest print width (and grid) that holds the panels at their cell size.

    One column when its grid of panels is no taller than the column is wide, else two.
    The grid may be taller than a page: :func:`plot_confusion_pages` splits it.
    """
    panel_in = n_levels * _cell_in(n_levels) + PANEL_MARGIN_IN[0]
    for width in ("one", "two"):
        usable = figure_size(width)[0] - 0.6  # the colour bar
        columns = max(1, min(n_panels, int(usable // panel_in)))
        rows = -(-n_panels // columns)
        tall = rows * (n_levels * _cell_in(n_levels) + PANEL_MARGIN_IN[1])
        if width == "two" or tall <= figure_size(width)[0]:
            return width, rows, columns
    raise AssertionError("unreachable")


def plot_confusion_grid(
    confusion: pd.DataFrame,
    *,
    panel: str | Sequence[str] = "judge",
    reference: str = "level_a",
    rating: str = "level_b",
    count: str = "count",
    levels: Sequence[float] | None = None,
    panel_order: Sequence[object] | None = None,
    reference_label: str = "Human score",
    rating_label: str = "Judge score",
    title: str | None = None,
) -> Figure:
    """Small multiples of confusion heatmaps, one per judge, sized to their cells.

    Cell colour is the row share (how the judge scored items the human gave that score) on a
    fixed 0-1 scale; the number printed in each cell is the raw count. Each cell is
    :data:`CELL_IN` wide at print size (:data:`SMALL_CELL_IN` past six levels); the figure is
    one column wide when its grid of panels is no taller than that, else two. A grid taller
    than :data:`MAX_HEIGHT_IN` does not fit one figure: :func:`plot_confusion_pages` splits it.

    Args:
        confusion: Tidy confusion table: one row per (panel, reference, rating) with a count.
        panel: Column (or columns, joined with " · ") naming each matrix; a column with one
            value in every row goes into the title instead.
        reference: Column with the human (reference) score.
        rating: Column with the judge's score.
        count: Column with the number of items in the cell.
        levels: Score levels on both axes; default each panel's own levels (the tidy tables
            of ``judgekit.stats.confusion_table`` list every scale level).
        panel_order: Panel order (of the joined panel names); default order of appearance.
        reference_label: Y-axis label.
        rating_label: X-axis label.
        title: What every panel shares (e.g. the variant and run); shared panel values follow.

    Raises:
        ValueError: If the panels need more than one page.
    """
    pages = plot_confusion_pages(
        confusion, panel=panel, reference=reference, rating=rating, count=count,
        levels=levels, panel_order=panel_order, reference_label=reference_label,
        rating_label=rating_label, title=title, _one_page=True,
    )  # fmt: skip
    return pages[0]


def plot_confusion_pages(
    confusion: pd.DataFrame,
    *,
    panel: str | Sequence[str] = "judge",
    reference: str = "level_a",
    rating: str = "level_b",
    count: str = "count",
    levels: Sequence[float] | None = None,
    panel_order: Sequence[object] | None = None,
    reference_label: str = "Human score",
    rating_label: str = "Judge score",
    title: str | None = None,
    _one_page: bool = False,
) -> list[Figure]:
    """:func:`plot_confusion_grid` split into pages of at most :data:`MAX_HEIGHT_IN` inches.

    Same arguments; each page holds as many rows of panels as fit, in panel order, and its
    title says "page k of m" when there is more than one. Save each with
    :func:`~judgekit.plots.save.save_pages`.
    """
    panel_columns = [panel] if isinstance(panel, str) else list(panel)
    require_columns(confusion, [*panel_columns, reference, rating, count], "plot_confusion_grid")
    varying, context = shared_context(confusion, panel_columns)
    frame = confusion.assign(_panel=join_labels(confusion, varying))
    panels = (
        [str(p) for p in panel_order]
        if panel_order is not None
        else list(pd.unique(frame["_panel"]))
    )
    all_levels = ordered_levels(pd.concat([frame[reference], frame[rating]]), levels)
    width, _, cols = confusion_layout(len(panels), len(all_levels))
    heading = join_title(title, context)
    side = len(all_levels) * _cell_in(len(all_levels)) + PANEL_MARGIN_IN[1]
    per_page = cols * max(1, int((MAX_HEIGHT_IN - 0.3) // side))
    chunks = [panels[k : k + per_page] for k in range(0, len(panels), per_page)]
    if _one_page and len(chunks) > 1:
        raise ValueError(
            f"{len(panels)} confusion panels need {len(chunks)} pages of at most "
            f"{MAX_HEIGHT_IN:g} in: draw them with plot_confusion_pages"
        )
    figures = []
    for number, chunk in enumerate(chunks, start=1):
        page = f"page {number} of {len(chunks)}" if len(chunks) > 1 else ""
        figures.append(
            _confusion_figure(
                frame, chunk, width if len(chunks) == 1 else "two", cols,
                join_title(heading or None, page), (reference, rating, count), levels,
                (reference_label, rating_label), side,
            )
        )  # fmt: skip
    return figures


def _confusion_figure(
    frame: pd.DataFrame,
    panels: list[str],
    width: Width,
    cols: int,
    heading: str,
    names: tuple[str, str, str],
    levels: Sequence[float] | None,
    axis_labels: tuple[str, str],
    side: float,
) -> Figure:
    """One page of confusion panels (see :func:`plot_confusion_grid`)."""
    reference, rating, count = names
    rows = -(-len(panels) // cols)
    with publication_style():
        height = rows * side + (0.3 if heading else 0.05)
        fig, axes = subplots(rows, cols, (figure_size(width)[0], height))
        image = None
        for position, (ax, name) in enumerate(zip(axes, panels, strict=False)):
            subset = frame[frame["_panel"] == name]
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
                annot_kws={"fontsize": MIN_FONT_PT},
            )
            image = ax.collections[0]
            ax.tick_params(length=0, rotation=0)
            ax.set_title(str(name))
            ax.set_xlabel(axis_labels[1])
            ax.set_ylabel(axis_labels[0] if position % cols == 0 else "")
            ax.spines[:].set_visible(False)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        if heading:
            fig.suptitle(heading, x=0.02, ha="left", fontsize=8.5)
        if image is not None:
            bar = fig.colorbar(image, ax=list(axes[: len(panels)]), shrink=0.8, pad=0.02)
            bar.set_label("Share of the human's row")
    return fig


def plot_kappa_forest(
    estimates: pd.DataFrame,
    *,
    label: str | Sequence[str] = "rater_b",
    estimate: str = "estimate",
    low: str = "ci_low",
    high: str = "ci_high",
    colour_by: str | None = None,
    reference_lines: Mapping[float, str] = LANDIS_KOCH,
    xlabel: str = "Cohen's kappa (95% CI)",
    title: str | None = None,
    width: Width | None = None,
) -> Figure:
    """Forest plot: one row per estimate with its confidence interval.

    A label column with the same value in every row (the rubric, judge or variant all rows
    share) is said once in the title instead of in each row label.

    Args:
        estimates: One row per estimate with ``estimate``, ``low`` and ``high`` columns.
        label: Column (or columns, joined with " · ") naming each row, e.g. judge, variant, run.
        estimate: Point estimate column.
        low: Lower confidence bound column.
        high: Upper confidence bound column.
        colour_by: Optional column whose levels get distinct colours and a legend.
        reference_lines: Guide lines and what each marks; default the start of Landis &
            Koch's (1977) "substantial" (0.6) and "almost perfect" (0.8) bands. Empty: none.
        xlabel: X-axis label: what every row's estimate is (say the weighting when all rows
            share one; rows of several weightings name theirs in the row label or legend).
        title: Context of every row (e.g. the variant and run); the shared label values follow.
        width: ``"one"`` or ``"two"`` column figure; default one, two when the longest row
            label would take more than 60 % of one column (the intervals would be squashed
            into what is left).
    """
    label_columns = [label] if isinstance(label, str) else list(label)
    extra = [colour_by] if colour_by else []
    require_columns(estimates, [*label_columns, estimate, low, high, *extra], "plot_kappa_forest")
    frame = estimates.reset_index(drop=True)
    row_columns, context = shared_context(frame, label_columns)
    names = join_labels(frame, row_columns)
    if width is None:
        width = width_for_labels(list(names), figure_size("one")[0])
    colours = categorical_colours(list(pd.unique(frame[colour_by]))) if colour_by else {}
    # The axis label and the title end at the axes' right edge, so both may run over the row
    # labels' column: each is wrapped to the figure's width.
    axis_label = wrap_label(xlabel, figure_size(width)[0] - 0.3)
    heading = wrap_label(join_title(title, context), figure_size(width)[0] - 0.2)
    line_in = 1.25 * MIN_FONT_PT / 72
    with publication_style():
        height = 0.6 + 0.2 * len(frame) + (0.45 if colour_by else 0.0)
        height += line_in * (axis_label.count("\n") + (heading.count("\n") + 1 if heading else 0))
        height += 0.45 if reference_lines else 0.0
        fig, axes = subplots(1, 1, (figure_size(width)[0], height))
        ax = axes[0]
        y = np.arange(len(frame))
        guides = []
        styles = zip(sorted(reference_lines.items()), GUIDE_STYLES, strict=False)
        for (line, meaning), style in styles:
            guide = ax.axvline(line, color="#7a7a7a", linestyle=style, linewidth=0.8, zorder=0)
            guide.set_label(f"{line:g}: {meaning}")
            guides.append(guide)
        keys = list(frame[colour_by]) if colour_by else [None] * len(frame)
        points = zip(y, frame[estimate], frame[low], frame[high], keys, strict=True)
        for position, point, lower, upper, key in points:
            colour = colours.get(key, "#000000")
            ax.plot([lower, upper], [position, position], color=colour, linewidth=1.1)
            ax.plot(point, position, "o", color=colour, markersize=4)
        ax.set_yticks(y, names)
        ax.set_ylim(len(frame) - 0.5, -0.5)
        # Undefined estimates (NaN) keep their row label but draw nothing.
        lows = frame[low].to_numpy(dtype=float)
        finite = lows[np.isfinite(lows)]
        lo = float(finite.min()) if finite.size else 0.0
        ax.set_xlim(min(lo, *reference_lines, 0.0) - 0.05, 1.0)
        ax.set_xlabel(axis_label, loc="right")
        ax.grid(axis="x")
        if heading:
            ax.set_title(heading, loc="right")
        if colour_by:
            handles = [ax.plot([], [], "o-", color=c)[0] for c in colours.values()]
            fig.legend(
                handles,
                [str(k) for k in colours],
                title=colour_by.replace("_", " ").capitalize(),
                loc="outside upper center",
                ncol=min(len(colours), 3),
            )
        if guides:
            source = " (Landis & Koch)" if dict(reference_lines) == LANDIS_KOCH else ""
            fig.legend(
                handles=guides,
                loc="outside lower center",
                ncol=len(guides),
                title=f"Guides{source}",
                handlelength=1.6,
            )
    return fig
