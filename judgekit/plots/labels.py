"""Figures of the human-label workflow: the planner's curve and PPI on a labelled subsample."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from judgekit.plots._common import require_columns, subplots
from judgekit.plots.style import categorical_colours, figure_size, publication_style

#: How the estimators are named on the figures.
ESTIMATOR_LABELS: dict[str, str] = {
    "ppi": "PPI (judge + labels)",
    "judge_only": "judge only",
    "human_only": "labels only",
}


#: Judges on the coverage panel are told apart by grey shades, so no colour of the estimators
#: (left panel) means a judge there.
JUDGE_SHADES: tuple[str, ...] = ("#303030", "#8c8c8c", "#c8c8c8", "#5e5e5e", "#b0b0b0")


def plot_ppi_study(
    intervals: pd.DataFrame, coverage: pd.DataFrame, *, group: str = "model"
) -> Figure:
    """Left: one subsample's three intervals per group beside the truth; right: PPI's coverage.

    The estimators keep their colours in the whole figure; the coverage panel shows PPI only,
    in PPI's colour family, and tells the judges apart by grey shades.

    Args:
        intervals: One subsample of :func:`~judgekit.stats.ppi_coverage` (one judge):
            ``group, estimator, estimate, ci_low, ci_high, truth``.
        coverage: :func:`~judgekit.stats.coverage_summary` rows of the PPI estimator
            with a ``judge`` column: ``judge, group, coverage``.
        group: The group column (answering model).
    """
    require_columns(intervals, [group, "estimator", "estimate", "ci_low", "ci_high", "truth"], "")
    require_columns(coverage, ["judge", group, "coverage"], "coverage table")
    with publication_style():
        fig, (left, right) = subplots(1, 2, figure_size("two", aspect=0.42))
        groups = sorted(intervals[group].unique())
        colours = categorical_colours(list(ESTIMATOR_LABELS))
        for g_index, name in enumerate(groups):
            rows = intervals[intervals[group] == name].set_index("estimator")
            for e_index, estimator in enumerate(ESTIMATOR_LABELS):
                row = rows.loc[estimator]
                y = g_index + (e_index - 1) * 0.22
                left.plot([row["ci_low"], row["ci_high"]], [y, y], color=colours[estimator])
                left.plot(
                    row["estimate"],
                    y,
                    "o",
                    color=colours[estimator],
                    ms=3.5,
                    label=ESTIMATOR_LABELS[estimator] if g_index == 0 else None,
                )
            truth = rows["truth"].iloc[0]
            left.plot(
                [truth, truth],
                [g_index - 0.35, g_index + 0.35],
                "k:",
                lw=1,
                label="mean of all labels" if g_index == 0 else None,
            )
        left.set_yticks(range(len(groups)), groups)
        left.set_ylim(len(groups) - 0.5, -0.5)
        left.set_xlabel("Mean human score (95% CI, one subsample)")
        left.set_title("Intervals of one labelled subsample")
        judges = sorted(coverage["judge"].unique())
        shades = {j: JUDGE_SHADES[i % len(JUDGE_SHADES)] for i, j in enumerate(judges)}
        width = 0.8 / max(len(judges), 1)
        for j_index, judge in enumerate(judges):
            part = coverage[coverage["judge"] == judge].set_index(group).reindex(groups)
            positions = [i + (j_index - (len(judges) - 1) / 2) * width for i in range(len(groups))]
            right.bar(
                positions,
                part["coverage"],
                width,
                color=shades[judge],
                edgecolor=colours["ppi"],
                linewidth=1.0,
                label=f"judge {judge}",
            )
        right.axhspan(0.90, 0.98, color="0.92", zorder=0, label="0.90-0.98")
        right.axhline(0.95, color="k", lw=0.8, ls=":", label="nominal 0.95")
        right.set_ylim(0.8, 1.0)
        right.set_xticks(range(len(groups)), groups)
        right.set_ylabel("Share of subsamples covered")
        right.set_title(f"Coverage of the {ESTIMATOR_LABELS['ppi']} interval")
        (left_handles, left_labels), (right_handles, right_labels) = (
            ax.get_legend_handles_labels() for ax in (left, right)
        )
        fig.legend(
            [*left_handles, *right_handles],
            [*left_labels, *right_labels],
            loc="outside lower center",
            ncols=4,
        )
    return fig


def plot_planner(precision: pd.DataFrame, *, chosen: int) -> Figure:
    """Predicted kappa interval half-width against the number of labels, the choice marked."""
    require_columns(precision, ["n", "half_width"], "planner table")
    with publication_style():
        fig, (axis,) = subplots(1, 1, figure_size("one", aspect=0.62))
        axis.plot(precision["n"], precision["half_width"], "o-", color="0.2", ms=3)
        picked = precision[precision["n"] == chosen]
        axis.plot(
            picked["n"], picked["half_width"], "o", color="#D55E00", ms=6, label=f"chosen: {chosen}"
        )
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_xlabel("Labelled items")
        axis.set_ylabel("Predicted half-width of\nthe kappa 95% CI")
        axis.legend(loc="upper right")
        axis.grid(axis="y")
    return fig
