"""Figures of the human-label workflow: the planner's curve and PPI on a labelled subsample."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from judgekit.plots._common import require_columns, subplots
from judgekit.plots.style import categorical_colours, figure_size, publication_style

#: How the estimators are named on the figures.
ESTIMATOR_LABELS: dict[str, str] = {
    "ppi": "PPI (judge + labels)",
    "judge_only": "judge only",
    "human_only": "labels only",
}


def plot_ppi_study(
    intervals: pd.DataFrame, coverage: pd.DataFrame, *, group: str = "model"
) -> Figure:
    """Left: one subsample's three intervals per group beside the truth; right: coverage.

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
        fig, (left, right) = subplots(1, 2, figure_size("two", aspect=0.38))
        groups = sorted(intervals[group].unique())
        colours = categorical_colours(list(ESTIMATOR_LABELS))
        for g_index, name in enumerate(groups):
            rows = intervals[intervals[group] == name].set_index("estimator")
            for e_index, estimator in enumerate(ESTIMATOR_LABELS):
                row = rows.loc[estimator]
                y = g_index + (1 - e_index) * 0.22
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
            left.plot([truth, truth], [g_index - 0.35, g_index + 0.35], "k:", lw=1)
        left.set_yticks(range(len(groups)), groups)
        left.set_xlabel("mean human score (dotted: all 600 labels)")
        left.legend(loc="lower left", fontsize="small")
        judges = sorted(coverage["judge"].unique())
        judge_colours = categorical_colours(judges)
        width = 0.8 / max(len(judges), 1)
        for j_index, judge in enumerate(judges):
            part = coverage[coverage["judge"] == judge].set_index(group).reindex(groups)
            positions = [i + (j_index - (len(judges) - 1) / 2) * width for i in range(len(groups))]
            right.bar(positions, part["coverage"], width, color=judge_colours[judge], label=judge)
        right.axhspan(0.90, 0.98, color="0.85", zorder=0)
        right.axhline(0.95, color="k", lw=0.8, ls=":")
        right.set_ylim(0.8, 1.0)
        right.set_xticks(range(len(groups)), groups)
        right.set_ylabel("PPI interval covers the truth")
        right.legend(
            fontsize="small", ncols=len(judges), loc="lower center", bbox_to_anchor=(0.5, 1.0)
        )
    return fig


def plot_planner(precision: pd.DataFrame, *, chosen: int) -> Figure:
    """Predicted kappa interval half-width against the number of labels, the choice marked."""
    require_columns(precision, ["n", "half_width"], "planner table")
    with publication_style():
        fig, (axis,) = subplots(1, 1, figure_size("one", aspect=0.6))
        axis.plot(precision["n"], precision["half_width"], "o-", color="0.2", ms=3)
        picked = precision[precision["n"] == chosen]
        axis.plot(picked["n"], picked["half_width"], "o", color="#D55E00", ms=6)
        axis.set_xlabel("labelled items")
        axis.set_ylabel("predicted ± of the kappa 95% CI")
    return fig
