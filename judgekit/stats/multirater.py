"""Agreement among many raters: Krippendorff's alpha, Fleiss' kappa, Gwet's AC1/AC2.

All three depend on the data only through each item's counts per scale level, so they are
written as functions of the distinct count rows ("patterns") and bootstrapped by resampling
items through multinomial pattern counts (see :mod:`judgekit.stats._bootstrap`). Ratings that
are not ``ok``, abstain or are missing are dropped first and counted in ``dropped_reason``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import PatternStat, SeedLike, pattern_ci, unique_patterns
from judgekit.stats._prep import (
    FloatArray,
    IntArray,
    ScaleLike,
    abstain_values,
    check_on_scale,
    describe_drops,
    level_codes,
    result_row,
    scale_values,
    usable_scores,
)
from judgekit.stats.agreement import WeightBasis, Weights, disagreement_weights

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]
BootCI = Literal["percentile", "bca"] | None


def item_level_counts(
    df: pd.DataFrame,
    *,
    scale: ScaleLike,
    min_ratings: int,
    item_col: str,
    rater_col: str,
    score_col: str,
    status_col: str | None,
    abstain: tuple[float, ...],
) -> tuple[IntArray, tuple[float, ...], tuple[int, str]]:
    """Per-item counts per scale level (items with ``min_ratings`` usable ratings or more).

    Returns:
        (counts of shape items x levels, levels, (number of ratings dropped, drop summary)).
    """
    usable = usable_scores(
        df,
        item_col=item_col,
        rater_col=rater_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain_values(scale, abstain),
    )
    scores = usable.scores
    levels = scale_values(scale, scores["score"])
    check_on_scale(scores["score"], levels, score_col)
    item_codes, _ = pd.factorize(scores["item"])
    n_items = int(item_codes.max()) + 1 if item_codes.size else 0
    flat = item_codes * len(levels) + level_codes(scores["score"], levels)
    counts = np.bincount(flat, minlength=n_items * len(levels)).reshape(n_items, len(levels))
    sparse = counts.sum(axis=1) < min_ratings
    reasons = list(usable.reasons["reason"])
    reasons += ["item with a single rating"] * int(counts[sparse].sum())
    return counts[~sparse], levels, describe_drops(reasons)


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


def _estimate(
    stat: PatternStat,
    pattern_counts: IntArray,
    *,
    method: str,
    ci: BootCI,
    n_boot: int,
    seed: SeedLike | None,
    level: float,
    dropped: tuple[int, str],
) -> pd.DataFrame:
    n = int(pattern_counts.sum())
    estimate = float(stat(pattern_counts[None].astype(float))[0]) if n else np.nan
    low = high = se = np.nan
    if ci is not None and n:
        low, high, se = pattern_ci(
            stat,
            pattern_counts,
            estimate=estimate,
            n_boot=n_boot,
            seed=seed,
            level=level,
            method=ci,
        )
    row = result_row(
        estimate=estimate,
        se=se,
        ci_low=low,
        ci_high=high,
        n=n,
        method=method,
        ci_method=ci or "none",
        n_dropped=dropped[0],
        dropped_reason=dropped[1],
    )
    return pd.DataFrame([row])


def krippendorff_alpha(
    df: pd.DataFrame,
    *,
    level_of_measurement: AlphaLevel = "interval",
    scale: ScaleLike = None,
    ci: BootCI = None,
    n_boot: int = 2000,
    seed: SeedLike | None = None,
    level: float = 0.95,
    item_col: str = "item",
    rater_col: str = "rater",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
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
        ci: None (no interval), "percentile" or "bca" (items resampled, explicit ``seed``).
        n_boot: Bootstrap replicates.
        seed: Seed or generator for the bootstrap.
        level: Confidence level.
        item_col: Item column.
        rater_col: Rater column (or run / variant column).
        score_col: Score column.
        status_col: Status column (ignored when absent from ``df``).
        abstain: Score values meaning "abstain" (merged with the scale's own).

    Returns:
        One row: estimate, se (bootstrap SE or NaN), ci_low, ci_high, n (items used), method,
        ci_method, n_dropped (ratings set aside), dropped_reason.
    """
    counts, levels, dropped = item_level_counts(
        df,
        scale=scale,
        min_ratings=2,
        item_col=item_col,
        rater_col=rater_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    patterns, pattern_counts, _ = unique_patterns(counts)
    stat = alpha_stat(patterns, levels, level_of_measurement)
    return _estimate(
        stat,
        pattern_counts,
        method=f"krippendorff_alpha[{level_of_measurement}]",
        ci=ci,
        n_boot=n_boot,
        seed=seed,
        level=level,
        dropped=dropped,
    )


def fleiss_kappa(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    ci: BootCI = None,
    n_boot: int = 2000,
    seed: SeedLike | None = None,
    level: float = 0.95,
    item_col: str = "item",
    rater_col: str = "rater",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
) -> pd.DataFrame:
    """Fleiss' (1971) kappa for many raters (nominal; raters need not be the same people).

    With a constant number of raters per item this equals Fleiss (1971) and
    ``statsmodels.stats.inter_rater.fleiss_kappa``; with missing ratings it follows Gwet's
    (2014) generalisation (see :func:`chance_corrected_stat`), as R/Python irrCAC do.
    Arguments and the returned row are as in :func:`krippendorff_alpha`.
    """
    counts, _, dropped = item_level_counts(
        df,
        scale=scale,
        min_ratings=1,
        item_col=item_col,
        rater_col=rater_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    patterns, pattern_counts, _ = unique_patterns(counts)
    return _estimate(
        chance_corrected_stat(patterns, np.eye(counts.shape[1]), "fleiss"),
        pattern_counts,
        method="fleiss_kappa",
        ci=ci,
        n_boot=n_boot,
        seed=seed,
        level=level,
        dropped=dropped,
    )


def gwet_ac(
    df: pd.DataFrame,
    *,
    weights: Weights = None,
    weight_basis: WeightBasis = "rank",
    scale: ScaleLike = None,
    ci: BootCI = None,
    n_boot: int = 2000,
    seed: SeedLike | None = None,
    level: float = 0.95,
    item_col: str = "item",
    rater_col: str = "rater",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
) -> pd.DataFrame:
    """Gwet's AC1 (``weights=None``) or AC2 (linear / quadratic weights) for many raters.

    Gwet, K. L. (2008), Br. J. Math. Stat. Psychol. 61, 29-48; Gwet (2014), Handbook of
    Inter-Rater Reliability, 4th ed., ch. 4. ``q`` is the number of levels of the *scale*, so
    pass the full scale: unused levels change the chance term. Items rated once count toward
    the level shares ``pi_k`` only. ``weights`` and ``weight_basis`` are as in
    :func:`~judgekit.stats.agreement.cohen_kappa`; the other arguments and the returned row are
    as in :func:`krippendorff_alpha`.
    """
    counts, levels, dropped = item_level_counts(
        df,
        scale=scale,
        min_ratings=1,
        item_col=item_col,
        rater_col=rater_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    if len(levels) < 2:
        raise ValueError(f"Gwet's AC needs a scale with at least two levels, got {levels}")
    agree = 1.0 - disagreement_weights(levels, weights, weight_basis)
    patterns, pattern_counts, _ = unique_patterns(counts)
    name = "gwet_ac1" if weights is None else f"gwet_ac2[{weights}-{weight_basis}]"
    return _estimate(
        chance_corrected_stat(patterns, agree, "gwet"),
        pattern_counts,
        method=name,
        ci=ci,
        n_boot=n_boot,
        seed=seed,
        level=level,
        dropped=dropped,
    )
