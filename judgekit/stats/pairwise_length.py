"""Length in pairwise judging: how often the longer answer wins, and a length-controlled win rate.

Lengths are given per game as two columns (``length_a``, ``length_b``: characters, words or
tokens, as the caller counted them; AlpacaEval counts characters, its issue #270). Every
interval is clustered when ``cluster`` names a column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from scipy.special import expit

from judgekit.stats._bootstrap import CI
from judgekit.stats._intervals import share_interval
from judgekit.stats._prep import result_row


def _codes(frame: pd.DataFrame, cluster: str | None) -> np.ndarray:
    labels = frame[cluster].astype(str) if cluster else pd.Series(np.arange(len(frame)))
    codes: np.ndarray = pd.factorize(labels)[0].astype(np.int64)
    return codes


def longer_answer_win_rate(
    games: pd.DataFrame,
    *,
    winner: str = "winner",
    length_a: str = "length_a",
    length_b: str = "length_b",
    cluster: str | None = None,
    ci: CI = CI("analytic"),
) -> pd.DataFrame:
    """Share of decisive verdicts won by the longer answer; 0.5 means no length preference.

    ``rate = #{decisive games won by the longer answer} / #{decisive games of unequal
    length}`` (the verbosity bias of Zheng et al. 2023, section 3.3; FastChat #3911 measures
    68 % on GPT-4's MT-Bench pair judgments). Ties and equal lengths are counted in
    ``n_dropped``.

    >>> games = pd.DataFrame({"winner": ["a", "b", "a", "tie"], "length_a": [90, 10, 5, 3],
    ...                       "length_b": [20, 40, 50, 1]})
    >>> row = longer_answer_win_rate(games, ci=CI(None)).iloc[0]
    >>> round(float(row["estimate"]), 3), int(row["n"]), int(row["n_dropped"])
    (0.667, 3, 1)
    """
    difference = games[length_a].to_numpy(float) - games[length_b].to_numpy(float)
    decisive = games[winner].isin(["a", "b"]).to_numpy() & (difference != 0)
    kept = games.loc[decisive]
    hits = (kept[winner] == "a").to_numpy() == (difference[decisive] > 0)
    found = share_interval(hits, _codes(kept, cluster), ci)
    row = result_row(
        **found, n=int(hits.size), method="longer answer wins", n_dropped=int((~decisive).sum()),
        dropped_reason="a tie, an unparsed verdict or equal lengths" if (~decisive).any() else "",
    )  # fmt: skip
    return pd.DataFrame([{**row, "level": ci.level}])


def length_controlled_win_rate(
    games: pd.DataFrame,
    baseline: str,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    length_a: str = "length_a",
    length_b: str = "length_b",
    cluster: str | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Each model's win rate against ``baseline`` with the length difference held at zero.

    Per model, a logistic GLM of the half-win score ``y`` (1 win, 0.5 tie, 0 loss) on the
    length term: ``logit P(win) = b0 + b1 tanh((len_m - len_base) / sd)``, ``sd`` the standard
    deviation of the length differences over all games with the baseline; the length-controlled
    win rate is ``sigma(b0)``, the expected win rate at equal length (Dubois et al. 2024,
    AlpacaEval 2's LC win rate, without its instruction-difficulty term). Both coefficients are
    reported with cluster-robust SEs (statsmodels, ``cov_type="cluster"``) when ``cluster`` is
    given, model-based otherwise; the interval is ``sigma(b0 -/+ z se)``.

    >>> rng = np.random.default_rng(0)
    >>> n = 400
    >>> longer = rng.normal(0, 50, n)
    >>> won = rng.random(n) < 1 / (1 + np.exp(-(0.0 + 1.5 * np.tanh(longer / 50))))
    >>> games = pd.DataFrame({"model_a": "m", "model_b": "base", "winner": np.where(won, "a", "b"),
    ...                       "length_a": 100 + longer, "length_b": 100.0})
    >>> row = length_controlled_win_rate(games, "base").iloc[0]
    >>> bool(abs(row["estimate"] - 0.5) < 0.07), bool(row["length_coef"] > 0.8)
    (True, True)
    """
    base_is_a = games[model_a] == baseline
    with_base = games.loc[base_is_a ^ (games[model_b] == baseline)]
    if with_base.empty:
        raise ValueError(f"baseline {baseline!r} plays no game in the comparisons")
    flip = (with_base[model_a] == baseline).to_numpy()
    score = with_base[winner].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(float)
    if np.isnan(score).any():
        raise ValueError("games: winner must be 'a', 'b' or 'tie' (parsed verdicts only)")
    y = np.where(flip, 1.0 - score, score)
    difference = with_base[length_a].to_numpy(float) - with_base[length_b].to_numpy(float)
    difference = np.where(flip, -difference, difference)
    spread = float(np.std(difference)) or 1.0
    model = np.where(flip, with_base[model_b], with_base[model_a])
    z = float(stats.norm.ppf(0.5 + level / 2))
    rows = []
    for name in sorted(set(model)):
        use = model == name
        design = sm.add_constant(np.tanh(difference[use] / spread), has_constant="add")
        glm = sm.GLM(y[use], design, family=sm.families.Binomial())
        codes = _codes(with_base.loc[use], cluster)
        fit = glm.fit(cov_type="cluster", cov_kwds={"groups": codes}) if cluster else glm.fit()
        b0, b1 = (float(v) for v in fit.params)
        se0, se1 = (float(v) for v in fit.bse)
        rows.append({"model": name, "baseline": baseline, **result_row(
            estimate=float(expit(b0)), ci_low=float(expit(b0 - z * se0)),
            ci_high=float(expit(b0 + z * se0)), n=int(use.sum()),
            method="length-controlled win rate (logistic GLM, tanh length term)",
            ci_method="cluster-robust GLM" if cluster else "model-based GLM",
            **({"n_clusters": int(codes.max()) + 1} if cluster else {}),
        ), "raw_win_rate": float(y[use].mean()), "intercept": b0, "intercept_se": se0,
            "length_coef": b1, "length_coef_se": se1, "length_sd": spread,
            "level": level})  # fmt: skip
    return pd.DataFrame(rows)
