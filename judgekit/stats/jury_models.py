"""Juries that model the judges: Dawid-Skene (no labels) and weights learned with cross-fitting.

Dawid-Skene treats each item's true level as latent and each judge as a confusion matrix
``pi_j[c, l] = P(judge j says l | true level c)``; EM alternates (Dawid & Skene 1979)

* E-step: ``T_ic proportional to p_c prod_j pi_j[c, y_ij]`` over the judges that scored i;
* M-step: ``p_c = mean_i T_ic`` and
  ``pi_j[c, l] = sum_i T_ic [y_ij = l] / sum_i T_ic [j scored i]``,

starting from each item's vote shares, until the log-likelihood
``sum_i log sum_c p_c prod_j pi_j[c, y_ij]`` gains less than ``tol`` (crowd-kit's
``DawidSkene`` runs the same EM from the same start; the tests compare the two). It uses no
human label, so it can score every item without leaking the label it is judged against.

Learned weights regress the human score on the judges' scores, ``h_i = b_0 + sum_j b_j s_ij``
(least squares), and score item i with the coefficients fitted on the *other* folds only
(cross-fitting, Chernozhukov et al. 2018): folds are whole clusters, so no item is scored by
weights fitted on its own label or on its cluster-mates'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import SeedLike, as_generator
from judgekit.stats._panel import Panel, nearest_level, panel_scores, require_judges
from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, FloatArray, ScaleLike, level_codes
from judgekit.stats.jury import jury_rows
from judgekit.types import UsageError

_FLOOR = 1e-10  # as crowd-kit: no probability is exactly 0, so log-likelihoods stay finite


@dataclass(frozen=True)
class DawidSkene:
    """A fitted Dawid-Skene model.

    Attributes:
        scores: Jury rows (rater ``jury:dawid_skene``; ``value`` = posterior of the level).
        posteriors: Items x levels, ``P(true level | the judges' scores)``.
        confusion: Tidy ``judge, true_level, level, probability``.
        priors: Level -> estimated prevalence.
        iterations: EM iterations run; ``converged`` says whether ``tol`` was reached.
    """

    scores: pd.DataFrame
    posteriors: pd.DataFrame
    confusion: pd.DataFrame
    priors: pd.Series
    iterations: int
    converged: bool


def _m_step(posterior: FloatArray, onehot: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Prevalences and confusion matrices (judge, true level, level) from the posteriors."""
    priors = np.clip(posterior.mean(axis=0), _FLOOR, None)
    counts = np.clip(np.einsum("ic,ijl->jcl", posterior, onehot), _FLOOR, None)
    return priors, counts / counts.sum(axis=2, keepdims=True)


def _em(
    votes: np.ndarray, k: int, max_iter: int, tol: float
) -> tuple[FloatArray, FloatArray, FloatArray, int, bool]:
    """EM on level codes ``votes`` (items x judges, -1 = no score); returns T, p, pi, n, ok.

    The returned prevalences and confusion matrices are the M-step of the final posteriors.
    """
    seen = votes >= 0
    onehot = (votes[:, :, None] == np.arange(k)[None, None, :]).astype(float)  # i, j, l
    posterior = onehot.sum(axis=1) / seen.sum(axis=1, keepdims=True)
    loglik, converged, iterations = -np.inf, False, 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        priors, confusion = _m_step(posterior, onehot)
        per_item = np.einsum("ijl,jcl->ic", onehot, np.log(confusion)) + np.log(priors)[None, :]
        top = per_item.max(axis=1, keepdims=True)
        weights = np.exp(per_item - top)
        total = weights.sum(axis=1, keepdims=True)
        posterior = weights / total
        new = float(np.sum(np.log(total) + top))
        if new - loglik < tol:
            converged = True
            break
        loglik = new
    priors, confusion = _m_step(posterior, onehot)
    return posterior, priors, confusion, iterations, converged


def dawid_skene(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    scale: ScaleLike = None,
    columns: Columns = DEFAULT_COLUMNS,
    max_iter: int = 2000,
    tol: float = 1e-8,
) -> DawidSkene:
    """Dawid-Skene jury: each judge's confusion matrix and each item's most probable level.

    Reference: Dawid, A. P., & Skene, A. M. (1979). Maximum likelihood estimation of observer
    error-rates using the EM algorithm. JRSS C 28(1), 20-28. Formulas in the module docstring.
    A judge that failed on an item simply gives no vote there; an item no judge scored is
    ``unscored``; two levels with the same posterior are a ``tie``.

    Args:
        df: Long table (item, rater, score, status).
        judges: The panel (values of the rater column).
        scale: Ordered levels; default the observed scores.
        columns: Column names (:class:`Columns`).
        max_iter: Most EM iterations.
        tol: Stop when the log-likelihood gains less than this.

    Example:
        >>> long = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "rater": list("abcabc"),
        ...                      "score": [1, 1, 0, 0, 0, 0]})
        >>> fit = dawid_skene(long, ["a", "b", "c"], scale=(0, 1))
        >>> list(fit.scores["score"])
        [1.0, 0.0]
    """
    names = require_judges(judges, 2, "Dawid-Skene")
    panel = panel_scores(df, names, scale=scale, columns=columns)
    k = len(panel.levels)
    raw = panel.scores[names].to_numpy(float)
    rated = ~np.isnan(raw).all(axis=1)
    votes = np.where(np.isnan(raw), -1, level_codes(np.nan_to_num(raw), panel.levels))
    posterior, priors, confusion, iterations, converged = _em(votes[rated], k, max_iter, tol)
    full = np.full((len(raw), k), np.nan)
    full[rated] = posterior
    best = np.nanmax(full, axis=1, initial=-1.0)
    ties = rated & (np.sum(np.isclose(full, best[:, None], rtol=0, atol=1e-12), axis=1) > 1)
    levels = np.asarray(panel.levels, dtype=float)
    label = np.where(
        rated & ~ties, levels[np.argmax(np.nan_to_num(full, nan=-1.0), axis=1)], np.nan
    )
    status = np.where(ties, "tie", "ok").astype(object)
    status[~rated] = "unscored"
    rows = jury_rows(panel, "dawid_skene", label, status, np.where(rated, best, np.nan), names,
                     columns)  # fmt: skip
    grid = pd.MultiIndex.from_product([names, panel.levels, panel.levels])
    tidy = pd.DataFrame(
        {"probability": confusion.ravel()}, index=grid.set_names(["judge", "true_level", "level"])
    ).reset_index()
    return DawidSkene(
        scores=rows,
        posteriors=pd.DataFrame(full, index=panel.scores.index, columns=list(panel.levels)),
        confusion=tidy,
        priors=pd.Series(priors, index=list(panel.levels), name="prior"),
        iterations=iterations,
        converged=converged,
    )


@dataclass(frozen=True)
class CrossFitted:
    """A jury of learned weights, each item scored with weights fitted without its cluster.

    Attributes:
        scores: Jury rows (rater ``jury:weights``; ``value`` = the unrounded prediction), with
            a ``fold`` column.
        weights: Tidy ``fold, term, weight, n_train`` (term ``intercept`` or a judge).
    """

    scores: pd.DataFrame
    weights: pd.DataFrame


def cluster_folds(units: Sequence[object], n_folds: int, seed: SeedLike) -> pd.Series:
    """Assign each distinct unit (a cluster) to one of ``n_folds`` folds, seeded, balanced."""
    distinct = np.asarray(sorted(set(units), key=str), dtype=object)
    order = as_generator(seed).permutation(len(distinct))
    return pd.Series(np.arange(len(distinct)) % n_folds, index=distinct[order])


def _design(panel: Panel, judges: list[object], rows: pd.Index) -> np.ndarray:
    return np.column_stack([np.ones(len(rows)), panel.scores.loc[rows, judges].to_numpy(float)])


def cross_fitted_weights(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    human: object,
    scale: ScaleLike = None,
    columns: Columns = DEFAULT_COLUMNS,
    n_folds: int = 5,
    seed: SeedLike = 0,
) -> CrossFitted:
    """Jury of least-squares weights ``h ~ b_0 + sum_j b_j s_j``, cross-fitted by cluster.

    Items are split into ``n_folds`` folds of whole clusters (``columns.cluster``; each item
    its own cluster when unset); an item in fold f is scored with the weights fitted on the
    labelled items of the other folds, rounded to the nearest level (midway: ``tie``). Items
    lacking a judge's score are ``judge_unscored``. Reference: Chernozhukov, V. et al. (2018).
    Double/debiased machine learning. Econometrics Journal 21(1), C1-C68 (cross-fitting).

    Example:
        >>> rng = np.random.default_rng(1)
        >>> truth = rng.choice([0.0, 3.0, 5.0], size=40)
        >>> rows = [(i, r, t) for i, t in enumerate(truth) for r in ("a", "b", "human")]
        >>> long = pd.DataFrame(rows, columns=["item", "rater", "score"])
        >>> fit = cross_fitted_weights(long, ["a", "b"], human="human", scale=(0, 3, 5))
        >>> bool((fit.scores["score"].to_numpy() == truth).all())
        True
    """
    names = require_judges(judges, 1, "a learned-weights jury")
    if n_folds < 2:
        raise UsageError(f"cross-fitting needs at least 2 folds, got {n_folds}")
    panel = panel_scores(df, [*names, human], scale=scale, columns=columns)
    items = panel.scores.index
    units = panel.clusters.reindex(items) if panel.clusters is not None else pd.Series(items, items)
    if units.isna().any():
        raise UsageError(f"item {units.index[units.isna()][0]!r} has no cluster value")
    n_units = units.nunique()
    if n_units < n_folds:
        raise UsageError(f"cross-fitting in {n_folds} folds needs as many clusters, got {n_units}")
    fold = units.map(cluster_folds(list(units), n_folds, seed)).astype(int)
    judged = panel.complete(names)
    labelled = judged & panel.scores[human].notna()
    value = np.full(len(items), np.nan)
    weights = []
    for f in range(n_folds):
        train = items[labelled & (fold != f)]
        test = items[judged & (fold == f)]
        coef, *_ = np.linalg.lstsq(
            _design(panel, names, train), panel.scores[human].loc[train].to_numpy(float), rcond=None
        )
        value[items.get_indexer(test)] = _design(panel, names, test) @ coef
        for term, weight in zip(["intercept", *names], coef, strict=True):
            weights.append(
                {"fold": f, "term": term, "weight": float(weight), "n_train": len(train)}
            )
    score, ties = nearest_level(value, panel.levels)
    status = np.where(ties, "tie", "ok").astype(object)
    status[~judged.to_numpy()] = "judge_unscored"
    rows = jury_rows(panel, "weights", score, status, value, names, columns)
    rows["fold"] = fold.to_numpy()
    return CrossFitted(scores=rows, weights=pd.DataFrame(weights))
