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
