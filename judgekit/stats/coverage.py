"""How much of the scale a judge uses, and how its score distribution compares with humans'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    ScaleLike,
    check_on_scale,
    describe_drops,
    scale_values,
    usable_scores,
)

DistributionTest = Literal["chi2", "g"]
#: Columns of :attr:`Coverage.summary`, in order (comparison columns NaN for the human row).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "rater",
    "n",
    "levels_used",
    "share_of_scale_used",
    "entropy_bits",
    "normalized_entropy",
    "tvd",
    "test",
    "statistic",
    "dof",
    "p_value",
    "min_expected",
    "threshold",
    "passed",
    "note",
    "n_dropped",
    "dropped_reason",
)


@dataclass(frozen=True)
class Coverage:
    """Score-distribution coverage per rater.

    Attributes:
        counts: rater, level, count, share: every scale level, zero counts included.
        summary: One row per rater: n, levels_used, share_of_scale_used, entropy_bits,
            normalized_entropy, and (when a human rater is named) the comparison with the human
            distribution: tvd, test, statistic, dof, p_value, min_expected, note; plus
            threshold and passed (share of scale used >= threshold).
    """

    counts: pd.DataFrame
    summary: pd.DataFrame


def _entropy_bits(counts: np.ndarray) -> float:
    shares = counts[counts > 0] / counts.sum()
    return float(-(shares * np.log2(shares)).sum()) if counts.sum() else np.nan


def _compare(judge: np.ndarray, human: np.ndarray, test: DistributionTest) -> dict[str, object]:
    """Homogeneity test of two level-count vectors, and total-variation distance."""
    if judge.sum() == 0 or human.sum() == 0:
        return {
            "tvd": np.nan,
            "test": "chi2" if test == "chi2" else "g_test",
            "statistic": np.nan,
            "dof": 0,
            "p_value": np.nan,
            "min_expected": np.nan,
            "note": "a rater has no usable scores: nothing to compare",
        }
    used = (judge + human) > 0
    table = np.vstack([judge[used], human[used]])
    tvd = 0.5 * float(np.abs(judge / judge.sum() - human / human.sum()).sum())
    out: dict[str, object] = {"tvd": tvd, "test": "chi2" if test == "chi2" else "g_test"}
    if table.shape[1] < 2:
        out.update(statistic=np.nan, dof=0, p_value=np.nan, min_expected=np.nan)
        out["note"] = "both use a single level: nothing to test"
        return out
    lam = None if test == "chi2" else "log-likelihood"
    res = stats.chi2_contingency(table, correction=False, lambda_=lam)
    min_expected = float(res.expected_freq.min())
    out.update(
        statistic=float(res.statistic),
        dof=int(res.dof),
        p_value=float(res.pvalue),
        min_expected=min_expected,
    )
    out["note"] = (
        f"smallest expected count {min_expected:.1f} < 5: the p-value is unreliable"
        if min_expected < 5
        else ""
    )
    return out


def score_coverage(
    df: pd.DataFrame,
    *,
    scale: ScaleLike,
    human: object | None = None,
    test: DistributionTest = "chi2",
    min_share_used: float = 1.0,
    columns: Columns = DEFAULT_COLUMNS,
) -> Coverage:
    """Counts per scale level per rater, share of the scale used, entropy, human comparison.

    Seed 004 asks that scores "cover the full range"; a rater passes when the share of scale
    levels it used is at least ``min_share_used`` (default: all levels). Entropy is in bits;
    normalised entropy divides by ``log2(k)``. The comparison with the ``human`` rater is a
    chi-square (or G) test of homogeneity on the 2 x k count table (levels neither used are
    left out) and the total-variation distance ``0.5 * sum |p_judge - p_human|``. The test
    treats the two samples as independent; when both rated the same items this is only a
    rough guide (a paired test of marginal homogeneity, e.g. Stuart-Maxwell, is the exact one).
    With ``columns.cluster`` set the note says so too: clustered items make it rougher still
    (coverage itself has no interval, so there is nothing to resample).

    Returns:
        A :class:`Coverage` with tidy ``counts`` and per-rater ``summary``.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> coverage = score_coverage(long, scale=(1, 2, 3, 4, 5), human="human")
        >>> shown = coverage.summary[["rater", "levels_used", "share_of_scale_used"]]
        >>> print(shown.to_string(index=False))
        rater  levels_used  share_of_scale_used
        judge            4                  0.8
        human            4                  0.8
    """
    levels = scale_values(scale, [])
    usable = usable_scores(df, columns, scale)
    check_on_scale(usable.scores["score"], levels, columns.score)
    raters = list(pd.unique(df[columns.rater]))
    table = (
        pd.crosstab(usable.scores["rater"], usable.scores["score"])
        .reindex(index=raters, columns=list(levels), fill_value=0)
        .fillna(0)
        .astype(int)
    )
    matrix = table.to_numpy()
    counts = pd.DataFrame(
        {
            "rater": np.repeat(np.asarray(raters, dtype=object), len(levels)),
            "level": np.tile(levels, len(raters)),
            "count": matrix.ravel(),
        }
    )
    counts["share"] = counts["count"] / counts.groupby("rater")["count"].transform("sum")
    if human is not None and human not in raters:
        raise ValueError(f"human rater {human!r} not found in column {columns.rater!r}")
    rows = []
    for rater, values in zip(raters, matrix, strict=True):
        used = int((values > 0).sum())
        n_dropped, why = describe_drops(
            usable.reasons.loc[usable.reasons["rater"] == rater, "reason"]
        )
        row: dict[str, object] = {
            "rater": rater,
            "n": int(values.sum()),
            "levels_used": used,
            "share_of_scale_used": used / len(levels),
            "entropy_bits": _entropy_bits(values),
            "normalized_entropy": _entropy_bits(values) / np.log2(len(levels))
            if len(levels) > 1
            else np.nan,
            "n_dropped": n_dropped,
            "dropped_reason": why,
        }
        if human is not None and rater != human:
            row.update(_compare(values, matrix[raters.index(human)], test))
            p_value = row["p_value"]
            if columns.cluster is not None and isinstance(p_value, float) and np.isfinite(p_value):
                clustered = (
                    f"items cluster by {columns.cluster!r}: the p-value assumes independence"
                )
                row["note"] = "; ".join(t for t in (str(row["note"]), clustered) if t)
        row["threshold"] = min_share_used
        row["passed"] = bool(used / len(levels) >= min_share_used) if values.sum() else None
        rows.append(row)
    summary = pd.DataFrame(rows).reindex(columns=list(SUMMARY_COLUMNS))
    return Coverage(counts=counts, summary=summary)
