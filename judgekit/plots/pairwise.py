"""Pairwise figures: the per-pair outcome shares and the Bradley-Terry forest."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from judgekit.plots._common import CHAR_IN, require_columns, subplots, width_for_labels, wrap_label
from judgekit.plots.style import categorical_colours, figure_size, publication_style

#: The outcomes in the order stacked (kept apart: none is folded into another).
OUTCOME_ORDER = ("consistent_win", "consistent_tie", "inconsistent", "one_unparsed",
                 "both_unparsed", "one_order")  # fmt: skip


def _legend_columns(entries: list[str], width_in: float, most: int) -> int:
    """As many legend columns as fit the figure's width (at most ``most``)."""
    for columns in range(min(most, len(entries)), 1, -1):
        widest = max(len(e) for e in entries) + 6
        if widest * columns * CHAR_IN <= width_in:
            return columns
    return 1


def _labels(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    return [" · ".join(str(v) for v in row) for row in frame[columns].itertuples(index=False)]


def plot_outcome_shares(
    shares: pd.DataFrame, *, group: tuple[str, ...] = ("judge", "variant", "run")
) -> Figure:
    """Stacked bars of each per-pair outcome's share, one bar per judge x variant x run.

    Args:
        shares: :func:`judgekit.stats.outcome_shares` (``outcome``, ``estimate`` and ``group``).
        group: The columns naming a bar.
    """
    columns = [c for c in group if c in shares.columns]
    require_columns(shares, [*columns, "outcome", "estimate"], "plot_outcome_shares")
    wide = shares.pivot_table(index=columns, columns="outcome", values="estimate", sort=True)
    present = [o for o in OUTCOME_ORDER if o in wide.columns and wide[o].fillna(0).gt(0).any()]
    bars = _labels(wide.reset_index(), columns)
    width = width_for_labels(bars, figure_size("one")[0])
    colours = categorical_colours(present)
    with publication_style():
        height = (1.2 + 0.3 * len(bars)) / figure_size(width)[0]
        fig, axes = subplots(1, 1, figure_size(width, aspect=height))
        ax, left = axes[0], np.zeros(len(bars))
        for outcome in present:
            values = wide[outcome].fillna(0).to_numpy()
            label = outcome.replace("_", " ")
            ax.barh(range(len(bars)), values, left=left, color=colours[outcome], label=label)
            left += values
        ax.set_yticks(range(len(bars)), bars)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("Share of pairs (judge · variant · run)", loc="right")
        names = [o.replace("_", " ") for o in present]
        ncol = _legend_columns(names, figure_size(width)[0], 3)
        fig.legend(loc="outside upper center", ncol=ncol)
    return fig


def plot_strength_forest(
    ranking: pd.DataFrame, *, rater: str = "judge", level: float = 0.95
) -> Figure:
    """Bradley-Terry strengths with their intervals, one row per model, one colour per rater.

    Args:
        ranking: :func:`judgekit.stats.bradley_terry` rows (``model``, ``strength``, ``ci_low``,
            ``ci_high``) with a ``rater`` column (a judge, or ``human``).
        rater: The column whose values are dodged and coloured.
        level: The interval level, printed in the axis label.
    """
    require_columns(ranking, ["model", "strength", "ci_low", "ci_high", rater], "strength forest")
    order = ranking.groupby("model")["strength"].mean().sort_values(ascending=False)
    models, raters = list(order.index), list(pd.unique(ranking[rater]))
    width = width_for_labels(models, figure_size("one")[0])
    colours, step = categorical_colours(raters), 0.5 / max(len(raters), 1)
    with publication_style():
        height = (0.9 + 0.32 * len(models) * max(1, len(raters) / 2)) / figure_size(width)[0]
        fig, axes = subplots(1, 1, figure_size(width, aspect=height))
        ax = axes[0]
        ax.axvline(0, color="#6f6f6f", linewidth=0.7, zorder=0)
        for k, name in enumerate(raters):
            rows = ranking[ranking[rater] == name].set_index("model").reindex(models)
            y = np.arange(len(models)) + (k - (len(raters) - 1) / 2) * step
            point = rows["strength"]
            errors = np.vstack([point - rows["ci_low"], rows["ci_high"] - point])
            ax.errorbar(
                point,
                y,
                xerr=np.nan_to_num(errors),
                fmt="o",
                capsize=2,
                color=colours[name],
                elinewidth=1.0,
                markersize=4,
                label=str(name),
            )
        ax.set_yticks(range(len(models)), models)
        ax.invert_yaxis()
        label = f"Bradley-Terry strength (log-odds, {level:.0%} CI)"
        ax.set_xlabel(wrap_label(label, figure_size(width)[0] - 0.3), loc="right")
        ax.grid(axis="x")
        ncol = _legend_columns([str(r) for r in raters], figure_size(width)[0], 4)
        fig.legend(loc="outside upper center", ncol=ncol)
    return fig


__all__ = ["plot_outcome_shares", "plot_strength_forest"]
