"""Agreement among many raters: Krippendorff's alpha, Fleiss' kappa, Gwet's AC1/AC2.

All three depend on the data only through each item's counts per scale level, so they are
written as functions of the distinct count rows ("patterns") and bootstrapped by resampling
items through multinomial pattern counts (see :mod:`judgekit.stats._bootstrap`). Ratings that
are not ``ok``, abstain or are missing are dropped first and counted in ``dropped_reason``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import CI, PatternStat, unique_patterns, unit_ci
from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    FloatArray,
    IntArray,
    ScaleLike,
    check_on_scale,
    cluster_codes,
    describe_drops,
    item_clusters,
    level_codes,
    result_row,
    scale_values,
    usable_scores,
)
from judgekit.stats.agreement import WeightBasis, Weights, disagreement_weights

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


@dataclass(frozen=True)
class LevelCounts:
    """Per-item counts per scale level, the levels, what was dropped, and each item's cluster.

    Attributes:
        counts: Items x levels (items with at least ``min_ratings`` usable ratings).
        levels: The scale levels.
        dropped: (number of ratings dropped, "reason: count; ..." summary).
        clusters: 0-based cluster index per kept item, or None when not clustered.
    """

    counts: IntArray
    levels: tuple[float, ...]
    dropped: tuple[int, str]
    clusters: IntArray | None


def item_level_counts(
    df: pd.DataFrame, *, scale: ScaleLike, min_ratings: int, columns: Columns
) -> LevelCounts:
    """Count each item's usable ratings per level (items rated ``min_ratings`` times or more)."""
    usable = usable_scores(df, columns, scale)
    scores = usable.scores
    levels = scale_values(scale, scores["score"])
    check_on_scale(scores["score"], levels, columns.score)
    item_codes, item_names = pd.factorize(scores["item"])
    n_items = int(item_codes.max()) + 1 if item_codes.size else 0
    flat = item_codes * len(levels) + level_codes(scores["score"], levels)
    counts = np.bincount(flat, minlength=n_items * len(levels)).reshape(n_items, len(levels))
    sparse = counts.sum(axis=1) < min_ratings
    reasons = list(usable.reasons["reason"])
    reasons += ["item with a single rating"] * int(counts[sparse].sum())
    clusters = cluster_codes(list(item_names[~sparse]), item_clusters(df, columns))
    return LevelCounts(counts[~sparse], levels, describe_drops(reasons), clusters)


def _alpha_deltas(levels: tuple[float, ...], metric: AlphaLevel) -> FloatArray | None:
    """Squared difference function of Krippendorff (2011) for the fixed metrics."""
    values = np.asarray(levels, dtype=float)
    diff = values[:, None] - values[None, :]
    if metric == "nominal":
        return (diff != 0).astype(float)
    if metric == "interval":
        return diff**2
    if metric == "ratio":
        total = values[:, None] + values[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total != 0, (diff / total) ** 2, 0.0)
    if metric == "ordinal":
        return None
    raise ValueError(f"level_of_measurement must be nominal/ordinal/interval/ratio, got {metric!r}")


def alpha_stat(patterns: IntArray, levels: tuple[float, ...], metric: AlphaLevel) -> PatternStat:
    """Krippendorff's alpha as a function of pattern weights.

    Coincidences ``o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)``, margins ``n_c``,
    ``alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck``. Ordinal ``d_ck`` is the squared
    difference of the levels' mid-ranks ``sum_{g<c} n_g + n_c / 2`` (Krippendorff 2011, eq. for
    ordinal metric), so it is recomputed in every replicate.
    """
    k = len(levels)
    m = patterns.sum(axis=1).astype(float)
    pair = patterns[:, :, None] * patterns[:, None, :] - patterns[:, :, None] * np.eye(k)
    per_item = (pair / (m - 1)[:, None, None]).reshape(len(patterns), k * k)
    fixed = _alpha_deltas(levels, metric)

    def stat(weights: FloatArray) -> FloatArray:
        coinc = weights @ per_item
        margins = coinc.reshape(-1, k, k).sum(axis=2)
        n = margins.sum(axis=1)
        if fixed is None:
            mid = np.cumsum(margins, axis=1) - margins / 2
            delta = (mid[:, :, None] - mid[:, None, :]) ** 2
        else:
            delta = np.broadcast_to(fixed, (len(weights), k, k))
        observed = np.einsum("bx,bx->b", coinc, delta.reshape(-1, k * k))
        expected = np.einsum("bi,bij,bj->b", margins, delta, margins) / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected > 0, 1.0 - observed / expected, np.nan)

    return stat


