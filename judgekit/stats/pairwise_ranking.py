"""Rankings from pairwise comparisons: Bradley-Terry with a clustered bootstrap, win rates.

The input is a long table of games: ``model_a``, ``model_b``, ``winner`` (``"a"``, ``"b"`` or
``"tie"``, in terms of model_a/model_b) and an optional cluster column (the prompt): two
orders of one pair, or two pairs on one prompt, are not independent, so every interval here
resamples whole clusters (a seeded one-stage cluster bootstrap, Field & Welsh 2007) and states
its level. :func:`judgekit.data.pairwise.games` turns a comparison table into games.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.sparse import csgraph
from scipy.special import expit

from judgekit.stats._bootstrap import CI, as_generator
from judgekit.stats._intervals import share_interval
from judgekit.stats._prep import result_row

_OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}
_NEWTON_STEPS = 60


@dataclass(frozen=True)
class _Games:
    """Games aggregated per cluster x unordered model pair (lo < hi)."""

    models: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray
    wins: sparse.csr_matrix  # (clusters, pairs): lo's wins, a tie counted as half
    ties: sparse.csr_matrix  # (clusters, pairs): ties
    games: sparse.csr_matrix  # (clusters, pairs): games played


def _aggregate(
    frame: pd.DataFrame, model_a: str, model_b: str, winner: str, cluster: str | None
) -> _Games:
    missing = [c for c in (model_a, model_b, winner, cluster) if c and c not in frame.columns]
    if missing:
        raise ValueError(f"comparisons: missing column(s) {missing}; present: {list(frame)}")
    outcome = frame[winner].map(_OUTCOME)
    if outcome.isna().any():
        bad = frame.loc[outcome.isna(), winner].iloc[0]
        raise ValueError(f"comparisons: winner {bad!r} is not 'a', 'b' or 'tie'")
    if (frame[model_a] == frame[model_b]).any():
        raise ValueError("comparisons: a model is compared with itself")
    names = np.concatenate([frame[model_a].to_numpy(str), frame[model_b].to_numpy(str)])
    unique, codes = np.unique(names, return_inverse=True)
    models = tuple(str(m) for m in unique)
    i, j = codes[: len(frame)], codes[len(frame) :]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    s = outcome.to_numpy(float)
    lo_wins = np.where(i == lo, s, 1.0 - s)
    pair_codes, pair_of_game = np.unique(lo * len(models) + hi, return_inverse=True)
    if cluster is None:
        cluster_of_game = np.arange(len(frame))
    else:
        if frame[cluster].isna().any():
            raise ValueError(f"cluster column {cluster!r} has empty values")
        cluster_of_game = pd.factorize(frame[cluster].astype(str))[0]
    shape = (int(cluster_of_game.max()) + 1, pair_codes.size)

    def table(values: np.ndarray) -> sparse.csr_matrix:
        return sparse.csr_matrix((values, (cluster_of_game, pair_of_game)), shape=shape)

    return _Games(
        models, pair_codes // len(models), pair_codes % len(models), table(lo_wins),
        table((s == 0.5).astype(float)), table(np.ones(len(frame))),
    )  # fmt: skip


def _fit_half(
    wins: np.ndarray, games: np.ndarray, g: _Games, alpha: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method for ties-as-half-wins Bradley-Terry, all replicates at once.

    Maximises ``sum_p w_p log sigma(t_lo - t_hi) + (n_p - w_p) log sigma(t_hi - t_lo)
    - alpha/2 sum_i t_i^2`` (the first model fixed at 0 when ``alpha`` is 0); returns centred
    strengths ``(B, M)`` and convergence flags.
    """
    reps, m = wins.shape[0], len(g.models)
    free = 0 if alpha else 1  # without a prior the strengths are defined up to a shift
    theta = np.zeros((reps, m))
    incidence = np.zeros((g.lo.size, m))
    incidence[np.arange(g.lo.size), g.lo] = 1.0
    incidence[np.arange(g.lo.size), g.hi] = -1.0
    flat_lo_hi, flat_hi_lo = g.lo * m + g.hi, g.hi * m + g.lo
    played = np.abs(incidence)
    diagonal = np.arange(m) * (m + 1)
    active = np.arange(reps)  # replicates still moving
    for _ in range(_NEWTON_STEPS):
        t, n, w = theta[active], games[active], wins[active]
        p = expit(t[:, g.lo] - t[:, g.hi])
        grad = (w - n * p) @ incidence - alpha * t
        v = n * p * (1.0 - p)
        flat = np.zeros((active.size, m * m))
        flat[:, flat_lo_hi] = -v
        flat[:, flat_hi_lo] = -v
        flat[:, diagonal] = v @ played + alpha + 1e-10
        info = flat.reshape(active.size, m, m)
        step = np.linalg.solve(info[:, free:, free:], grad[:, free:, None])[..., 0]
        step = np.clip(step, -5.0, 5.0)
        theta[active, free:] += step
        active = active[np.max(np.abs(step), axis=1) >= 1e-10]
        if not active.size:
            break
    converged = np.ones(reps, bool)
    converged[active] = False
    has_games = (games @ played) > 0
    theta = np.where(has_games, theta, np.nan)
    return theta - np.nanmean(theta, axis=1, keepdims=True), converged


