"""The confusion table of two raters: tidy (one row per pair of levels) and wide."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, ScaleLike, level_codes, paired_scores


def confusion_table(
    df: pd.DataFrame,
    rater_a: object,
    rater_b: object,
    *,
    scale: ScaleLike = None,
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Tidy confusion table: one row per (level_a, level_b) in scale order, unused cells included.

    Returns:
        Columns level_a, level_b, count, share (of paired items), n, n_dropped, dropped_reason.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> table = confusion_table(long, "judge", "human", scale=(1, 2, 3, 4))
        >>> print(table[table["count"] > 0][["level_a", "level_b", "count"]].to_string(index=False))
         level_a  level_b  count
             1.0      1.0      2
             1.0      2.0      1
             2.0      2.0      3
             3.0      3.0      2
             3.0      4.0      1
             4.0      3.0      1
             4.0      4.0      2
    """
    joined = paired_scores(df, rater_a, rater_b, scale, columns)
    pairs, levels = joined.pairs, joined.levels
    k = len(levels)
    cells = np.bincount(
        level_codes(pairs.a, levels) * k + level_codes(pairs.b, levels), minlength=k * k
    )
    n = int(cells.sum())
    return pd.DataFrame(
        {
            "level_a": np.repeat(levels, k),
            "level_b": np.tile(levels, k),
            "count": cells,
            "share": cells / n if n else np.nan,
            "n": n,
            "n_dropped": pairs.n_dropped,
            "dropped_reason": pairs.dropped_reason,
        }
    )


def confusion_wide(tidy: pd.DataFrame, rater_a: str = "a", rater_b: str = "b") -> pd.DataFrame:
    """Pivot a :func:`confusion_table`: rows are ``rater_a`` levels, columns ``rater_b`` levels.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> print(confusion_wide(confusion_table(long, "judge", "human"), "judge", "human"))
        human  1.0  2.0  3.0  4.0
        judge
        1.0      2    1    0    0
        2.0      0    3    0    0
        3.0      0    0    2    1
        4.0      0    0    1    2
    """
    levels = list(pd.unique(tidy["level_a"]))
    wide = tidy.pivot(index="level_a", columns="level_b", values="count")
    wide = wide.reindex(index=levels, columns=levels)
    wide.index.name, wide.columns.name = rater_a, rater_b
    return wide
