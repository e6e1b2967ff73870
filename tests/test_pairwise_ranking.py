"""Bradley-Terry against an independent MM loop (Hunter 2004), its bootstrap, win rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgekit.stats import CI
from judgekit.stats.pairwise_ranking import bradley_terry, win_rate_vs_baseline


def _games(
    seed: int, n: int = 4000, models: int = 8, prompts: int = 200, ties: float = 0.1
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1.5, 1.5, models)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    winner = np.where(u < ties, "tie", np.where(rng.random(n) < p, "a", "b"))
    names = np.array([f"m{k}" for k in range(models)])
    return pd.DataFrame(
        {"model_a": names[a], "model_b": names[b], "winner": winner,
         "prompt": rng.integers(0, prompts, n)}
    )  # fmt: skip


def _mm_reference(games: pd.DataFrame) -> dict[str, float]:
    """Hunter's (2004) MM iteration p_i <- W_i / sum_j n_ij / (p_i + p_j), ties as half wins."""
    models = sorted(set(games["model_a"]) | set(games["model_b"]))
    k = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for a, b, w in games[["model_a", "model_b", "winner"]].itertuples(index=False):
        score = {"a": 1.0, "b": 0.0, "tie": 0.5}[w]
        wins[k[a], k[b]] += score
        wins[k[b], k[a]] += 1.0 - score
    played = wins + wins.T
    p = np.ones(len(models))
    for _ in range(20000):
        new = wins.sum(axis=1) / (played / (p[:, None] + p[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < 1e-15:
            break
        p = new
    theta = np.log(p)
    return dict(zip(models, theta - theta.mean(), strict=True))


def test_strengths_match_an_independent_mm_loop() -> None:
    games = _games(0)
    ours = bradley_terry(games, ci=CI(None)).set_index("model")["strength"]
    reference = _mm_reference(games)
    for model, value in reference.items():
        assert ours[model] == pytest.approx(value, abs=1e-6)


def test_the_doctest_example_matches_the_mm_loop() -> None:
    games = pd.DataFrame({"model_a": ["x", "x", "y", "x"], "model_b": ["y", "z", "z", "y"],
                          "winner": ["a", "a", "tie", "b"]})  # fmt: skip
    ours = bradley_terry(games, ci=CI(None)).set_index("model")["strength"]
    for model, value in _mm_reference(games).items():
        assert ours[model] == pytest.approx(value, abs=1e-6)


def test_bootstrap_is_seeded_clustered_and_covers_the_truth() -> None:
    games = _games(1, ties=0.0)  # without ties the generating strengths are the estimand
    ci = CI("percentile", n_boot=300, seed=7, level=0.9)
    table = bradley_terry(games, cluster="prompt", ci=ci)
    pd.testing.assert_frame_equal(table, bradley_terry(games, cluster="prompt", ci=ci))
    assert (table["level"] == 0.9).all() and (table["n_clusters"] == 200).all()
    assert table["model"].tolist() == [f"m{k}" for k in range(7, -1, -1)]
    truth = dict(zip(table["model"], np.linspace(1.5, -1.5, 8), strict=True))
    covered = [lo <= truth[m] <= hi for m, lo, hi in table[["model", "ci_low", "ci_high"]].values]
    assert sum(covered) >= 6
    assert (table["rank_low"] <= table["rank"]).all() and (
        table["rank"] <= table["rank_high"]
    ).all()


def test_davidson_ties_recover_the_tie_share() -> None:
    games = _games(2, n=3000, models=4)
    table = bradley_terry(games, ties="davidson", ci=CI(None))
    half = bradley_terry(games, ci=CI(None)).set_index("model")["strength"]
    assert table["tie_parameter"].iloc[0] > 0
    assert table.set_index("model")["strength"].rank().equals(half.rank())


def test_win_rate_counts_a_tie_as_half() -> None:
    games = pd.DataFrame(
        {"model_a": ["x", "base", "x", "y"], "model_b": ["base", "x", "base", "base"],
         "winner": ["a", "tie", "b", "a"]}
    )  # fmt: skip
    table = win_rate_vs_baseline(games, "base", ci=CI(None)).set_index("model")
    assert table.loc["x", "estimate"] == pytest.approx(0.5) and table.loc["x", "n"] == 3
    with pytest.raises(ValueError, match="baseline 'nobody'"):
        win_rate_vs_baseline(games, "nobody")


def test_bad_winner_is_refused_in_one_line() -> None:
    games = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A>B"]})
    with pytest.raises(ValueError, match="winner 'A>B' is not 'a', 'b' or 'tie'"):
        bradley_terry(games)


def test_length_control_removes_a_known_length_preference() -> None:
    from judgekit.stats import length_controlled_win_rate, longer_answer_win_rate

    rng = np.random.default_rng(11)
    n = 3000
    longer = rng.normal(40, 60, n)  # the model writes longer answers than the baseline
    p = 1 / (1 + np.exp(-(0.0 + 2.0 * np.tanh(longer / 60))))  # equal quality at equal length
    won = rng.random(n) < p
    games = pd.DataFrame(
        {"model_a": "m", "model_b": "base", "winner": np.where(won, "a", "b"),
         "length_a": 200 + longer, "length_b": 200.0, "prompt": rng.integers(0, 300, n)}
    )  # fmt: skip
    row = length_controlled_win_rate(games, "base", cluster="prompt").iloc[0]
    assert row["raw_win_rate"] > 0.6 and row["ci_low"] < 0.5 < row["ci_high"]
    assert row["length_coef"] > 1.0 and row["level"] == 0.95
    bias = longer_answer_win_rate(games, cluster="prompt").iloc[0]
    assert bias["ci_low"] > 0.5 and bias["n"] == n


def _ridge_reference(games: pd.DataFrame, alpha: float) -> dict[str, float]:
    """The ridge MAP by a general optimiser: ties as half wins, prior -alpha/2 sum t_i^2."""
    from scipy.optimize import minimize

    models = sorted(set(games["model_a"]) | set(games["model_b"]))
    a = games["model_a"].map({m: i for i, m in enumerate(models)}).to_numpy()
    b = games["model_b"].map({m: i for i, m in enumerate(models)}).to_numpy()
    score = games["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()

    def loss(t: np.ndarray) -> tuple[float, np.ndarray]:
        d = t[a] - t[b]
        value = (score * np.logaddexp(0, -d) + (1 - score) * np.logaddexp(0, d)).sum()
        residual = 1 / (1 + np.exp(-d)) - score  # d loss / d d
        grad = np.bincount(a, residual, len(models)) - np.bincount(b, residual, len(models))
        return float(value + alpha / 2 * t @ t), grad + alpha * t

    found = minimize(loss, np.zeros(len(models)), jac=True, method="BFGS", options={"gtol": 1e-12})
    return dict(zip(models, found.x - found.x.mean(), strict=True))


def _swept(seed: int) -> pd.DataFrame:
    """Eight models where m7 loses every game: no finite maximum-likelihood estimate."""
    games = _games(seed, n=800)
    loser_a, loser_b = games["model_a"] == "m7", games["model_b"] == "m7"
    games.loc[loser_a, "winner"], games.loc[loser_b, "winner"] = "b", "a"
    return games


def test_a_model_that_never_scores_is_named_not_sent_to_minus_infinity() -> None:
    with pytest.raises(ValueError, match=r"^bradley_terry: m7 scores no win or tie .* alpha > 0"):
        bradley_terry(_swept(3), ci=CI(None))
    games = pd.DataFrame({"model_a": ["p", "r", "q", "p", "r"],
                          "model_b": ["r", "p", "s", "q", "s"],
                          "winner": ["a", "a", "tie", "a", "a"]})  # fmt: skip
    with pytest.raises(ValueError, match="q, s score no win"):  # a group, not one model
        bradley_terry(games, ci=CI(None))


def test_the_ridge_matches_a_general_optimiser() -> None:
    for games in (_swept(4), _games(5, n=600)):
        for alpha in (0.1, 2.0):
            ours = bradley_terry(games, alpha=alpha, ci=CI(None)).set_index("model")["strength"]
            for model, value in _ridge_reference(games, alpha).items():
                assert ours[model] == pytest.approx(value, abs=1e-6)
    table = bradley_terry(_swept(4), alpha=0.5, ties="davidson", ci=CI(None))
    assert np.isfinite(table["strength"]).all() and table["model"].iloc[-1] == "m7"


def test_replicates_without_an_estimate_are_counted_and_can_void_the_interval() -> None:
    ci = CI("percentile", n_boot=200, seed=1)
    few = bradley_terry(_games(6, n=60, models=4, ties=0.0), ci=ci)  # 2 resamples sweep a model
    assert few["note"].str.startswith("2 of 200 replicates had no finite estimate").all()
    assert few["ci_low"].notna().all()
    fewer = _games(6, n=20, models=4, ties=0.0)  # 61 do: more than the 2.5 % tail
    voided = bradley_terry(fewer, ci=ci)
    assert voided["ci_low"].isna().all() and voided["strength"].notna().all()
    assert voided["note"].str.endswith("too many for an interval: pass alpha > 0").all()
    ridge = bradley_terry(fewer, alpha=1.0, ci=ci)
    assert ridge["ci_low"].notna().all() and (ridge["note"] == "").all()
    assert ridge["ci_method"].iloc[0].endswith("seed 1), prior alpha 1")