def _fit_davidson(
    wins: np.ndarray, ties: np.ndarray, games: np.ndarray, g: _Games, alpha: float = 0.0
) -> tuple[np.ndarray, float]:
    """Davidson's (1970) tie model for one replicate: centred strengths and the tie parameter."""
    m, free = len(g.models), 0 if alpha else 1
    strict_lo = wins - ties / 2.0  # wins counted a tie as half
    strict_hi = games - strict_lo - ties

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta = np.concatenate([np.zeros(free), x[:-1]])
        log_nu = x[-1]
        a, b = theta[g.lo], theta[g.hi]
        tie_term = log_nu + (a + b) / 2
        top = np.maximum(np.maximum(a, b), tie_term)
        terms = np.exp(a - top) + np.exp(b - top) + np.exp(tie_term - top)
        log_z = top + np.log(terms)
        ll = strict_lo @ a + strict_hi @ b + ties @ tie_term - games @ log_z
        pa, pb, pt = (np.exp(t - log_z) for t in (a, b, tie_term))
        d_a = strict_lo + ties / 2 - games * (pa + pt / 2)
        d_b = strict_hi + ties / 2 - games * (pb + pt / 2)
        grad = np.bincount(g.lo, d_a, m) + np.bincount(g.hi, d_b, m)
        d_nu = float(ties.sum() - games @ pt)
        prior = alpha / 2 * theta @ theta  # the ridge: 0 without one
        return -float(ll - prior), -np.concatenate([(grad - alpha * theta)[free:], [d_nu]])

    found = optimize.minimize(loss, np.zeros(m + 1 - free), jac=True, method="L-BFGS-B")
    theta = np.concatenate([np.zeros(free), found.x[:-1]])
    return theta - theta.mean(), float(np.exp(found.x[-1]))


def _fit_rao_kupper(
    wins: np.ndarray, ties: np.ndarray, games: np.ndarray, g: _Games, alpha: float = 0.0
) -> tuple[np.ndarray, float]:
    """Rao & Kupper's (1967) tie model for one replicate: centred strengths and ``theta``."""
    m, free = len(g.models), 0 if alpha else 1
    win_lo = wins - ties / 2.0 + ties  # strict wins of lo plus ties: lo's share of the terms
    win_hi = games - (wins - ties / 2.0)  # strict wins of hi plus ties

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        strength = np.concatenate([np.zeros(free), x[:-1]])
        theta = 1.0 + np.exp(x[-1])
        a, b = strength[g.lo], strength[g.hi]
        log_1 = np.logaddexp(a, np.log(theta) + b)  # log(p_lo + theta p_hi)
        log_2 = np.logaddexp(np.log(theta) + a, b)  # log(theta p_lo + p_hi)
        ll = win_lo @ (a - log_1) + win_hi @ (b - log_2) + ties.sum() * np.log(theta**2 - 1)
        q1, q2 = np.exp(a - log_1), np.exp(b - log_2)
        d_a = win_lo * (1 - q1) - win_hi * (1 - q2)
        d_b = win_hi * (1 - q2) - win_lo * (1 - q1)
        grad = np.bincount(g.lo, d_a, m) + np.bincount(g.hi, d_b, m)
        d_theta = (
            -win_lo @ np.exp(b - log_1) - win_hi @ np.exp(a - log_2)
            + ties.sum() * 2 * theta / (theta**2 - 1)
        )  # fmt: skip
        prior = alpha / 2 * strength @ strength
        step = (grad - alpha * strength)[free:]
        return -float(ll - prior), -np.concatenate([step, [d_theta * (theta - 1.0)]])

    found = optimize.minimize(loss, np.zeros(m + 1 - free), jac=True, method="L-BFGS-B")
    strength = np.concatenate([np.zeros(free), found.x[:-1]])
    return strength - strength.mean(), float(1.0 + np.exp(found.x[-1]))


