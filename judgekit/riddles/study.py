"""The riddles study's summary measures, with intervals.

Composite score (0.7 x accuracy + 0.3 x reasoning, as % of its maximum), hallucination and
"I don't know" rates, topic difficulty, two-group comparisons (e.g. API vs UI), and the
scoring rules' grammar auto-0 rule. Inputs are wide study tables (one row per answer) whose
column names are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.data import require_columns
from judgekit.stats import Columns, clustered_ols, ols_term, t_ci, wilson_ci

#: No clustering: answers taken as independent.
INDEPENDENT = Columns()


def _cluster(columns: Columns) -> list[str]:
    """The cluster column as a list (empty when answers are independent)."""
    return [columns.cluster] if columns.cluster else []


def _groups(
    df: pd.DataFrame, group_cols: Sequence[str]
) -> list[tuple[dict[str, object], pd.DataFrame]]:
    if not group_cols:
        return [({}, df)]
    keys = list(group_cols)
    return [
        (dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)), part)
        for key, part in df.groupby(keys, sort=True)
    ]


def clustered_mean_ci(
    values: np.ndarray, clusters: np.ndarray, level: float
) -> tuple[float, float, float]:
    """Mean with a cluster-robust SE: ``(se, ci_low, ci_high)``.

    Intercept-only OLS with the Liang & Zeger (1986) sandwich, statsmodels
    ``cov_type="cluster"``, t with G - 1 degrees of freedom: answers to the same riddle are not
    independent, so the riddle is the unit the interval counts.
    """
    fit = clustered_ols(values, pd.DataFrame(index=range(len(values))), clusters, level=level)
    return float(fit["se"].iloc[0]), float(fit["ci_low"].iloc[0]), float(fit["ci_high"].iloc[0])


def _mean_rows(
    df: pd.DataFrame,
    values: pd.Series,
    group_cols: Sequence[str],
    method: str,
    level: float,
    cluster_col: str | None = None,
) -> pd.DataFrame:
    rows = []
    for key, part in _groups(df.assign(_value=values), group_cols):
        present = part[part["_value"].notna()]
        data = present["_value"].to_numpy(float)
        se, low, high = t_ci(data, level)
        row: dict[str, object] = {**key, "ci_method": "t"}
        if cluster_col is not None:
            naive = high - low
            se, low, high = clustered_mean_ci(data, present[cluster_col].to_numpy(), level)
            row.update(
                ci_method=f"t, cluster-robust on {cluster_col}",
                n_clusters=int(present[cluster_col].nunique()),
                design_effect=(high - low) / naive if naive > 0 else np.nan,
            )
        rows.append(
            {
                **row,
                "estimate": float(data.mean()) if data.size else np.nan,
                "se": se,
                "ci_low": low,
                "ci_high": high,
                "n": int(data.size),
                "method": method,
                "n_dropped": int(len(part) - data.size),
                "dropped_reason": f"missing: {len(part) - data.size}"
                if len(part) > data.size
                else "",
            }
        )
    return pd.DataFrame(rows)


def composite_score(
    df: pd.DataFrame,
    *,
    accuracy_col: str,
    reasoning_col: str,
    group_cols: Sequence[str] = ("Model", "Input"),
    weights: tuple[float, float] = (0.7, 0.3),
    maxima: tuple[float, float] = (5.0, 5.0),
    level: float = 0.95,
    columns: Columns = INDEPENDENT,
) -> pd.DataFrame:
    """Mean composite ``100 * (w_a acc + w_r rea) / (w_a max_a + w_r max_r)`` per group.

    With the study's weights (0.7, 0.3) and maxima (5, 5) a perfect answer scores 100. The
    interval is a Student-t interval over answers, or cluster-robust over ``columns.cluster``
    (e.g. the riddle) with its design effect; rows missing either score are dropped.

    Returns:
        One row per group: the group columns, estimate, se, ci_low, ci_high, n, method,
        ci_method, n_dropped, dropped_reason.
    """
    require_columns(df, [accuracy_col, reasoning_col, *group_cols, *_cluster(columns)])
    top = weights[0] * maxima[0] + weights[1] * maxima[1]
    value = 100 * (weights[0] * df[accuracy_col] + weights[1] * df[reasoning_col]) / top
    method = f"composite {weights[0]}*{accuracy_col} + {weights[1]}*{reasoning_col} (% of max)"
    return _mean_rows(df, value.astype(float), group_cols, method, level, columns.cluster)


def value_rate(
    df: pd.DataFrame,
    *,
    score_col: str,
    value: float,
    group_cols: Sequence[str] = ("Model",),
    level: float = 0.95,
    name: str = "rate",
) -> pd.DataFrame:
    """Share of answers whose score equals ``value``, with a Wilson interval, per group.

    The study's hallucination rate is ``value_rate(..., value=0)`` on accuracy (0 = no answer /
    irrelevant / hallucination); an "I don't know" rate uses the scale's own IDK value.

    Returns:
        One row per group: group columns, estimate, ci_low, ci_high, count, n, method,
        ci_method, n_dropped (rows without a score).
    """
    require_columns(df, [score_col, *group_cols])
    rows = []
    for key, part in _groups(df, group_cols):
        scores = part[score_col].dropna()
        hits = int((scores == value).sum())
        low, high = wilson_ci(hits, scores.size, level)
        rows.append(
            {
                **key,
                "estimate": hits / scores.size if scores.size else np.nan,
                "ci_low": low,
                "ci_high": high,
                "count": hits,
                "n": int(scores.size),
                "method": f"{name}: {score_col} == {value:g}",
                "ci_method": "wilson",
                "n_dropped": int(len(part) - scores.size),
            }
        )
    return pd.DataFrame(rows)


def topic_difficulty(
    df: pd.DataFrame,
    *,
    topic_col: str,
    score_col: str,
    level: float = 0.95,
    columns: Columns = INDEPENDENT,
) -> pd.DataFrame:
    """Mean score per topic with a t interval, hardest (lowest mean) first.

    A topic's answers come from few riddles (six answers each); pass the riddle column as
    ``columns.cluster`` for a cluster-robust interval that counts riddles, not answers.

    Returns:
        One row per topic: topic column, estimate, se, ci_low, ci_high, n, method, ci_method,
        n_dropped, dropped_reason.
    """
    require_columns(df, [topic_col, score_col, *_cluster(columns)])
    values = df[score_col].astype(float)
    table = _mean_rows(df, values, [topic_col], f"mean {score_col}", level, columns.cluster)
    return table.sort_values("estimate", kind="stable").reset_index(drop=True)


def two_group_comparison(
    df: pd.DataFrame,
    *,
    group_col: str,
    group_a: object,
    group_b: object,
    score_col: str,
    level: float = 0.95,
    columns: Columns = INDEPENDENT,
) -> pd.DataFrame:
    """Welch t-test of ``mean_a - mean_b`` and Cohen's d (pooled SD) with an approximate CI.

    ``d = (mean_a - mean_b) / s_pooled``; its SE ``sqrt((n_a + n_b) / (n_a n_b) + d^2 /
    (2 (n_a + n_b)))`` (Hedges & Olkin 1985, eq. 5.14) gives a normal interval. The two groups
    are treated as independent; when the same items appear in both (API and UI answers to
    the same riddles) name the riddle as ``columns.cluster``: a third row,
    ``mean_difference_clustered``, regresses the score on the group with SEs clustered on it
    (Liang & Zeger 1986; t with G - 1 degrees of freedom), which allows for the pairing.

    Returns:
        Two rows (statistic = mean_difference, cohens_d), three with ``columns.cluster``:
        estimate, se, ci_low, ci_high, p_value, dof, n_a, n_b, method, ci_method.
    """
    require_columns(df, [group_col, score_col])
    a = df.loc[df[group_col] == group_a, score_col].dropna().to_numpy(float)
    b = df.loc[df[group_col] == group_b, score_col].dropna().to_numpy(float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"{group_col}: need >= 2 scores in {group_a!r} and {group_b!r}")
    welch = stats.ttest_ind(a, b, equal_var=False)
    ci = welch.confidence_interval(level)
    pooled = np.sqrt(
        ((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2)
    )
    d = float((a.mean() - b.mean()) / pooled)
    se_d = float(np.sqrt((a.size + b.size) / (a.size * b.size) + d**2 / (2 * (a.size + b.size))))
    z = float(stats.norm.ppf(0.5 + level / 2))
    common = {"n_a": a.size, "n_b": b.size, "group_a": group_a, "group_b": group_b}
    rows = [
        {
            "statistic": "mean_difference",
            "estimate": float(a.mean() - b.mean()),
            "se": float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)),
            "ci_low": float(ci.low),
            "ci_high": float(ci.high),
            "p_value": float(welch.pvalue),
            "dof": float(welch.df),
            "method": "welch_t",
            "ci_method": "welch_t",
            **common,
        },
        {
            "statistic": "cohens_d",
            "estimate": d,
            "se": se_d,
            "ci_low": d - z * se_d,
            "ci_high": d + z * se_d,
            "p_value": float(welch.pvalue),
            "dof": float(welch.df),
            "method": "cohens_d_pooled_sd",
            "ci_method": "normal_hedges_olkin",
            **common,
        },
    ]
    if columns.cluster is not None:
        rows.append(
            {
                **_clustered_difference(
                    df, group_col, (group_a, group_b), score_col, columns.cluster, level
                ),
                **common,
            }
        )
    return pd.DataFrame(rows)


def _clustered_difference(
    df: pd.DataFrame,
    group_col: str,
    groups: tuple[object, object],
    score_col: str,
    cluster_col: str,
    level: float,
) -> dict[str, object]:
    """OLS ``score ~ 1 + [group == a]`` on the two groups, SEs clustered on ``cluster_col``."""
    require_columns(df, [cluster_col])
    data = df[df[group_col].isin(groups)].dropna(subset=[score_col])
    design = pd.DataFrame({"group": (data[group_col] == groups[0]).astype(float)})
    fit = clustered_ols(data[score_col], design, data[cluster_col], level=level)
    row = ols_term(fit, "group")
    return {
        "statistic": "mean_difference_clustered",
        **{key: row[key] for key in ("estimate", "se", "ci_low", "ci_high", "p_value", "dof")},
        "method": f"ols on group, SE clustered on {cluster_col}",
        "ci_method": "t, cluster-robust",
    }


def grammar_auto_zero(
    df: pd.DataFrame, *, reasoning_col: str, grammar_col: str, no_grammar: Sequence[float] = (0, 1)
) -> pd.Series:
    """Apply the scoring rules' auto-0 rule: no grammar score when justification is 0 or 1.

    "Scoring Rules.txt": if Justification is 0 (hallucination) or 1 (no justification) there is
    no Grammar & Style score. The returned copy of ``grammar_col`` is NaN on those rows (no
    number is invented); the rest is unchanged.
    """
    require_columns(df, [reasoning_col, grammar_col])
    return df[grammar_col].where(~df[reasoning_col].isin(list(no_grammar))).astype(float)


def grammar_rule_status(
    scores: pd.DataFrame,
    *,
    rater: str = "Human",
    no_grammar: Sequence[float] = (0, 1),
    status_col: str = "status",
) -> pd.DataFrame:
    """Long riddle scores with the scoring rules' auto-0 rule marked on the grammar rows.

    "Scoring Rules.txt": an answer whose justification (reasoning) is 0 or 1 gets no grammar
    score. The rule is read from ``rater``'s reasoning score (the study's author); every
    rater's grammar row of such an answer gets status ``"no grammar score (auto-0 rule)"``,
    the others ``"ok"``, so the statistics drop and count them instead of reading a number.
    Columns needed: output_id, rater, dimension, score.
    """
    require_columns(scores, ["output_id", "rater", "dimension", "score"])
    reasoning = scores[(scores["dimension"] == "reasoning") & (scores["rater"] == rater)]
    excluded = set(reasoning.loc[reasoning["score"].isin(list(no_grammar)), "output_id"])
    hit = (scores["dimension"] == "grammar") & scores["output_id"].isin(excluded)
    return scores.assign(**{status_col: np.where(hit, "no grammar score (auto-0 rule)", "ok")})
