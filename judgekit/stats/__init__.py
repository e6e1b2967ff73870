"""Agreement, reliability and bias statistics for judge validation.

Inputs are long tables (one row per item, rater and score; statuses optional); outputs are tidy
tables with ``estimate``, ``ci_low``, ``ci_high``, ``n``, ``method`` and, where rows were set
aside, ``n_dropped`` / ``dropped_reason``. Bootstraps take an explicit seed.
"""

from judgekit.stats.agreement import (
    agreement_rates,
    cohen_kappa,
    confusion_table,
    confusion_wide,
    disagreement_weights,
    kappa_from_pairs,
    kappa_matrix,
    pairwise_kappa,
)
from judgekit.stats.bias import length_bias, self_preference
from judgekit.stats.correlation import correlation, correlation_from_pairs
from judgekit.stats.coverage import Coverage, score_coverage
from judgekit.stats.multirater import fleiss_kappa, gwet_ac, krippendorff_alpha
from judgekit.stats.position import (
    batch_run_summary,
    leniency_drift_verdict,
    position_effects,
    position_profile,
)
from judgekit.stats.reliability import (
    ParaphraseSensitivity,
    RunConsistency,
    human_agreement,
    paraphrase_sensitivity,
    run_consistency,
)
from judgekit.stats.seed004 import seed004_report
from judgekit.stats.status import status_summary
from judgekit.stats.study import (
    composite_score,
    grammar_auto_zero,
    hallucination_rate,
    idk_rate,
    topic_difficulty,
    two_group_comparison,
    value_rate,
)

__all__ = [
    "Coverage",
    "ParaphraseSensitivity",
    "RunConsistency",
    "agreement_rates",
    "batch_run_summary",
    "cohen_kappa",
    "composite_score",
    "confusion_table",
    "confusion_wide",
    "correlation",
    "correlation_from_pairs",
    "disagreement_weights",
    "fleiss_kappa",
    "grammar_auto_zero",
    "gwet_ac",
    "hallucination_rate",
    "human_agreement",
    "idk_rate",
    "kappa_from_pairs",
    "kappa_matrix",
    "krippendorff_alpha",
    "length_bias",
    "leniency_drift_verdict",
    "pairwise_kappa",
    "paraphrase_sensitivity",
    "position_effects",
    "position_profile",
    "run_consistency",
    "score_coverage",
    "seed004_report",
    "self_preference",
    "status_summary",
    "topic_difficulty",
    "two_group_comparison",
    "value_rate",
]