#: The tie models fitted by likelihood (``half`` counts a tie as half a win instead).
_TIE_MODELS = {"davidson": _fit_davidson, "rao-kupper": _fit_rao_kupper}


def _unbounded(wins: np.ndarray, games: np.ndarray, g: _Games) -> list[str]:
    """Models that score nothing (no win, no tie) against the others, if the MLE diverges.

    The maximum-likelihood strengths are finite exactly when the graph "i scored against j"
    over the models that played is strongly connected (Zermelo 1929; Ford 1957); otherwise
    a group that never scores against the rest (a sink of that graph) runs to minus infinity.
    """
    m = len(g.models)
    keep = np.concatenate([wins, games - wins]) > 0  # edge lo -> hi, then hi -> lo
    rows, cols = np.r_[g.lo, g.hi][keep], np.r_[g.hi, g.lo][keep]
    scored = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, m))
    played = np.flatnonzero(np.bincount(np.r_[g.lo, g.hi], np.r_[games, games], m) > 0)
    scored = scored[played][:, played]
    count, component = csgraph.connected_components(scored, directed=True, connection="strong")
    if count == 1:
        return []
    rows, cols = scored.nonzero()
    scoring = set(component[rows][component[rows] != component[cols]])
    sink = min(c for c in range(count) if c not in scoring)
    return [g.models[played[k]] for k in np.flatnonzero(component == sink)]


def _replicate_counts(g: _Games, ci: CI) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = as_generator(ci.seed)
    clusters = g.games.shape[0]
    draws = rng.integers(0, clusters, size=(ci.n_boot, clusters))
    draws += np.arange(ci.n_boot)[:, None] * clusters
    times = np.bincount(draws.ravel(), minlength=ci.n_boot * clusters)
    drawn = times.reshape(ci.n_boot, clusters).T.astype(float)
    wins, ties, games = (np.asarray(t.T @ drawn).T for t in (g.wins, g.ties, g.games))
    return wins, ties, games


