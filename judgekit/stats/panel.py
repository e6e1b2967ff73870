"""A panel of judges: agreement among them, each against the human, and shared errors.

* :func:`panel_agreement`: Cohen's kappa for every pair of judges (weighted as asked), and
  Krippendorff's alpha and Fleiss' kappa across the whole panel (the estimators of
  :mod:`.agreement` and :mod:`.multirater`).
* :func:`versus_human`: every judge and every jury against the human, side by side.
* :func:`error_correlation`: how much the judges' deviations from the human move together,
  and the number of independent judges the panel is worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import CI, as_generator, interval, unit_weights
from judgekit.stats._panel import panel_scores, require_judges
from judgekit.stats._prep import (
    DEFAULT_COLUMNS,
    Columns,
    FloatArray,
    ScaleLike,
    level_codes,
    order_columns,
    result_row,
)
from judgekit.stats.agreement import WeightBasis, Weights, cohen_kappa, pairwise_kappa
from judgekit.stats.jury import JURY_PREFIX
from judgekit.stats.multirater import fleiss_kappa, krippendorff_alpha

PANEL = "panel"


def panel_agreement(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    scale: ScaleLike = None,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("percentile", n_boot=2000, seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Agreement among the judges: pairwise kappa, Krippendorff's alpha and Fleiss' kappa.

    Pairwise: Cohen's weighted kappa ``1 - sum v_ij p_ij / sum v_ij p_i. p_.j`` (Cohen 1968)
    for every pair of judges. Panel: Krippendorff's (2011) interval alpha, on the level ranks
    when ``weight_basis="rank"`` (the distance the quadratic kappas use) or on the values; and
    Fleiss' (1971) kappa (nominal). Each interval resamples items, or whole clusters when
    ``columns.cluster`` is set, from one generator built from ``ci.seed``.

    Returns:
        One row per judge pair (``statistic`` = "cohen_kappa", ``rater_a``, ``rater_b``), then
        "krippendorff_alpha" and "fleiss_kappa" (``rater_a`` = ``rater_b`` = "panel"), with the
        standard result columns.

    Example:
        >>> long = pd.DataFrame({"item": np.repeat(range(6), 3), "rater": list("abc") * 6,
        ...                      "score": [0, 0, 0, 1, 1, 1, 2, 2, 1, 0, 0, 0, 2, 2, 2, 1, 1, 0]})
        >>> table = panel_agreement(long, ["a", "b", "c"], ci=CI(None))
        >>> list(table["statistic"])
        ['cohen_kappa', 'cohen_kappa', 'cohen_kappa', 'krippendorff_alpha', 'fleiss_kappa']
        >>> list(table["estimate"].round(3))
        [1.0, 0.75, 0.75, 0.84, 0.664]
    """
    names = require_judges(judges, 2, "panel agreement")
    panel_rows = df[df[columns.rater].isin(names)]
    ci = ci.shared()
    pairs = pairwise_kappa(
        panel_rows, names, columns=columns, ci=ci, scale=scale, weights=weights,
        weight_basis=weight_basis,
    )  # fmt: skip
    multi_ci = ci if ci.method in (None, "percentile", "bca") else replace(ci, method=None)
    ranked = panel_rows
    levels = scale
    if weight_basis == "rank":
        steps = panel_scores(panel_rows, names, scale=scale, columns=columns).levels
        position = {value: float(rank) for rank, value in enumerate(steps)}
        numeric = pd.to_numeric(panel_rows[columns.score], errors="coerce")
        ranked = panel_rows.assign(**{columns.score: numeric.map(position)})
        levels = tuple(float(r) for r in range(len(steps)))
    alpha = krippendorff_alpha(
        ranked, level_of_measurement="interval", scale=levels, ci=multi_ci, columns=columns
    )
    fleiss = fleiss_kappa(panel_rows, scale=scale, ci=multi_ci, columns=columns)
    table = pd.concat(
        [
            pairs.assign(statistic="cohen_kappa"),
            alpha.assign(statistic="krippendorff_alpha", rater_a=PANEL, rater_b=PANEL),
            fleiss.assign(statistic="fleiss_kappa", rater_a=PANEL, rater_b=PANEL),
        ],
        ignore_index=True,
    )
    table["method"] = table["method"].where(
        table["statistic"] != "krippendorff_alpha",
        table["method"].str.replace("]", f", {weight_basis}]", regex=False),
    )
    return order_columns(table, ["statistic", "rater_a", "rater_b"])


