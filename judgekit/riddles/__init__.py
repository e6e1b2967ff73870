"""The Hungarian riddles study: its loaders and its summary measures, side by side.

The study (Boczka's Hungarian Riddles Benchmark, see ``data/README.md``) has its own file
layouts and its own summaries (composite score, hallucination rate, topic difficulty, the
grammar auto-0 rule), so they live here rather than among the general loaders and statistics.
"""

from judgekit.riddles.data import (
    RATER_ORDER,
    RIDDLE_LABEL_SCALES,
    V1_COLUMNS,
    V1_LABEL_MAPS,
    V1_MODEL_NAMES,
    V2_LONG_COLUMNS,
    load_riddles_v1,
    load_riddles_v2_scores,
    off_scale_labels,
    riddles_v2_wide,
)
from judgekit.riddles.study import (
    composite_score,
    grammar_auto_zero,
    grammar_rule_status,
    topic_difficulty,
    two_group_comparison,
    value_rate,
)

__all__ = [
    "RATER_ORDER",
    "RIDDLE_LABEL_SCALES",
    "V1_COLUMNS",
    "V1_LABEL_MAPS",
    "V1_MODEL_NAMES",
    "V2_LONG_COLUMNS",
    "composite_score",
    "grammar_auto_zero",
    "grammar_rule_status",
    "load_riddles_v1",
    "load_riddles_v2_scores",
    "off_scale_labels",
    "riddles_v2_wide",
    "topic_difficulty",
    "two_group_comparison",
    "value_rate",
]
