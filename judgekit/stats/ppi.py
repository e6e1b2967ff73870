"""Prediction-powered inference: per-model mean scores from all judge scores plus a few labels.

For each answering model with ``n`` human-labelled items (human ``Y``, judge ``Ŷ``) and ``N``
judge-only items (``Ŷᵘ``), the PPI estimate of the human mean is

    θ̂ = mean(Ŷᵘ) − mean(Ŷ − Y)

(the judge's mean, corrected by its average error on the labelled items) with the interval
``θ̂ ± q · sqrt(var(Ŷᵘ)/N + var(Ŷ − Y)/n)``; ``ppi_py`` also applies the power-tuning factor
λ (PPI++). Reference: Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered
inference", Science 382 (2023); Angelopoulos, Duchi, Zrnic, "PPI++" (2023). The estimate and
the standard error are ``ppi_py.ppi_mean_pointestimate`` / ``ppi_py.ppi_mean_ci`` themselves.

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


def _t_over_z(n: int, level: float) -> float:
    """How much wider Student's ``t`` (``n − 1`` df) makes a normal interval at ``level``."""
    upper = (1.0 + level) / 2.0
    return float(stats.t.ppf(upper, n - 1) / stats.norm.ppf(upper))


def _widened(low: object, high: object, factor: float) -> tuple[float, float]:
    """The interval ``factor`` times as wide about its centre; NaN when it has zero width."""
    centre, half = (_scalar(low) + _scalar(high)) / 2.0, (_scalar(high) - _scalar(low)) / 2.0
    if half == 0:
        return np.nan, np.nan
    return centre - factor * half, centre + factor * half


def ppi_mean(
    human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray, level: float
) -> tuple[float, float, float]:
    """PPI estimate and interval of the human mean: ``(estimate, ci_low, ci_high)``.

    ``ppi_py``'s interval with its normal quantile replaced by ``t`` at ``len(human) − 1`` df.
    When every label is the same, power tuning falls back to the labels alone and the interval
    has zero width: it is NaN instead.
    """
    import ppi_py  # on first use: it is slow to import and only PPI needs it

    estimate = ppi_py.ppi_mean_pointestimate(human, judge_labelled, judge_unlabelled)
    low, high = ppi_py.ppi_mean_ci(human, judge_labelled, judge_unlabelled, alpha=1.0 - level)
    return (_scalar(estimate), *_widened(low, high, _t_over_z(len(human), level)))


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


def corrected_means(
    frame: pd.DataFrame,
    *,
    group: str = "model",
    judge: str = "judge_score",
    human: str = "human_score",
    level: float = 0.95,
    min_labels: int = 5,
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

    Returns:
        One row per (group, estimator): ``group, estimator, estimate, ci_low, ci_high,
        half_width, n_labelled, n_judged, n_dropped, note``. A group with fewer than
        ``min_labels`` labelled items gets NaN for PPI and human-only, never a number; the
        ``note`` says why an estimate or interval is missing.

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
            rows.append(
                {
                    group: name,
                    "estimator": estimator,
                    "estimate": estimate,
                    "ci_low": low,
                    "ci_high": high,
                    "half_width": (high - low) / 2,
                    "n_labelled": len(y),
                    "n_judged": len(judged),
                    "n_dropped": len(part) - len(judged),
                    "note": _note(results[estimator], missing[estimator]),
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
            a        ppi      0.93
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
