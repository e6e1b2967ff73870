"""Agreement, reliability and bias statistics for judge validation.

Inputs are long tables (one row per item, rater and score; statuses optional) read through one
:class:`Columns` spec; outputs are tidy tables with ``estimate``, ``ci_low``, ``ci_high``,
``n``, ``method``, ``note`` (why a figure is undefined or its interval not shown) and, where
rows were set aside, ``n_dropped`` / ``dropped_reason``. An interval is asked for with one
:class:`CI` (method, level, replicates, seed); bootstraps take an explicit seed and resample
whole clusters when ``Columns.cluster`` is set.

Modules by kind: estimators (:mod:`.agreement`, :mod:`.multirater`, :mod:`.correlation`,
:mod:`.coverage`, :mod:`.consistency`, :mod:`.bias`, :mod:`.position`, :mod:`.run_summary`),
judge panels (:mod:`.panel`, :mod:`.jury`, :mod:`.jury_models`, :mod:`.jury_compare`,
:mod:`.bias_panel`),
human labels (:mod:`.ppi`: prediction-powered means; :mod:`.planner`: how many labels a kappa
interval needs),
tests and their families (:mod:`.significance`), and seed 004's validation protocol
(:mod:`.protocol`).
"""

from judgekit.stats._bootstrap import CI
from judgekit.stats._intervals import share_interval, t_ci, wilson_ci
from judgekit.stats._prep import Columns
from judgekit.stats.agreement import (
    agreement_rates,
    cohen_kappa,
    disagreement_weights,
    kappa_from_pairs,
    kappa_matrix,
    pairwise_kappa,
)
from judgekit.stats.bias import length_bias, self_preference
from judgekit.stats.bias_panel import panel_self_preference
from judgekit.stats.confusion import confusion_table, confusion_wide
from judgekit.stats.consistency import (
    ParaphraseSensitivity,
    RunConsistency,
    paraphrase_sensitivity,
    run_consistency,
)
from judgekit.stats.correlation import correlation, correlation_from_pairs
from judgekit.stats.coverage import Coverage, score_coverage
from judgekit.stats.inter_human import icc_absolute, inter_human_agreement
from judgekit.stats.jury import jury_scores, with_juries
from judgekit.stats.jury_compare import jury_vs_best, panel_subsets, pareto_front
from judgekit.stats.jury_models import cross_fitted_weights, dawid_skene
from judgekit.stats.meta_correlation import meta_correlation
from judgekit.stats.multirater import fleiss_kappa, gwet_ac, krippendorff_alpha
from judgekit.stats.pairwise import (
    first_position_win_rate,
    human_agreement_s1_s2,
    outcome_shares,
    position_consistency,
    rater_kappas,
    verdict_accuracy,
    verdict_kappa,
)
from judgekit.stats.pairwise_length import length_controlled_win_rate, longer_answer_win_rate
from judgekit.stats.pairwise_ranking import bradley_terry, win_rate_vs_baseline
from judgekit.stats.panel import (
    effective_judges,
    error_correlation,
    panel_agreement,
    versus_human,
)
from judgekit.stats.planner import observed_kappa_halfwidth, plan_kappa_halfwidth
from judgekit.stats.position import (
    leniency_drift_verdict,
    position_effects,
    position_profile,
)
from judgekit.stats.ppi import corrected_means, coverage_summary, ppi_coverage
from judgekit.stats.protocol import human_agreement, seed004_report
from judgekit.stats.regression import clustered_ols, ols_term
from judgekit.stats.run_summary import batch_run_summary
from judgekit.stats.significance import adjust_p, permutation_within_clusters
from judgekit.stats.status import status_summary

__all__ = [
    "CI",
    "Columns",
    "Coverage",
    "ParaphraseSensitivity",
    "RunConsistency",
    "adjust_p",
    "agreement_rates",
    "batch_run_summary",
    "bradley_terry",
    "clustered_ols",
    "cohen_kappa",
    "confusion_table",
    "confusion_wide",
    "corrected_means",
    "correlation",
    "correlation_from_pairs",
    "coverage_summary",
    "cross_fitted_weights",
    "dawid_skene",
    "disagreement_weights",
    "effective_judges",
    "error_correlation",
    "first_position_win_rate",
    "fleiss_kappa",
    "gwet_ac",
    "human_agreement",
    "human_agreement_s1_s2",
    "icc_absolute",
    "inter_human_agreement",
    "jury_scores",
    "jury_vs_best",
    "kappa_from_pairs",
    "kappa_matrix",
    "krippendorff_alpha",
    "length_bias",
    "length_controlled_win_rate",
    "leniency_drift_verdict",
    "longer_answer_win_rate",
    "meta_correlation",
    "observed_kappa_halfwidth",
    "ols_term",
    "outcome_shares",
    "pairwise_kappa",
    "panel_agreement",
    "panel_self_preference",
    "panel_subsets",
    "paraphrase_sensitivity",
    "pareto_front",
    "permutation_within_clusters",
    "plan_kappa_halfwidth",
    "position_consistency",
    "position_effects",
    "position_profile",
    "ppi_coverage",
    "rater_kappas",
    "run_consistency",
    "score_coverage",
    "seed004_report",
    "self_preference",
    "share_interval",
    "status_summary",
    "t_ci",
    "verdict_accuracy",
    "verdict_kappa",
    "versus_human",
    "wilson_ci",
    "win_rate_vs_baseline",
    "with_juries",
]