def bradley_terry(
    comparisons: pd.DataFrame,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    cluster: str | None = None,
    ties: str = "half",
    alpha: float = 0.0,
    ci: CI = CI("percentile", n_boot=1000, seed=0),
) -> pd.DataFrame:
    """Bradley-Terry strengths with a seeded cluster-bootstrap interval and rank intervals.

    ``P(i beats j) = exp(t_i) / (exp(t_i) + exp(t_j))`` (Bradley & Terry 1952), strengths ``t``
    on the natural log-odds scale, centred to mean 0. ``ties="half"`` counts a tie as half a
    win for each side (Chatbot Arena's convention); ``ties="davidson"`` fits Davidson's (1970)
    model, ``P(tie) = nu sqrt(p_i p_j) / (p_i + p_j + nu sqrt(p_i p_j))``, whose ``nu`` is in
    the ``tie_parameter`` column; ``ties="rao-kupper"`` fits Rao & Kupper's (1967) threshold
    model, ``P(i beats j) = p_i / (p_i + theta p_j)``, ``P(tie) = (theta^2 - 1) p_i p_j /
    ((p_i + theta p_j)(theta p_i + p_j))``, ``theta >= 1`` in ``tie_parameter`` (Rao, P. V. &
    Kupper, L. L., JASA 62, 1967). Fitted by Newton's method (all replicates at once) or, for
    Davidson, L-BFGS per replicate. Intervals: percentile, ``ci.n_boot`` replicates drawing
    whole clusters (each game its own cluster without ``cluster``), ``ci.seed``; ``rank_low``
    and ``rank_high`` are the interval of each model's rank (1 = strongest) over replicates.

    The maximum-likelihood strengths are finite only when no group of models fails to win or
    tie against all the others (Ford 1957); otherwise this raises, naming the group, unless
    ``alpha > 0`` adds a Gaussian prior ``-alpha/2 sum t_i^2`` to the log-likelihood (a ridge;
    choix's ``alpha``). Bootstrap replicates without a finite estimate are left out and
    counted in ``note``; when more than the interval's tail share of them are, the interval
    is not reported.

    >>> games = pd.DataFrame({"model_a": ["x", "x", "y", "x"], "model_b": ["y", "z", "z", "y"],
    ...                       "winner": ["a", "a", "tie", "b"]})
    >>> bradley_terry(games, ci=CI(None))[["model", "strength", "rank"]].round(3).values.tolist()
    [['x', 0.583, 1], ['y', 0.157, 2], ['z', -0.74, 3]]
    >>> rk = bradley_terry(games, ties="rao-kupper", ci=CI(None))
    >>> rk["model"].tolist(), bool(rk["tie_parameter"].iloc[0] > 1)
    (['x', 'y', 'z'], True)
    >>> swept = pd.DataFrame({"model_a": ["x", "x"], "model_b": ["y", "y"], "winner": ["a", "a"]})
    >>> bradley_terry(swept, ci=CI(None))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: bradley_terry: y scores no win or tie against the other models, ...
    >>> bradley_terry(swept, alpha=1.0, ci=CI(None))["strength"].round(3).tolist()
    [0.521, -0.521]
    """
    if ties != "half" and ties not in _TIE_MODELS:
        raise ValueError(f"ties must be 'half', 'davidson' or 'rao-kupper', not {ties!r}")
    if not alpha >= 0:
        raise ValueError(f"alpha must be 0 or more, not {alpha!r}")
    g = _aggregate(comparisons, model_a, model_b, winner, cluster)
    point = [np.asarray(t.sum(axis=0)) for t in (g.wins, g.ties, g.games)]
    weakest = [] if alpha else _unbounded(point[0][0], point[2][0], g)
    if weakest:
        raise ValueError(
            f"bradley_terry: {', '.join(weakest)} score{'s' if len(weakest) == 1 else ''} no "
            "win or tie against the other models, so the maximum-likelihood strengths are "
            "unbounded; pass alpha > 0 (a Gaussian prior on the strengths) or leave them out"
        )
    nu = np.nan
    if ties == "half":
        estimate, ok = _fit_half(point[0], point[2], g, alpha)
        estimate = estimate[0]
    else:
        estimate, nu = _TIE_MODELS[ties](point[0][0], point[1][0], point[2][0], g, alpha)
        ok = np.array([True])
    low = high = rank_low = rank_high = np.full(len(g.models), np.nan)
    ci_method, notes = "none", []
    if ci.method is not None:
        ci.offered(("percentile",), "bradley_terry")
        wins, tie_counts, games = _replicate_counts(g, ci)
        finite = np.array(
            [alpha > 0 or not _unbounded(w, n, g) for w, n in zip(wins, games, strict=True)]
        )
        if ties == "half":
            boot, good = _fit_half(wins, games, g, alpha)
        else:
            boot = np.stack(
                [
                    _TIE_MODELS[ties](w, t, n, g, alpha)[0]
                    for w, t, n in zip(wins, tie_counts, games, strict=True)
                ]
            )
            good = np.ones(len(boot), bool)
        if (~good & finite).any():
            notes.append(f"{int((~good & finite).sum())} replicates did not converge")
        tail = (1 - ci.level) / 2
        if (~finite).any():
            notes.append(
                f"{int((~finite).sum())} of {ci.n_boot} replicates had no finite estimate (a "
                "model won or lost all its resampled games) and are left out"
            )
        boot = boot[good & finite]
        if (~finite).mean() <= tail and len(boot):
            low, high = np.nanquantile(boot, [tail, 1 - tail], axis=0)
            ranks = (-np.nan_to_num(boot, nan=-np.inf)).argsort(axis=1).argsort(axis=1) + 1
            rank_low, rank_high = np.quantile(ranks, [tail, 1 - tail], axis=0, method="nearest")
        else:
            notes.append("too many for an interval: pass alpha > 0")
        where = "cluster" if cluster else "game"
        ci_method = f"percentile, {where} bootstrap ({ci.n_boot} replicates, seed {ci.seed})"
        if alpha:
            ci_method += f", prior alpha {alpha:g}"
    rank = (-estimate).argsort().argsort() + 1
    games_per_model = np.bincount(g.lo, point[2][0], len(g.models)) + np.bincount(
        g.hi, point[2][0], len(g.models)
    )
    rows = []
    for k, model in enumerate(g.models):
        row = result_row(
            estimate=float(estimate[k]), ci_low=float(low[k]), ci_high=float(high[k]),
            n=int(games_per_model[k]), ci_method=ci_method,
            method=f"bradley-terry, ties {ties}" + (f", prior alpha {alpha:g}" if alpha else ""),
            n_clusters=int(g.games.shape[0]),
            note="; ".join(notes if ok.all() else ["the estimate did not converge", *notes]),
        )  # fmt: skip
        rows.append({"model": model, "strength": row.pop("estimate"), **row, "rank": int(rank[k]),
                     "rank_low": float(rank_low[k]), "rank_high": float(rank_high[k]),
                     "level": ci.level, "tie_parameter": nu})  # fmt: skip
    return pd.DataFrame(rows).sort_values("rank", kind="stable").reset_index(drop=True)


