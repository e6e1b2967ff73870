"""Plots of a judge panel: judge x judge matrices and agreement against cost for every subset."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from judgekit.plots._common import require_columns, subplots, wrap_label
from judgekit.plots.style import (
    MIN_FONT_PT,
    OKABE_ITO,
    Width,
    figure_size,
    panel_grid,
    publication_style,
)


def _square(
    pairs: pd.DataFrame, row: str, column: str, value: str, names: list[object]
) -> pd.DataFrame:
    """Symmetric judge x judge matrix of a tidy pair table (NaN where a pair is missing)."""
    matrix = pd.DataFrame(np.nan, index=names, columns=names)
    for a, b, v in pairs[[row, column, value]].itertuples(index=False):
        matrix.loc[a, b] = matrix.loc[b, a] = v
    return matrix


def _short(subset: str, judges: Sequence[str], longest: int = 12) -> str:
    """A subset's label: judges joined by "+", each cut to 3 letters when the whole is long.

    Judges whose three letters clash (``simulator:judge-one``, ``simulator:judge-two``) are
    cut to their shortest distinct ending instead.
    """
    names = subset.split(" + ")
    if len(subset) <= longest:
        return subset
    short = {name: name[:3] for name in judges}
    if len(set(short.values())) < len(short):
        short = {name: _distinct_tail(name, judges) for name in judges}
    return "+".join(short.get(name, name) for name in names)


def _distinct_tail(name: str, judges: Sequence[str]) -> str:
    """The shortest ending of ``name`` (from a ``-``, ``:`` or ``_`` on) no other judge has."""
    for cut in range(len(name) - 1, -1, -1):
        if cut == 0 or name[cut - 1] in "-:_ ":
            tail = name[cut:]
            if not any(other != name and other.endswith(tail) for other in judges):
                return tail
    return name


def _cost_text(value: float) -> str:
    """A cost for the title: whole numbers as they are, others to three significant digits."""
    return f"{value:g}" if float(value).is_integer() else f"{value:.3g}"


def plot_pair_matrix(
    pairs: pd.DataFrame,
    *,
    row: str = "rater_a",
    column: str = "rater_b",
    value: str = "estimate",
    panel: str | None = None,
    order: Sequence[object] | None = None,
    limits: tuple[float, float] = (0.0, 1.0),
    cmap: str = "cividis",
    colour_label: str = "Weighted kappa",
    width: Width = "two",
) -> Figure:
    """Judge x judge heatmaps of a pairwise statistic, one panel per ``panel`` value.

    The colour limits are fixed (``limits``), not fitted to the data, so panels and figures
    compare at a glance; a value outside them takes the end colour and keeps its printed
    number. Missing pairs and the diagonal (a judge with itself) stay blank.

    Args:
        pairs: One row per judge pair (``row``, ``column``, ``value``; ``panel`` optional).
        row: Column of the first judge.
        column: Column of the second judge.
        value: The statistic (kappa, error correlation).
        panel: Optional column of small multiples (e.g. the rubric dimension).
        order: Judge order; default order of appearance.
        limits: Colour range.
        cmap: Colour map (``cividis`` for agreement; a diverging one for correlations).
        colour_label: Colour bar label.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(pairs, [row, column, value, *([panel] if panel else [])], "plot_pair_matrix")
    names = (
        list(order)
        if order is not None
        else list(pd.unique(pd.concat([pairs[row], pairs[column]])))
    )
    panels = list(pd.unique(pairs[panel])) if panel else [None]
    rows, cols = panel_grid(len(panels), max_columns=3)
    with publication_style():
        side = figure_size(width)[0] / cols
        fig, axes = subplots(rows, cols, (figure_size(width)[0], side * rows * 0.95 + 0.3))
        for ax, name in zip(axes, panels, strict=False):
            chosen = pairs if name is None else pairs[pairs[panel] == name]
            values = _square(chosen, row, column, value, names).to_numpy(float, copy=True)
            np.fill_diagonal(values, np.nan)
            sns.heatmap(
                pd.DataFrame(values, index=names, columns=names), ax=ax, cmap=cmap,
                vmin=limits[0], vmax=limits[1], annot=True, fmt=".2f",
                annot_kws={"fontsize": MIN_FONT_PT}, cbar=False, square=True,
            )  # fmt: skip
            ax.tick_params(length=0)
            labels = [str(n) for n in names]
            ax.set_xticks(np.arange(len(names)) + 0.5, labels, rotation=30, ha="right")
            ax.set_yticks(np.arange(len(names)) + 0.5, labels, rotation=0)
            ax.set_xlabel("")
            ax.set_ylabel("")
            if name is not None:
                ax.set_title(str(name))
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        bar = fig.colorbar(axes[0].collections[0], ax=list(axes[: len(panels)]), shrink=0.8)
        bar.set_label(colour_label)
    return fig


