"""Prediction-powered inference: per-model mean scores from all judge scores plus a few labels.

For each answering model with ``n`` human-labelled items (human ``Y``, judge ``Ŷ``) and ``N``
judge-only items (``Ŷᵘ``), the PPI estimate of the human mean is

    θ̂ = mean(Ŷᵘ) − mean(Ŷ − Y)

(the judge's mean, corrected by its average error on the labelled items); with PPI++'s
power tuning the judge enters with weight ``λ ∈ [0, 1]``, ``θ̂ = λ·mean(Ŷᵘ) + mean(Y − λŶ)``,
and the interval is ``θ̂ ± q · sqrt(λ² s²(Ŷᵘ)/N + s²(Y − λŶ)/n)``. Reference: Angelopoulos,
Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382 (2023);
Angelopoulos, Duchi, Zrnic, "PPI++" (2023). The estimate is ``ppi_py.ppi_mean_pointestimate``;
the variances ``s²`` are unbiased (``ddof = 1``) where ``ppi_py.ppi_mean_ci`` divides by ``n``,
so that a judge tuned away (``λ = 0``) gives exactly the labels' own t-interval, never a
narrower one. Intervals are clipped to the rating scale when it is given (the note says so).

Small-sample quantile: ``ppi_py`` uses the normal quantile ``z``. A study labels few items per
model (10 of a 30-label budget over three models), where the error term ``var(Ŷ − Y)/n``
dominates and is estimated from ``n`` points, and the normal interval undercovers (0.86 for one
judge–model pair of the riddles study at n = 10). Here ``q`` is Student's ``t`` with ``n − 1``
degrees of freedom, the textbook correction for a variance estimated from ``n`` labels; it
tends to ``z`` as ``n`` grows. The human-only and judge-only intervals are the usual
t-intervals for a mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

#: Estimators in the order the output lists them.
ESTIMATORS: tuple[str, ...] = ("ppi", "judge_only", "human_only")


def _scalar(value: object) -> float:
    return float(np.ravel(np.asarray(value, dtype=float))[0])


def power_tuning(
    human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray
) -> float:
    """PPI++'s variance-minimising weight ``λ`` of the judge, clipped to ``[0, 1]``.

    ``λ = cov(Y, Ŷ) / ((1 + n/N) · var(Ŷ ∪ Ŷᵘ))``, the closed form ``ppi_py`` computes for a mean
    (``_calc_lam_glm`` with ``clip=True``); ``λ = 0`` is the labels alone, ``λ = 1`` plain PPI.
    """
    n, big_n = len(human), len(judge_unlabelled)
    pooled = np.var(np.concatenate([judge_labelled, judge_unlabelled]), ddof=1)
    if pooled == 0:
        return 0.0
    covariance = np.mean((human - human.mean()) * (judge_labelled - judge_labelled.mean()))
    return float(np.clip(covariance / ((1 + n / big_n) * pooled), 0.0, 1.0))


def ppi_mean(
    human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray, level: float
) -> tuple[float, float, float]:
    """PPI++ estimate and interval of the human mean: ``(estimate, ci_low, ci_high)``.

    The estimate is ``ppi_py.ppi_mean_pointestimate`` at the tuned ``λ``; the interval is
    ``θ̂ ± t(n − 1) · sqrt(λ² s²(Ŷᵘ)/N + s²(Y − λŶ)/n)`` with *unbiased* variances ``s²``
    (``ddof = 1``). ``ppi_py.ppi_mean_ci`` divides by ``n`` instead, so at ``λ = 0`` (the judge
    adds nothing and the estimate is the labels' mean) its interval was ``sqrt((n − 1)/n)``
    times the classical one (``sqrt(5/6)`` at six labels); here it is exactly the classical
    t-interval. A zero-width interval (every label equal, ``λ = 0``) is NaN.

    Examples:
        >>> human = np.array([4.0, 6, 5, 7, 3, 5])
        >>> judge = np.array([7.0, 3, 5, 3, 7, 5])  # anti-correlated: λ = 0, labels alone
        >>> estimate, low, high = ppi_mean(human, judge, np.array([2.0, 9, 4, 6]), 0.95)
        >>> _, c_low, c_high = classical_mean(human, 0.95)
        >>> print(f"{estimate:.2f} [{low:.2f}, {high:.2f}] vs [{c_low:.2f}, {c_high:.2f}]")
        5.00 [3.52, 6.48] vs [3.52, 6.48]
    """
    import ppi_py  # on first use: it is slow to import and only PPI needs it

    lam = power_tuning(human, judge_labelled, judge_unlabelled)
    estimate = _scalar(
        ppi_py.ppi_mean_pointestimate(human, judge_labelled, judge_unlabelled, lam=lam)
    )
    variance = lam**2 * np.var(judge_unlabelled, ddof=1) / len(judge_unlabelled) + np.var(
        human - lam * judge_labelled, ddof=1
    ) / len(human)
    if variance == 0:
        return estimate, np.nan, np.nan
    half = float(stats.t.ppf((1.0 + level) / 2.0, len(human) - 1) * np.sqrt(variance))
    return estimate, estimate - half, estimate + half


def classical_mean(values: np.ndarray, level: float) -> tuple[float, float, float]:
    """Sample mean with the textbook t-interval ``mean ± t(n − 1) · s / sqrt(n)``.

    Equal values give no interval (NaN), not a zero-width one.
    """
    mean = float(np.mean(values))
    if np.ptp(values) == 0:
        return mean, np.nan, np.nan
    low, high = stats.t.interval(level, len(values) - 1, loc=mean, scale=stats.sem(values))
    return mean, float(low), float(high)


def _note(result: tuple[float, float, float], missing: str) -> str:
    """Why a row has no estimate (``missing``) or no interval; empty when it has both."""
    if np.isnan(result[0]):
        return missing
    return "interval undefined: the scores are all equal" if np.isnan(result[1]) else ""


def _clipped(low: float, high: float, scale: tuple[float, float] | None) -> tuple[float, float]:
    """The interval cut to ``scale`` (NaN bounds stay NaN); unchanged without a scale."""
    if scale is None or np.isnan(low):
        return low, high
    return max(low, scale[0]), min(high, scale[1])


def corrected_means(
    frame: pd.DataFrame,
    *,
    group: str = "model",
    judge: str = "judge_score",
    human: str = "human_score",
    level: float = 0.95,
    min_labels: int = 5,
    scale: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """Each group's mean human score three ways: PPI, judge-only and human-only.

    Args:
        frame: One row per judged item; ``human`` is NaN where nobody labelled the item. Rows
            without a judge score are dropped and counted.
        group: Column naming the answering model (or any group whose mean the study reports).
        judge: The judge's score column.
        human: The human score column.
        level: Confidence level of the intervals.
        min_labels: Fewest labelled items a group needs for the PPI and human-only intervals
            (both are large-sample intervals; with two or three labels they mean nothing).
        scale: The rating scale's ``(lowest, highest)`` score: interval bounds past it are
            clipped to it, and the note says so. None leaves the intervals as computed.

    Returns:
        One row per (group, estimator): ``group, estimator, estimate, ci_low, ci_high,
        half_width, n_labelled, n_judged, n_dropped, note``. A group with fewer than
        ``min_labels`` labelled items gets NaN for PPI and human-only, never a number; the
        ``note`` says why an estimate or interval is missing, or that it was clipped.
        ``half_width`` is the interval's before clipping (its precision).

    Examples:
        >>> from judgekit.stats.examples import labelled_judgments
        >>> means = corrected_means(labelled_judgments())
        >>> shown = means[["model", "estimator", "estimate", "n_labelled"]]
        >>> print(shown.round(2).to_string(index=False))
        model  estimator  estimate  n_labelled
            a        ppi      2.21          10
            a judge_only      2.60          10
            a human_only      2.50          10
            b        ppi      2.27          10
            b judge_only      2.68          10
            b human_only      2.50          10
    """
    rows = []
    for name, part in frame.groupby(group, sort=True):
        judged = part[part[judge].notna()]
        labelled = judged[judged[human].notna()]
        unlabelled = judged[judged[human].isna()]
        y = labelled[human].to_numpy(float)
        yhat = labelled[judge].to_numpy(float)
        yhat_u = unlabelled[judge].to_numpy(float)
        few = (
            f"undefined: fewer than {max(min_labels, 2)} labels"
            if len(y) < max(min_labels, 2)
            else ""
        )
        nan3 = (np.nan, np.nan, np.nan)
        missing = {
            "ppi": few or ("undefined: fewer than 2 unlabelled items" if len(yhat_u) < 2 else ""),
            "judge_only": "",
            "human_only": few,
        }
        results = {
            "ppi": nan3 if missing["ppi"] else ppi_mean(y, yhat, yhat_u, level),
            "judge_only": classical_mean(judged[judge].to_numpy(float), level),
            "human_only": nan3 if few else classical_mean(y, level),
        }
        for estimator in ESTIMATORS:
            estimate, low, high = results[estimator]
            note = _note(results[estimator], missing[estimator])
            clipped_low, clipped_high = _clipped(low, high, scale)
            if (clipped_low, clipped_high) != (low, high):
                note = f"interval clipped to the scale [{scale[0]:g}, {scale[1]:g}]"  # type: ignore[index]
            rows.append(
                {
                    group: name,
                    "estimator": estimator,
                    "estimate": estimate,
                    "ci_low": clipped_low,
                    "ci_high": clipped_high,
                    "half_width": (high - low) / 2,
                    "n_labelled": len(y),
                    "n_judged": len(judged),
                    "n_dropped": len(part) - len(judged),
                    "note": note,
                }
            )
    return pd.DataFrame(rows)


def stratified_labels(groups: np.ndarray, n_labels: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask of ``n_labels`` items spread as evenly as possible over the groups."""
    names = np.unique(groups)
    share, extra = divmod(n_labels, len(names))
    mask = np.zeros(len(groups), dtype=bool)
    for index, name in enumerate(rng.permutation(names)):
        members = np.flatnonzero(groups == name)
        take = min(len(members), share + (index < extra))
        mask[rng.choice(members, take, replace=False)] = True
    return mask


def ppi_coverage(
    frame: pd.DataFrame,
    *,
    n_labels: int,
    n_subsamples: int,
    seed: int,
    group: str = "model",
    judge: str = "judge_score",
    human: str = "human_score",
    level: float = 0.95,
) -> pd.DataFrame:
    """Repeatedly hide all but ``n_labels`` human scores and check whom the intervals cover.

    Each subsample labels ``n_labels`` items spread evenly over the groups (what
    :func:`stratified_labels` draws); the target is each group's human mean on all items.

    Returns:
        One row per (subsample, group, estimator) with ``truth``, the interval, ``covered``
        and ``half_width``.

    Examples:
        >>> from judgekit.stats.examples import labelled_judgments
        >>> frame = labelled_judgments(every_label=True)
        >>> coverage = ppi_coverage(frame, n_labels=20, n_subsamples=30, seed=1)
        >>> sorted(coverage["estimator"].unique())
        ['human_only', 'judge_only', 'ppi']
    """
    full = frame.dropna(subset=[judge, human]).reset_index(drop=True)
    truth = full.groupby(group)[human].mean()
    rng = np.random.default_rng(seed)
    parts = []
    for subsample in range(n_subsamples):
        mask = stratified_labels(full[group].to_numpy(), n_labels, rng)
        hidden = full.assign(**{human: full[human].where(mask)})
        result = corrected_means(hidden, group=group, judge=judge, human=human, level=level)
        parts.append(result.assign(subsample=subsample))
    out = pd.concat(parts, ignore_index=True)
    out["truth"] = out[group].map(truth)
    out["covered"] = (out["ci_low"] <= out["truth"]) & (out["truth"] <= out["ci_high"])
    return out


def coverage_summary(coverage: pd.DataFrame, *, group: str = "model") -> pd.DataFrame:
    """Share of subsamples covering the truth and mean half-width, per group and estimator.

    Examples:
        >>> from judgekit.stats.examples import labelled_judgments
        >>> frame = labelled_judgments(every_label=True)
        >>> summary = coverage_summary(ppi_coverage(frame, n_labels=20, n_subsamples=30, seed=1))
        >>> print(summary[["model", "estimator", "coverage"]].round(2).to_string(index=False))
        model  estimator  coverage
            a        ppi      0.97
            a judge_only      1.00
            a human_only      0.93
            b        ppi      0.90
            b judge_only      1.00
            b human_only      0.93
    """
    summary = coverage.groupby([group, "estimator"], sort=False).agg(
        coverage=("covered", "mean"),
        mean_half_width=("half_width", "mean"),
        subsamples=("subsample", "nunique"),
    )
    return summary.reset_index()
