"""Publication figures for judgekit: one style, colour-blind-safe, saved as PDF and PNG.

Every plot function takes a tidy :class:`pandas.DataFrame` (the shape the ``judgekit.stats``
functions return), names its columns through keyword arguments, and returns a matplotlib
:class:`~matplotlib.figure.Figure` that :func:`save_figure` writes to disk.
"""

from judgekit.plots.agreement import (
    plot_confusion_grid,
    plot_confusion_pages,
    plot_kappa_forest,
    plot_score_distributions,
)
from judgekit.plots.bias import plot_self_bias
from judgekit.plots.labels import plot_planner, plot_ppi_study
from judgekit.plots.pairwise import plot_outcome_shares, plot_strength_forest
from judgekit.plots.panel import plot_pair_matrix, plot_subset_costs
from judgekit.plots.position import plot_batch_size, plot_position_effect
from judgekit.plots.reliability import plot_consistency, plot_paraphrase_matrix
from judgekit.plots.save import figure_name, save_figure, save_pages
from judgekit.plots.study import plot_grouped_bars, plot_ranked_dots
from judgekit.plots.style import (
    OKABE_ITO,
    ONE_COLUMN_IN,
    TWO_COLUMN_IN,
    apply_style,
    figure_size,
    publication_style,
)

__all__ = [
    "OKABE_ITO",
    "ONE_COLUMN_IN",
    "TWO_COLUMN_IN",
    "apply_style",
    "figure_name",
    "figure_size",
    "plot_batch_size",
    "plot_confusion_grid",
    "plot_confusion_pages",
    "plot_consistency",
    "plot_grouped_bars",
    "plot_kappa_forest",
    "plot_outcome_shares",
    "plot_pair_matrix",
    "plot_paraphrase_matrix",
    "plot_planner",
    "plot_position_effect",
    "plot_ppi_study",
    "plot_ranked_dots",
    "plot_score_distributions",
    "plot_self_bias",
    "plot_strength_forest",
    "plot_subset_costs",
    "publication_style",
    "save_figure",
    "save_pages",
]