def _rater_agreement(patterns: IntArray, agree: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per-item weighted agreement ``sum_k r_ik (r*_ik - 1) / (m (m - 1))`` and level shares.

    ``r*_ik = sum_l w_kl r_il``; items rated once get agreement 0 and are excluded from ``p_a``
    by the caller (Gwet 2014, eq. 2.8 and 4.1).
    """
    m = patterns.sum(axis=1).astype(float)
    weighted = patterns @ agree.T
    with np.errstate(divide="ignore", invalid="ignore"):
        per_item = np.where(m >= 2, np.sum(patterns * (weighted - 1), axis=1) / (m * (m - 1)), 0.0)
    return per_item, patterns / m[:, None]


def chance_corrected_stat(patterns: IntArray, agree: FloatArray, chance: str) -> PatternStat:
    """Fleiss' kappa (``chance="fleiss"``) or Gwet's AC1/AC2 (``"gwet"``) of pattern weights.

    Both share ``p_a`` = mean over items rated at least twice of the per-item agreement, and
    level shares ``pi_k`` = mean over items of ``r_ik / m_i``. Chance agreement:
    Fleiss ``p_e = sum_kl w_kl pi_k pi_l`` (Fleiss 1971; with missing ratings as in Gwet 2014,
    section 2.3.2); Gwet ``p_e = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k)`` with ``T_w = sum w_kl``
    and q levels (Gwet 2008; 2014, ch. 4). The coefficient is ``(p_a - p_e) / (1 - p_e)``.
    """
    q = agree.shape[0]
    per_item, shares = _rater_agreement(patterns, agree)
    pairable = (patterns.sum(axis=1) >= 2).astype(float)
    gwet_factor = agree.sum() / (q * (q - 1))

    def stat(weights: FloatArray) -> FloatArray:
        p_a = weights @ per_item / (weights @ pairable)
        pi = weights @ shares / weights.sum(axis=1, keepdims=True)
        if chance == "fleiss":
            p_e = np.einsum("bk,kl,bl->b", pi, agree, pi)
        else:
            p_e = gwet_factor * np.sum(pi * (1 - pi), axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(p_e < 1, (p_a - p_e) / (1 - p_e), np.nan)

    return stat


def no_variation(counts: IntArray, constant_ok: bool = False) -> str:
    """The reason a chance-corrected coefficient is undefined, from item x level counts.

    Alpha and Fleiss' kappa are 0/0 when every rating sits on one level; Gwet's AC is defined
    there (``constant_ok``).
    """
    if counts.sum() == 0:
        return "undefined: no usable ratings"
    if not constant_ok and (counts.sum(axis=0) > 0).sum() < 2:
        return "undefined: every rating on one level"
    return ""


def _estimate(
    stat_of: Callable[[IntArray], PatternStat],
    data: LevelCounts,
    method: str,
    ci: CI,
    *,
    constant_ok: bool = False,
) -> pd.DataFrame:
    boot = ci.offered((None, "percentile", "bca"), method).method
    patterns, pattern_counts, pattern_of_item = unique_patterns(data.counts)
    stat = stat_of(patterns)
    n = int(pattern_counts.sum())
    reason = no_variation(data.counts, constant_ok)
    estimate = np.nan if reason else float(stat(pattern_counts[None].astype(float))[0])
    interval: dict[str, object] = {}
    if boot is not None and not reason:
        interval = unit_ci(
            stat, pattern_of_item, len(patterns), data.clusters, estimate=estimate, ci=ci
        )
    clustered = ", cluster bootstrap" if data.clusters is not None and boot else ""
    row = result_row(
        estimate=estimate,
        n=n,
        method=method,
        ci_method=(boot or "none") + clustered,
        n_dropped=data.dropped[0],
        dropped_reason=data.dropped[1],
        note=reason,
        **interval,
    )
    return pd.DataFrame([row])


def krippendorff_alpha(
    df: pd.DataFrame,
    *,
    level_of_measurement: AlphaLevel = "interval",
    scale: ScaleLike = None,
    ci: CI = CI(None),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Krippendorff's alpha for any number of raters with missing ratings.

    ``alpha = 1 - D_o / D_e`` from the coincidence matrix (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability"); items with fewer than two usable ratings are not
    pairable and are dropped. Interval and ratio metrics use the scale's actual values; the
    ordinal metric uses mid-ranks of the level frequencies, so only the order matters.
    The bootstrap resamples items (units), not pairable values.

    Args:
        df: Long table, one row per item and rater (status optional).
        level_of_measurement: "nominal", "ordinal", "interval" or "ratio".
        scale: Ordered levels or a :class:`~judgekit.types.Scale`; default: observed values.
        ci: Interval (:class:`CI`): None (no interval), "percentile" or "bca" (items or
            clusters resampled); level, replicates and the seed a bootstrap needs.
        columns: Column names, abstention values and the cluster column; with a cluster the
            bootstrap resamples whole clusters and the row adds the design effect.

    Returns:
        One row: estimate, se (bootstrap SE or NaN), ci_low, ci_high, n (items used), method,
        ci_method, n_dropped (ratings set aside), dropped_reason.

    Examples:
        >>> from judgekit.stats.examples import three_runs
        >>> runs = three_runs(rater="rater")
        >>> row = krippendorff_alpha(runs, level_of_measurement="ordinal").iloc[0]
        >>> print(round(row["estimate"], 3), row["n"])
        0.956 6
    """
    data = item_level_counts(df, scale=scale, min_ratings=2, columns=columns)
    return _estimate(
        lambda patterns: alpha_stat(patterns, data.levels, level_of_measurement),
        data,
        f"krippendorff_alpha[{level_of_measurement}]",
        ci,
    )