def plot_subset_costs(
    subsets: pd.DataFrame,
    *,
    cost: str = "cost",
    estimate: str = "estimate",
    low: str = "ci_low",
    high: str = "ci_high",
    label: str = "subset",
    pareto: str = "pareto",
    coverage: str = "coverage",
    min_coverage: float = 0.95,
    panel: str | None = None,
    cost_label: str = "Cost (judges asked per item)",
    ylabel: str = "Weighted kappa with the human (95% CI)",
    width: Width = "two",
) -> Figure:
    """Agreement against cost for every subset of the panel, the Pareto front joined and named.

    Filled dots: subsets whose jury scored at least ``min_coverage`` of the items; hollow: the
    others (their kappa is over the items their judges agreed on, so they are not compared).
    The front's subsets are vermillion, joined by a step line and named in the panel's title
    by their cost (a long name shortens each judge to three letters).

    Args:
        subsets: :func:`~judgekit.stats.panel_subsets` rows (``panel`` optional).
        cost: Cost column.
        estimate: Agreement column.
        low: Lower bound column.
        high: Upper bound column.
        label: Subset name column.
        pareto: Boolean column, True on the front.
        coverage: Share of items scored.
        min_coverage: Coverage a subset needs to be drawn filled.
        panel: Optional column of small multiples.
        cost_label: X-axis label (say the unit).
        ylabel: Y-axis label.
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(
        subsets, [cost, estimate, low, high, label, pareto, coverage], "plot_subset_costs"
    )
    panels = list(pd.unique(subsets[panel])) if panel else [None]
    judges = list(dict.fromkeys(j for s in subsets[label].astype(str) for j in s.split(" + ")))
    rows, cols = panel_grid(len(panels), max_columns=3)
    with publication_style():
        fig, axes = subplots(rows, cols, figure_size(width, aspect=0.36 * rows))
        for ax, name in zip(axes, panels, strict=False):
            frame = subsets if name is None else subsets[subsets[panel] == name]
            frame = frame.sort_values([cost, estimate])
            on_front = frame[pareto].astype(bool).to_numpy()
            full = (frame[coverage] >= min_coverage).to_numpy()
            jitter = (
                frame.groupby(cost).cumcount()
                - frame.groupby(cost)[cost].transform("size") / 2
                + 0.5
            ) * 0.06
            x = frame[cost].to_numpy(float) + jitter.to_numpy(float)
            y = frame[estimate].to_numpy(float)
            colour = np.where(on_front, OKABE_ITO[4], "#4d4d4d")
            ax.vlines(x, frame[low], frame[high], colors=list(colour), linewidth=0.8)
            for filled in (True, False):
                chosen = full == filled
                ax.scatter(
                    x[chosen], y[chosen], s=16, zorder=3, linewidths=0.9,
                    facecolors=colour[chosen] if filled else "white", edgecolors=colour[chosen],
                )  # fmt: skip
            front = frame[on_front]
            ax.step(front[cost], front[estimate], where="post", color=OKABE_ITO[4], linewidth=0.8)
            # One front subset per cost at most, so the title names each by its cost: labels
            # beside the points would cover the other subsets' intervals.
            named = ", ".join(
                f"{_short(str(t), judges)} ({_cost_text(c)})"
                for c, t in zip(front[cost], front[label], strict=True)
            )
            ax.margins(x=0.15)
            costs = sorted(set(frame[cost]))
            if all(float(c).is_integer() for c in costs) and len(costs) <= 8:
                ax.set_xticks(costs)  # judges asked per item: every count is a tick
            else:  # measured costs (tokens): a few round ticks, never one per subset
                start, end = ax.get_xlim()  # only ticks in view: none hidden under a neighbour
                ticks = MaxNLocator(nbins=4).tick_values(start, end)
                ax.set_xticks([t for t in ticks if start <= t <= end])
            ax.grid(axis="y")
            front_line = wrap_label(f"front (cost): {named}", figure_size(width)[0] / cols - 0.4)
            ax.set_title(front_line if name is None else f"{name}\n{front_line}")
        axes[0].set_ylabel(wrap_label(ylabel, 2.2))
        fig.supxlabel(cost_label)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        key = [
            Line2D([], [], color=OKABE_ITO[4], marker="o", label="Pareto front"),
            Line2D([], [], color="#4d4d4d", marker="o", ls="", label="other subsets"),
            Line2D([], [], color="#4d4d4d", marker="o", ls="", markerfacecolor="white",
                   label=f"scores < {min_coverage:.0%} of items (not compared)"),
        ]  # fmt: skip
        fig.legend(handles=key, loc="outside upper center", ncols=3)
    return fig
