r"""Agreement among human raters, reported beside the judge-vs-human correlations.

Krippendorff's alpha (interval and ordinal; :func:`judgekit.stats.multirater.krippendorff_alpha`)
takes every item with two or more ratings. The intraclass correlations are McGraw & Wong's
(1996, Psychological Methods 1, 30-46) two-way random-effects, absolute-agreement ICC(A,1) and
ICC(A,k) (Shrout & Fleiss 1979's ICC(2,1), ICC(2,k)) on the items every rater scored:

.. math::

    \mathrm{ICC}(A,1) = \frac{MS_R - MS_E}{MS_R + (k-1) MS_E + \frac{k}{n}(MS_C - MS_E)},
    \qquad
    \mathrm{ICC}(A,k) = \frac{MS_R - MS_E}{MS_R + \frac{MS_C - MS_E}{n}}

with :math:`MS_R, MS_C, MS_E` the mean squares of items, raters and error of the two-way
table (:math:`n` items, :math:`k` raters), and McGraw & Wong's F-based interval (Satterthwaite
degrees of freedom :math:`v`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.stats._bootstrap import CI
from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, FloatArray
from judgekit.stats.multirater import krippendorff_alpha


def icc_absolute(ratings: FloatArray, level: float = 0.95) -> dict[str, dict[str, float]]:
    """ICC(A,1) and ICC(A,k) of an ``(n items, k raters)`` table without gaps, with intervals.

    Examples:
        >>> table = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6],
        ...                   [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)
        >>> out = icc_absolute(table)  # Shrout & Fleiss (1979), Table 2: 0.29 and 0.62
        >>> round(out["ICC(A,1)"]["estimate"], 3), round(out["ICC(A,k)"]["estimate"], 3)
        (0.29, 0.62)
    """
    n, k = ratings.shape
    grand = ratings.mean()
    ms_r = k * ((ratings.mean(1) - grand) ** 2).sum() / (n - 1)
    ms_c = n * ((ratings.mean(0) - grand) ** 2).sum() / (k - 1)
    resid = ratings - ratings.mean(1, keepdims=True) - ratings.mean(0, keepdims=True) + grand
    ms_e = (resid**2).sum() / ((n - 1) * (k - 1))
    single = (ms_r - ms_e) / (ms_r + (k - 1) * ms_e + k * (ms_c - ms_e) / n)
    average = (ms_r - ms_e) / (ms_r + (ms_c - ms_e) / n)
    alpha = 1 - level
    a, b = k * single / (n * (1 - single)), 1 + k * single * (n - 1) / (n * (1 - single))
    v = (a * ms_c + b * ms_e) ** 2 / (
        (a * ms_c) ** 2 / (k - 1) + (b * ms_e) ** 2 / ((n - 1) * (k - 1))
    )
    f_hi, f_lo = stats.f.ppf(1 - alpha / 2, n - 1, v), stats.f.ppf(1 - alpha / 2, v, n - 1)
    low = n * (ms_r - f_hi * ms_e) / (f_hi * (k * ms_c + (k * n - k - n) * ms_e) + n * ms_r)
    high = n * (f_lo * ms_r - ms_e) / (k * ms_c + (k * n - k - n) * ms_e + n * f_lo * ms_r)
    spread = lambda r: r * k / (1 + r * (k - 1))  # noqa: E731  (Spearman-Brown to k raters)
    return {
        "ICC(A,1)": {"estimate": float(single), "ci_low": float(low), "ci_high": float(high)},
        "ICC(A,k)": {
            "estimate": float(average),
            "ci_low": float(spread(low)),
            "ci_high": float(spread(high)),
        },
    }


def inter_human_agreement(
    df: pd.DataFrame,
    humans: Sequence[object],
    *,
    ci: CI = CI("percentile", seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Krippendorff's alpha (interval, ordinal) and ICC(A,1), ICC(A,k) among the human raters.

    Args:
        df: Long table (item, rater, score; status optional).
        humans: The human raters (at least two).
        ci: Alpha's bootstrap (items, or clusters with ``columns.cluster``); the ICC intervals
            are McGraw & Wong's F intervals at ``ci.level``.
        columns: Column names.

    Returns:
        One row per statistic: ``statistic, estimate, ci_low, ci_high, n, ci_method, note``.

    Examples:
        >>> long = pd.DataFrame({"item": list("abcdef") * 2, "rater": ["h1"] * 6 + ["h2"] * 6,
        ...     "score": [1, 2, 3, 2, 4, 5, 1, 3, 2, 2, 5, 4]})
        >>> table = inter_human_agreement(long, ["h1", "h2"], ci=CI(None))
        >>> table.set_index("statistic")["estimate"].round(3).to_dict()
        {'krippendorff_alpha[interval]': 0.831, 'krippendorff_alpha[ordinal]': 0.825,
         'ICC(A,1)': 0.841, 'ICC(A,k)': 0.914}
    """
    chosen = df[df[columns.rater].astype(str).isin([str(h) for h in humans])]
    rows = []
    for metric in ("interval", "ordinal"):
        alpha = krippendorff_alpha(
            chosen, level_of_measurement=metric, ci=ci, columns=columns
        ).iloc[0]
        rows.append({"statistic": f"krippendorff_alpha[{metric}]", "estimate": alpha["estimate"],
                     "ci_low": alpha["ci_low"], "ci_high": alpha["ci_high"], "n": alpha["n"],
                     "ci_method": alpha["ci_method"], "note": alpha.get("note", "")})  # fmt: skip
    keep = chosen[chosen[columns.score].notna()]
    if columns.status and columns.status in keep.columns:
        keep = keep[keep[columns.status].astype(str) == "ok"]
    wide = keep.pivot_table(
        index=columns.item, columns=columns.rater, values=columns.score, aggfunc="mean"
    )
    complete = wide.dropna()
    if complete.shape[1] < 2 or len(complete) < 3:
        note = f"undefined: {len(complete)} items scored by all {wide.shape[1]} raters"
        for name in ("ICC(A,1)", "ICC(A,k)"):
            rows.append({"statistic": name, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                         "n": len(complete), "ci_method": "", "note": note})  # fmt: skip
    else:
        dropped = len(wide) - len(complete)
        note = f"{dropped} items not scored by every rater left out" if dropped else ""
        for name, values in icc_absolute(complete.to_numpy(float), ci.level).items():
            rows.append({"statistic": name, **values, "n": len(complete),
                         "ci_method": "F (McGraw & Wong 1996)", "note": note})  # fmt: skip
    return pd.DataFrame(rows)