def versus_human(
    df: pd.DataFrame,
    raters: Sequence[object],
    *,
    human: object,
    scale: ScaleLike = None,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CI = CI("percentile", n_boot=2000, seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Cohen's weighted kappa of every judge and every jury against the human, one table.

    ``kappa_w = 1 - sum v_ij p_ij / sum v_ij p_i. p_.j`` (Cohen 1968), the human as rater a;
    ``kind`` says whether a row is a judge or a jury (raters named ``jury:...``). Items a jury
    could not score (a tie, no majority, a judge unscored) are dropped from its row and
    counted in ``n_dropped`` / ``dropped_reason``, never scored.

    Example:
        >>> long = pd.DataFrame({"item": np.repeat(range(4), 3), "rater": ["h", "a", "b"] * 4,
        ...                      "score": [0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1]})
        >>> table = versus_human(long, ["a", "b"], human="h", weights=None, ci=CI(None))
        >>> list(table["estimate"].round(2))
        [0.5, 0.5]
    """
    ci = ci.shared()
    rows = [
        cohen_kappa(
            df, human, rater, scale=scale, weights=weights, weight_basis=weight_basis, ci=ci,
            columns=columns,
        ).assign(kind="jury" if str(rater).startswith(JURY_PREFIX) else "judge")
        for rater in raters
    ]  # fmt: skip
    table = pd.concat(rows, ignore_index=True)
    return order_columns(table, ["kind", "rater_a", "rater_b"])


def _weighted_correlations(
    weights: FloatArray, errors: FloatArray, groups: FloatArray
) -> FloatArray:
    """Pooled within-group Pearson correlations of the error columns, per row of item weights.

    ``groups`` is items x groups (one-hot): each error is centred on its group's weighted mean
    before the (co)variances are summed over groups.
    """
    total = weights.sum(axis=1)[:, None, None]
    k = errors.shape[1]
    products = (errors[:, :, None] * errors[:, None, :]).reshape(len(errors), k * k)
    second = (weights @ products).reshape(-1, k, k)
    for group in groups.T:
        size = (weights @ group)[:, None, None]
        sums = weights @ (group[:, None] * errors)
        with np.errstate(divide="ignore", invalid="ignore"):
            second -= np.where(size > 0, sums[:, :, None] * sums[:, None, :] / size, 0.0)
    cov = second / total
    sd = np.sqrt(np.clip(np.einsum("bii->bi", cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = cov / (sd[:, :, None] * sd[:, None, :])
    return result


def effective_judges(k: int, mean_r: float | FloatArray) -> FloatArray:
    """Kish-style effective number of independent judges, ``k / (1 + (k - 1) r_bar)``.

    Example:
        >>> float(effective_judges(4, 0.5))
        1.6
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = 1.0 + (k - 1) * np.asarray(mean_r, dtype=float)
        return np.where(denominator > 0, k / denominator, np.nan)


def error_correlation(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    human: object,
    scale: ScaleLike = None,
    weight_basis: WeightBasis = "rank",
    given_human: bool = True,
    ci: CI = CI("percentile", n_boot=2000, seed=0),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Correlation of the judges' errors against the human, and the panel's effective size.

    Error of judge j on item i: ``e_ij = s_ij - h_i``, scores as level ranks
    (``weight_basis="rank"``) or values. On a bounded scale errors correlate through the truth
    even when the judges err independently (an answer the human scored 0 can only be scored
    too high), so ``r_ab`` is the pooled within-level Pearson correlation: each error is
    centred on the mean error of its human level, ``e~_ij = e_ij - mean(e_.j | h = h_i)``, and
    ``r_ab = sum e~_ia e~_ib / sqrt(sum e~_ia^2 sum e~_ib^2)`` over the items every judge and
    the human scored (``given_human=False``: the plain correlation). ``r_bar`` is the mean over the
    ``k (k - 1) / 2`` pairs. The mean of k errors of equal variance with mean pairwise
    correlation ``r_bar`` has variance ``sigma^2 (1 + (k - 1) r_bar) / k``, that of
    ``n_eff = k / (1 + (k - 1) r_bar)`` independent judges (Kish 1965, Survey Sampling,
    section 8.2, the design effect ``1 + (m - 1) rho``): ``n_eff`` near 1 means the judges
    make the same mistakes and a jury of them is worth one judge. Intervals: percentile
    bootstrap over items, or whole clusters when ``columns.cluster`` is set.

    Returns:
        One row per judge pair (``statistic`` "error_correlation"), then "mean_error_correlation"
        and "effective_judges" (``rater_a`` = ``rater_b`` = "panel"), standard result columns.

    Example:
        >>> long = pd.DataFrame({"item": np.repeat(range(5), 3), "rater": ["h", "a", "b"] * 5,
        ...                      "score": [1, 2, 2, 1, 1, 1, 0, 1, 1, 2, 2, 1, 1, 0, 0]})
        >>> table = error_correlation(long, ["a", "b"], human="h", ci=CI(None))
        >>> list(table["estimate"].round(3))  # centred within each human score: the same errors
        [1.0, 1.0, 1.0]
        >>> plain = error_correlation(long, ["a", "b"], human="h", given_human=False, ci=CI(None))
        >>> list(plain["estimate"].round(3))
        [0.896, 0.896, 1.055]
    """
    names = require_judges(judges, 2, "error correlation")
    boot = ci.offered((None, "percentile"), "error_correlation")
    panel = panel_scores(df, [*names, human], scale=scale, columns=columns)
    complete = panel.complete([*names, human])
    kept = panel.scores[complete]
    n_dropped = int((~complete).sum())
    why = f"items without every judge's and the human's score: {n_dropped}" if n_dropped else ""
    if weight_basis == "rank":
        values = level_codes(kept.to_numpy(float).ravel(), panel.levels).reshape(kept.shape)
        values = values.astype(float)
    else:
        values = kept.to_numpy(float)
    errors: FloatArray = (values[:, : len(names)] - values[:, [len(names)]]).astype(float)
    k = len(names)
    upper = np.triu_indices(k, 1)
    human_level = values[:, len(names)]
    groups = (
        (human_level[:, None] == np.unique(human_level)[None, :]).astype(float)
        if given_human
        else np.ones((len(errors), 1))
    )

    def summaries(matrices: FloatArray) -> FloatArray:
        pairs = matrices[:, upper[0], upper[1]]
        mean_r = np.mean(pairs, axis=1)
        return np.column_stack([pairs, mean_r, effective_judges(k, mean_r)])

    estimate = summaries(_weighted_correlations(np.ones((1, len(errors))), errors, groups))[0]
    bounds = np.full((estimate.size, 2), np.nan)
    extra: dict[str, object] = {"ci_method": "none"}
    clusters = panel.cluster_codes(list(kept.index))
    if boot.method is not None and len(errors) > 1:
        rng = as_generator(boot.seed)
        draws = summaries(
            _weighted_correlations(
                unit_weights(len(errors), clusters, boot.n_boot, rng), errors, groups
            )
        )
        for column in range(estimate.size):
            bounds[column] = interval(
                estimate[column], draws[:, column], level=boot.level, method="percentile"
            )
        extra = {
            "ci_method": "percentile" + (", cluster bootstrap" if clusters is not None else "")
        }
        if clusters is not None:
            extra["n_clusters"] = int(clusters.max()) + 1
    labels = [("error_correlation", names[a], names[b]) for a, b in combinations(range(k), 2)]
    labels += [("mean_error_correlation", PANEL, PANEL), ("effective_judges", PANEL, PANEL)]
    method = f"pearson_errors[{weight_basis}" + (", within human level]" if given_human else "]")
    rows = []
    for (statistic, a, b), value, (low, high) in zip(labels, estimate, bounds, strict=True):
        note = "" if np.isfinite(value) else "undefined: a judge's errors do not vary"
        rows.append(
            result_row(
                statistic=statistic, rater_a=a, rater_b=b, estimate=float(value), ci_low=low,
                ci_high=high, n=len(errors), method=method,
                n_dropped=n_dropped, dropped_reason=why, note=note, **extra,
            )
        )  # fmt: skip
    return order_columns(pd.DataFrame(rows), ["statistic", "rater_a", "rater_b"])