def fleiss_kappa(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    ci: CI = CI(None),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Fleiss' (1971) kappa for many raters (nominal; raters need not be the same people).

    With a constant number of raters per item this equals Fleiss (1971) and
    ``statsmodels.stats.inter_rater.fleiss_kappa``; with missing ratings it follows Gwet's
    (2014) generalisation (see :func:`chance_corrected_stat`), as R/Python irrCAC do.
    Arguments and the returned row are as in :func:`krippendorff_alpha`.

    Examples:
        >>> from judgekit.stats.examples import three_runs
        >>> runs = three_runs(rater="rater")
        >>> print(round(fleiss_kappa(runs)["estimate"].iloc[0], 3))
        0.841
    """
    data = item_level_counts(df, scale=scale, min_ratings=1, columns=columns)
    return _estimate(
        lambda patterns: chance_corrected_stat(patterns, np.eye(len(data.levels)), "fleiss"),
        data,
        "fleiss_kappa",
        ci,
    )


def gwet_ac(
    df: pd.DataFrame,
    *,
    weights: Weights = None,
    weight_basis: WeightBasis = "rank",
    scale: ScaleLike = None,
    ci: CI = CI(None),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Gwet's AC1 (``weights=None``) or AC2 (linear / quadratic weights) for many raters.

    Gwet, K. L. (2008), Br. J. Math. Stat. Psychol. 61, 29-48; Gwet (2014), Handbook of
    Inter-Rater Reliability, 4th ed., ch. 4. ``q`` is the number of levels of the *scale*, so
    pass the full scale: unused levels change the chance term. Items rated once count toward
    the level shares ``pi_k`` only. ``weights`` and ``weight_basis`` are as in
    :func:`~judgekit.stats.agreement.cohen_kappa`; the other arguments and the returned row are
    as in :func:`krippendorff_alpha`.

    Examples:
        >>> from judgekit.stats.examples import three_runs
        >>> runs = three_runs(rater="rater")
        >>> print(round(gwet_ac(runs)["estimate"].iloc[0], 3))
        0.855
    """
    data = item_level_counts(df, scale=scale, min_ratings=1, columns=columns)
    if len(data.levels) < 2:
        raise ValueError(f"Gwet's AC needs a scale with at least two levels, got {data.levels}")
    agree = 1.0 - disagreement_weights(data.levels, weights, weight_basis)
    name = "gwet_ac1" if weights is None else f"gwet_ac2[{weights}-{weight_basis}]"
    return _estimate(
        lambda patterns: chance_corrected_stat(patterns, agree, "gwet"),
        data,
        name,
        ci,
        constant_ok=True,
    )
