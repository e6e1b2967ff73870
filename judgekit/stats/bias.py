"""Judge biases: self-preference (naive and controlled for true quality) and length bias.

Self-preference, two ways side by side. The naive way (what the original riddles study did)
compares a judge's mean score on its own family's answers with its mean on other answers
(Welch t-test); but if its own family simply answers better, that difference is quality, not
bias. The controlled ways compare with the human score of the same answer:
(a) Welch test of ``judge - human`` on own vs other answers;
(b) OLS ``score ~ own + human`` and (c) OLS ``score ~ own + human + C(question)``, with SEs
clustered by question (Liang & Zeger 1986 sandwich, statsmodels ``cov_type="cluster"``, t with
G - 1 degrees of freedom). The coefficient of ``own`` is the bias estimate. Caveat: the human
score measures quality with error, and a noisy covariate is under-adjusted (errors in
variables), so (b) and (c) keep part of a true quality gap; (a) has no such attenuation but
assumes judge and human scores share one scale.

Beside the Welch tests (which treat 0/3/5 scores as interval data and answers as independent)
two tests that need neither: (d) OLS of ``judge - human`` on ``own`` with question-clustered
SEs, and (e) a permutation test of the same difference shuffling own/other labels within each
question (:func:`~judgekit.stats.significance.permutation_within_clusters`). Every row states
its assumptions in ``assumption``; correct the p-values of a family with
:func:`~judgekit.stats.significance.adjust_p`.

Length bias: OLS ``score ~ log(length) + human`` per judge with the same clustered SEs
(in the spirit of the length control of Dubois et al. 2024, "Length-Controlled AlpacaEval").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.stats._bootstrap import SeedLike, as_generator
from judgekit.stats._prep import INTERVAL_COLUMNS, Columns, describe_drops, require_columns
from judgekit.stats.regression import clustered_ols, ols_term
from judgekit.stats.significance import permutation_within_clusters
from judgekit.types import UsageError

#: Columns of the tables returned here, in order.
BIAS_COLUMNS: tuple[str, ...] = (
    "judge",
    "method",
    "term",
    *INTERVAL_COLUMNS,
    "p_value",
    "n",
    "n_clusters",
    "n_dropped",
    "dropped_reason",
    "note",
    "assumption",
)

#: What each self-preference method assumes, printed beside its figures.
ASSUMPTIONS: dict[str, str] = {
    "naive_welch": "scores as interval data; answers independent (clustering ignored); "
    "includes true quality differences",
    "judge_minus_human_welch": "scores as interval data on one scale for judge and human; "
    "answers independent (clustering ignored)",
    "judge_minus_human_ols_clustered": "judge - human compared as numbers; questions "
    "independent, answers to one question may correlate (cluster-robust SE)",
    "judge_minus_human_permutation": "no bias = own/other labels exchangeable within a "
    "question; no normality or equal-spacing assumption for the test's validity",
    "ols_human_clustered": "score linear in the human score; cluster-robust SE",
    "ols_human_question_fe_clustered": "score linear in the human score, question fixed "
    "effects; cluster-robust SE",
    "ols_log_length_human_clustered": "score linear in log length and human score; "
    "cluster-robust SE",
}


#: The bias regressions' default columns: judges in ``rater``, SEs clustered on ``question``.
BY_QUESTION = Columns(cluster="question")


def _cluster_column(columns: Columns) -> str:
    """The cluster column; the bias regressions need one (use the item for robust-only SEs)."""
    if columns.cluster is None:
        raise UsageError(
            "bias statistics cluster their SEs: set Columns(cluster=...) (the item column "
            "gives heteroskedasticity-robust SEs only)"
        )
    return columns.cluster


def _usable(df: pd.DataFrame, columns: Columns, human_col: str) -> tuple[pd.DataFrame, pd.Series]:
    """Rows with an ok, non-abstaining judge score and a human score; reason per other row."""
    score_col, status_col, abstain = columns.score, columns.status, columns.abstain
    reason = pd.Series("", index=df.index, dtype=object)
    if status_col is not None and status_col in df.columns:
        status = df[status_col].astype(str)
        reason = reason.mask(status != "ok", status)
    reason = reason.mask((reason == "") & df[score_col].isin(list(abstain)), "abstain")
    reason = reason.mask((reason == "") & df[score_col].isna(), "missing")
    reason = reason.mask((reason == "") & df[human_col].isna(), "no human score")
    return df[reason == ""], reason[reason != ""]


def _welch(own: np.ndarray, other: np.ndarray, level: float) -> dict[str, object]:
    res = stats.ttest_ind(own, other, equal_var=False)
    ci = res.confidence_interval(level)
    se = float(np.sqrt(own.var(ddof=1) / own.size + other.var(ddof=1) / other.size))
    return {
        "estimate": float(own.mean() - other.mean()),
        "se": se,
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
        "p_value": float(res.pvalue),
        "n": own.size + other.size,
        "n_clusters": np.nan,
    }


def _own_effects(
    data: pd.DataFrame, level: float, n_perm: int, rng: np.random.Generator
) -> dict[str, dict[str, object]]:
    """Every self-preference estimate of one judge, keyed by method."""
    is_own = data["own"] == 1
    diff = data["score"] - data["human"]
    return {
        "naive_welch": _welch(
            data["score"][is_own].to_numpy(), data["score"][~is_own].to_numpy(), level
        ),
        "judge_minus_human_welch": _welch(diff[is_own].to_numpy(), diff[~is_own].to_numpy(), level),
        "judge_minus_human_ols_clustered": _clustered_ols(
            data.assign(score=diff), ["own"], "own", level
        ),
        "judge_minus_human_permutation": _permutation(data, diff, n_perm, rng),
        "ols_human_clustered": _clustered_ols(data, ["own", "human"], "own", level),
        "ols_human_question_fe_clustered": _clustered_ols(
            data, ["own", "human"], "own", level, cluster_effects=True
        ),
    }


def _permutation(
    data: pd.DataFrame, diff: pd.Series, n_perm: int, rng: np.random.Generator
) -> dict[str, object]:
    """Within-question permutation test of the own-minus-other gap in ``judge - human``."""
    test = permutation_within_clusters(
        diff.to_numpy(float), data["own"].to_numpy() == 1, data["cluster"].to_numpy(),
        n_perm=n_perm, seed=rng,
    )  # fmt: skip
    return {
        "estimate": test["estimate"],
        "p_value": test["p_value"],
        "n": len(data),
        "n_clusters": int(data["cluster"].nunique()),
        "note": f"{n_perm} permutations within {data['cluster'].nunique()} questions; "
        "a test only, no interval",
    }


def _clustered_ols(
    data: pd.DataFrame, terms: list[str], term: str, level: float, cluster_effects: bool = False
) -> dict[str, object]:
    """OLS of ``score`` on ``terms``, SEs clustered on ``cluster`` (:func:`clustered_ols`).

    With ``cluster_effects`` the cluster fixed effects are absorbed by demeaning within
    clusters.
    """
    absorb = data["cluster"] if cluster_effects else None
    fit = clustered_ols(data["score"], data[terms], data["cluster"], level=level, absorb=absorb)
    row = ols_term(fit, term)
    result: dict[str, object] = {key: row[key] for key in (*INTERVAL_COLUMNS, "p_value")}
    result.update(n=int(row["n"]), n_clusters=int(row["n_clusters"]))
    return result


def self_preference(
    df: pd.DataFrame,
    *,
    own: Mapping[object, object] | None = None,
    author_col: str = "model",
    human_col: str = "human_score",
    columns: Columns = BY_QUESTION,
    level: float = 0.95,
    n_perm: int = 10_000,
    seed: SeedLike | None = 0,
) -> pd.DataFrame:
    """Self-preference of each judge: naive and quality-controlled estimates side by side.

    Args:
        df: One row per judged answer and judge: judge, author (model that wrote the answer),
            judge score, human score of the same answer, question (cluster).
        own: Judge name -> author name it belongs to (default: the same name).
        author_col: Column naming the answer's author model.
        human_col: Human score column (the quality control).
        columns: Judge (``rater``), score, status, abstention values and the cluster column
            (default ``question``) the SEs are clustered on and the permutations stay within.
        level: Confidence level.
        n_perm: Permutations of the within-question permutation test.
        seed: Seed of the permutation test.

    Returns:
        Per judge, six rows (method = naive_welch, judge_minus_human_welch,
        judge_minus_human_ols_clustered, judge_minus_human_permutation, ols_human_clustered,
        ols_human_question_fe_clustered), columns as ``BIAS_COLUMNS``;
        judges without own (or without other) answers get one row with a note.

    Examples:
        >>> from judgekit.stats.examples import judged_answers
        >>> answers = judged_answers()
        >>> result = self_preference(answers, n_perm=200)
        >>> print(result[["method", "estimate", "n_clusters"]].round(3).to_string(index=False))
                                 method  estimate  n_clusters
                            naive_welch     1.667         NaN
                judge_minus_human_welch     0.167         NaN
        judge_minus_human_ols_clustered     0.167         6.0
          judge_minus_human_permutation     0.167         6.0
                    ols_human_clustered     0.767         6.0
        ols_human_question_fe_clustered     0.884         6.0
    """
    cluster_col = _cluster_column(columns)
    require_columns(df, [columns.rater, author_col, columns.score, human_col, cluster_col])
    rng = as_generator(seed)
    rows: list[dict[str, object]] = []
    for judge, group in df.groupby(columns.rater, sort=False):
        kept, reasons = _usable(group, columns, human_col)
        n_dropped, why = describe_drops(reasons)
        base = {"judge": judge, "n_dropped": n_dropped, "dropped_reason": why, "note": ""}
        target = own.get(judge, judge) if own is not None else judge
        data = pd.DataFrame(
            {
                "score": kept[columns.score].astype(float),
                "human": kept[human_col].astype(float),
                "own": (kept[author_col] == target).astype(float),
                "cluster": kept[cluster_col],
            }
        )
        if data["own"].nunique() < 2:
            rows.append({**base, "method": "none", "note": f"no own/other split for {target!r}"})
            continue
        for method, values in _own_effects(data, level, n_perm, rng).items():
            rows.append({**base, "method": method, "term": "own", **values})
            rows[-1]["assumption"] = ASSUMPTIONS[method]
    return pd.DataFrame(rows).reindex(columns=list(BIAS_COLUMNS))


def length_bias(
    df: pd.DataFrame,
    *,
    length_col: str = "length",
    human_col: str = "human_score",
    columns: Columns = BY_QUESTION,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per judge, OLS ``score ~ log(length) + human`` with question-clustered SEs.

    The ``log_length`` coefficient is the score change per e-fold longer answer at equal human
    score. Rows with a non-positive length are dropped (``log`` undefined) and counted.

    Returns:
        One row per judge (term ``log_length``), columns as ``BIAS_COLUMNS``.

    Examples:
        >>> from judgekit.stats.examples import judged_answers
        >>> answers = judged_answers()
        >>> row = length_bias(answers).iloc[0]
        >>> print(row["term"], round(row["estimate"], 3), row["n_clusters"])
        log_length 1.643 6
    """
    cluster_col = _cluster_column(columns)
    require_columns(df, [length_col, columns.rater, columns.score, human_col, cluster_col])
    rows: list[dict[str, object]] = []
    for judge, group in df.groupby(columns.rater, sort=False):
        kept, reasons = _usable(group, columns, human_col)
        length = pd.to_numeric(kept[length_col], errors="coerce")
        positive = length > 0
        reasons = pd.concat(
            [reasons, pd.Series("non-positive length", index=kept.index[~positive])]
        )
        kept = kept[positive]
        n_dropped, why = describe_drops(reasons)
        data = pd.DataFrame(
            {
                "score": kept[columns.score].astype(float),
                "human": kept[human_col].astype(float),
                "log_length": np.log(length[positive].astype(float)),
                "cluster": kept[cluster_col],
            }
        )
        fit = _clustered_ols(data, ["log_length", "human"], "log_length", level)
        rows.append(
            {
                "judge": judge,
                "method": "ols_log_length_human_clustered",
                "term": "log_length",
                **fit,
                "n_dropped": n_dropped,
                "dropped_reason": why,
                "note": "",
                "assumption": ASSUMPTIONS["ols_log_length_human_clustered"],
            }
        )
    return pd.DataFrame(rows).reindex(columns=list(BIAS_COLUMNS))
