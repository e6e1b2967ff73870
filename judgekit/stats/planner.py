"""How many labels? The expected width of the judge-vs-human kappa interval for a label count.

Before anyone labels, only the judge's scores are known. The planner assumes the human agrees
with the judge at a stated kappa and simulates the (judge, human) pairs a labelled sample of
size n would give: the judge's score is drawn from its own score distribution, and the human's
from one of two disagreement models, chosen by the scale (``disagreement="auto"``):

* ``"categorical"`` (scales of up to five levels, e.g. wrong / partly / right): the human copies
  the judge with probability ``1 − d`` and otherwise disagrees, half the time by one scale step
  (a near miss) and half the time by a fresh draw from the judge's distribution
  (``near_miss_share``);
* ``"steps"`` (six levels or more, e.g. 1–10): the human's level is the judge's plus a rounded
  normal offset of ``σ`` scale steps, truncated to the scale. On a fine scale people disagree
  by a notch or two; the categorical model's fresh draws put a tenth of the pairs many steps
  apart and predicted ±0.29 at 15 labels on a 1–10 scale where ±0.13 was observed.

``d`` or ``σ`` is solved so that the population weighted kappa equals the assumed one. The
predicted half-width is half the central ``level`` range of the simulated kappas (the sampling
spread an interval must cover). Kappa as in :mod:`judgekit.stats.agreement` (Cohen 1968).
Checked against real pairs (the riddles study, three levels: within 20 %) and against a
held-back simulation on a 1–10 scale (within 25 %), see ``tests/test_labels.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from judgekit.stats._prep import level_codes
from judgekit.stats.agreement import Weights, disagreement_weights, kappa_stat

#: Disagreement models of the planner; "auto" picks by the number of scale levels.
Disagreement = Literal["auto", "categorical", "steps"]
#: Scales with at least this many levels use the "steps" model under "auto".
STEPS_FROM_LEVELS = 6
Model = Callable[[int, float, float, np.ndarray], np.ndarray]


def _steps_given_judge(k: int, disagree: float, share: float, marginal: np.ndarray) -> np.ndarray:
    """P(human level | judge level) when the human is off by a rounded normal number of steps.

    ``disagree`` in [0, 1) maps to the offset's spread ``σ = d / (1 − d)`` steps (0 to ∞);
    ``share`` and ``marginal`` are unused (the categorical model's parameters).
    """
    sigma = disagree / max(1.0 - disagree, 1e-12)
    offsets = np.arange(k)[None, :] - np.arange(k)[:, None]
    if sigma == 0:
        return np.eye(k)
    table = np.exp(-0.5 * (offsets / sigma) ** 2)
    return table / table.sum(axis=1, keepdims=True)


def _human_given_judge(k: int, disagree: float, share: float, marginal: np.ndarray) -> np.ndarray:
    """P(human level | judge level) of the categorical model: copy, near miss or fresh draw."""
    table = np.zeros((k, k))
    for i in range(k):
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < k]
        table[i, i] += 1.0 - disagree
        for j in neighbours:
            table[i, j] += disagree * share / len(neighbours)
        table[i] += disagree * (1.0 - share if neighbours else 1.0) * marginal
    return table


def _population_kappa(joint: np.ndarray, v: np.ndarray) -> float:
    rows, cols = joint.sum(axis=1), joint.sum(axis=0)
    return float(1.0 - np.sum(v * joint) / (rows @ v @ cols))


def _joint_for_kappa(
    marginal: np.ndarray, v: np.ndarray, kappa: float, share: float, model: Model
) -> np.ndarray:
    """The judge x human cell shares whose population kappa equals ``kappa`` (bisection)."""
    k = len(marginal)
    low, high = 0.0, 1.0
    for _ in range(60):
        disagree = (low + high) / 2
        joint = marginal[:, None] * model(k, disagree, share, marginal)
        if _population_kappa(joint, v) > kappa:
            low = disagree
        else:
            high = disagree
    return marginal[:, None] * model(k, (low + high) / 2, share, marginal)


def disagreement_model(n_levels: int, disagreement: Disagreement = "auto") -> str:
    """The model ``"auto"`` stands for on a scale of ``n_levels`` levels.

    Examples:
        >>> disagreement_model(3), disagreement_model(10)
        ('categorical', 'steps')
    """
    if disagreement not in ("auto", "categorical", "steps"):
        raise ValueError(f"disagreement must be auto, categorical or steps, got {disagreement!r}")
    if disagreement != "auto":
        return disagreement
    return "steps" if n_levels >= STEPS_FROM_LEVELS else "categorical"


def _spread(kappas: np.ndarray, level: float) -> float:
    finite = kappas[np.isfinite(kappas)]
    tail = (1.0 - level) / 2
    return float((np.quantile(finite, 1 - tail) - np.quantile(finite, tail)) / 2)


def plan_kappa_halfwidth(
    judge_scores: Sequence[float] | np.ndarray,
    levels: Sequence[float],
    n_values: Sequence[int],
    *,
    expected_kappa: float = 0.8,
    weights: Weights = "quadratic",
    near_miss_share: float = 0.5,
    n_sim: int = 4000,
    seed: int = 0,
    level: float = 0.95,
    disagreement: Disagreement = "auto",
) -> pd.DataFrame:
    """Predicted half-width of the kappa interval for each label count in ``n_values``.

    Args:
        judge_scores: The judge's scores on the items a sample would be drawn from.
        levels: The rubric's scale, in order.
        n_values: Label counts to plan for.
        expected_kappa: The kappa assumed between judge and human (seed 004's gate: 0.8).
        weights: Kappa weights (``None``, ``"linear"`` or ``"quadratic"``).
        near_miss_share: Share of disagreements that are one scale step off (categorical).
        n_sim: Simulated samples per label count.
        seed: Random seed.
        level: Interval level.
        disagreement: ``"categorical"``, ``"steps"`` or ``"auto"`` (steps from six levels on).

    Returns:
        Columns ``n, half_width, expected_kappa, weights, disagreement``.

    Examples:
        >>> plan = plan_kappa_halfwidth([0, 3, 5, 5, 3, 0, 5, 3], (0, 3, 5), [30, 120], n_sim=500)
        >>> print(plan[["n", "half_width"]].round(2).to_string(index=False))
          n  half_width
         30        0.20
        120        0.11
        >>> ten = plan_kappa_halfwidth([3, 5, 6, 6, 7, 8, 9, 4], range(1, 11), [15], n_sim=500)
        >>> print(ten[["n", "half_width", "disagreement"]].round(2).to_string(index=False))
         n  half_width disagreement
        15        0.18        steps
    """
    values = tuple(float(x) for x in levels)
    codes = level_codes(np.asarray(judge_scores, dtype=float), values)
    k = len(values)
    marginal = np.bincount(codes, minlength=k) / len(codes)
    v = disagreement_weights(values, weights)
    model_name = disagreement_model(k, disagreement)
    model = _steps_given_judge if model_name == "steps" else _human_given_judge
    joint = _joint_for_kappa(marginal, v, expected_kappa, near_miss_share, model).ravel()
    stat = kappa_stat(v)
    rng = np.random.default_rng(seed)
    rows = []
    for n in n_values:
        cells = rng.multinomial(int(n), joint / joint.sum(), size=n_sim).astype(float)
        rows.append(
            {
                "n": int(n),
                "half_width": _spread(stat(cells), level),
                "expected_kappa": expected_kappa,
                "weights": weights or "unweighted",
                "disagreement": model_name,
            }
        )
    return pd.DataFrame(rows)


def observed_kappa_halfwidth(
    judge_scores: Sequence[float] | np.ndarray,
    human_scores: Sequence[float] | np.ndarray,
    levels: Sequence[float],
    n: int,
    *,
    weights: Weights = "quadratic",
    n_subsamples: int = 4000,
    seed: int = 0,
    level: float = 0.95,
) -> float:
    """Half the central ``level`` range of kappa over random n-item subsamples of real pairs.

    Examples:
        >>> judge = [0, 3, 5, 5, 3, 0, 5, 3] * 10
        >>> human = [0, 3, 5, 3, 3, 0, 5, 5] * 10
        >>> round(observed_kappa_halfwidth(judge, human, (0, 3, 5), 30, n_subsamples=500), 2)
        0.12
    """
    values = tuple(float(x) for x in levels)
    k = len(values)
    pairs = level_codes(np.asarray(judge_scores, float), values) * k + level_codes(
        np.asarray(human_scores, float), values
    )
    rng = np.random.default_rng(seed)
    picks = np.argsort(rng.random((n_subsamples, len(pairs))), axis=1)[:, :n]
    sampled = pairs[picks]
    cells = np.stack([(sampled == c).sum(axis=1) for c in range(k * k)], axis=1).astype(float)
    return _spread(kappa_stat(disagreement_weights(values, weights))(cells), level)