def _baseline_games(
    frame: pd.DataFrame, baseline: str, model_a: str, model_b: str, winner: str
) -> pd.DataFrame:
    if baseline not in set(frame[model_a]) | set(frame[model_b]):
        raise ValueError(f"baseline {baseline!r} plays no game in the comparisons")
    with_base = frame.loc[(frame[model_a] == baseline) ^ (frame[model_b] == baseline)].copy()
    base_is_a = with_base[model_a] == baseline
    score = with_base[winner].map(_OUTCOME)
    with_base["model"] = np.where(base_is_a, with_base[model_b], with_base[model_a])
    with_base["score"] = np.where(base_is_a, 1.0 - score, score)
    with_base["sign"] = np.where(base_is_a, -1.0, 1.0)
    return with_base


def win_rate_vs_baseline(
    comparisons: pd.DataFrame,
    baseline: str,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    cluster: str | None = None,
    ci: CI = CI("analytic"),
) -> pd.DataFrame:
    """Each model's win rate against ``baseline``, a tie counted as half a win.

    ``rate_m = (wins + ties / 2) / games`` over the games of m against the baseline
    (AlpacaEval's win rate; Li et al. 2023). Each game enters as two halves sharing one unit
    (the game, or its cluster), so :func:`judgekit.stats.share_interval` gives the interval:
    Wilson's at the cluster-robust effective n for ``CI("analytic")``, else a bootstrap of
    whole units.

    >>> games = pd.DataFrame({"model_a": ["x", "base", "y", "y"],
    ...                       "model_b": ["base", "x", "base", "base"],
    ...                       "winner": ["a", "b", "tie", "b"]})
    >>> win_rate_vs_baseline(games, "base", ci=CI(None))[["model", "estimate"]].values.tolist()
    [['x', 1.0], ['y', 0.25]]
    """
    played = _baseline_games(comparisons, baseline, model_a, model_b, winner)
    rows = []
    for model, part in played.groupby("model", sort=True):
        # each game is two halves sharing its unit: a win two hits, a tie one, a loss none;
        # the cluster-robust interval then counts every game (or cluster) once
        scores = part["score"].to_numpy()
        hits = np.concatenate([scores > 0.0, scores >= 1.0])
        units = part[cluster].astype(str) if cluster else pd.Series(np.arange(len(part)))
        codes = pd.factorize(units)[0].astype(np.int64)
        found = share_interval(hits, np.concatenate([codes, codes]), ci)
        rows.append({"model": model, "baseline": baseline, **result_row(
            **found, n=len(part), method="win rate vs baseline, tie = half",
        ), "level": ci.level})  # fmt: skip
    return pd.DataFrame(rows)
