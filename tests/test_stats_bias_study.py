"""Self-preference and length bias (vs scipy/statsmodels, simulated data), study measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from judgekit.riddles import (
    composite_score,
    grammar_auto_zero,
    topic_difficulty,
    two_group_comparison,
    value_rate,
)
from judgekit.stats import length_bias, self_preference


def judged_answers(
    seed: int, bias: float, questions: int = 150, human_noise: float = 0.3
) -> pd.DataFrame:
    """Three models answer each question; model A is truly better. Judge A adds ``bias`` to A."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(questions):
        difficulty = rng.normal(0, 1)
        for model, skill in (("A", 1.0), ("B", 0.0), ("C", 0.0)):
            quality = skill - difficulty + rng.normal(0, 0.5)
            human = quality + rng.normal(0, human_noise)
            length = np.exp(5 + 0.3 * rng.normal())
            for judge in ("A", "B"):
                extra = bias if judge == model else 0.0
                score = quality + extra + 0.2 * np.log(length) + rng.normal(0, 0.4)
                rows.append((q, model, judge, score, human, length))
    return pd.DataFrame(
        rows, columns=["question", "model", "rater", "score", "human_score", "length"]
    )


def test_naive_estimate_matches_scipy_welch():
    df = judged_answers(0, bias=0.0)
    table = self_preference(df).set_index(["judge", "method"])
    judge_a = df[df["rater"] == "A"]
    own, other = (
        judge_a[judge_a["model"] == "A"]["score"],
        judge_a[judge_a["model"] != "A"]["score"],
    )
    ref = stats.ttest_ind(own, other, equal_var=False)
    row = table.loc[("A", "naive_welch")]
    assert row["estimate"] == pytest.approx(own.mean() - other.mean())
    assert row["p_value"] == pytest.approx(ref.pvalue)
    ci = ref.confidence_interval()
    assert [row["ci_low"], row["ci_high"]] == pytest.approx([ci.low, ci.high])


def test_clustered_ols_matches_statsmodels():
    df = judged_answers(1, bias=0.3, questions=50)
    row = self_preference(df).set_index(["judge", "method"]).loc[("A", "ols_human_clustered")]
    data = df[df["rater"] == "A"].assign(own=lambda d: (d["model"] == "A").astype(float))
    fit = smf.ols("score ~ own + human_score", data=data).fit(
        cov_type="cluster", cov_kwds={"groups": data["question"]}, use_t=True
    )
    assert row["estimate"] == pytest.approx(fit.params["own"])
    assert row["se"] == pytest.approx(fit.bse["own"])
    assert row["n_clusters"] == 50
    fe = (
        self_preference(df)
        .set_index(["judge", "method"])
        .loc[("A", "ols_human_question_fe_clustered")]
    )
    dummies = smf.ols("score ~ own + human_score + C(question)", data=data).fit(method="qr")
    assert fe["estimate"] == pytest.approx(dummies.params["own"])


def test_controlled_estimates_separate_quality_from_bias():
    # Model A is better, but judge A has no bias: the naive difference is large, the
    # quality-controlled ones cover zero. (With a noisy human score the OLS adjustment is
    # attenuated toward the naive estimate -- errors in variables -- so the human score here
    # is close to the true quality.)
    fair = self_preference(judged_answers(2, bias=0.0, human_noise=0.05)).set_index(
        ["judge", "method"]
    )
    assert fair.loc[("A", "naive_welch"), "p_value"] < 1e-6
    for method in (
        "judge_minus_human_welch",
        "ols_human_clustered",
        "ols_human_question_fe_clustered",
    ):
        row = fair.loc[("A", method)]
        assert row["ci_low"] < 0 < row["ci_high"], method
    # With a real bias of 0.5 the controlled estimate finds it.
    biased = self_preference(judged_answers(3, bias=0.5, human_noise=0.05)).set_index(
        ["judge", "method"]
    )
    row = biased.loc[("A", "ols_human_question_fe_clustered")]
    assert row["ci_low"] < 0.5 < row["ci_high"] and row["ci_low"] > 0


def test_judge_without_own_answers_is_noted_not_estimated():
    df = judged_answers(4, bias=0.0, questions=20)
    df["rater"] = df["rater"].map({"A": "A", "B": "Z"})
    table = self_preference(df)
    z_rows = table[table["judge"] == "Z"]
    assert len(z_rows) == 1 and "no own/other split" in z_rows["note"].iloc[0]


def test_length_bias_recovers_simulated_slope():
    df = judged_answers(5, bias=0.0, questions=300)
    df.loc[0, "length"] = 0  # log undefined: dropped and counted
    row = length_bias(df).set_index("judge").loc["A"]
    assert row["ci_low"] < 0.2 < row["ci_high"]
    assert row["dropped_reason"] == "non-positive length: 1"
    data = df[(df["rater"] == "A") & (df["length"] > 0)].assign(
        log_length=lambda d: np.log(d["length"])
    )
    fit = smf.ols("score ~ log_length + human_score", data=data).fit(
        cov_type="cluster", cov_kwds={"groups": data["question"]}, use_t=True
    )
    assert row["estimate"] == pytest.approx(fit.params["log_length"])


def riddles_like() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Model": ["GPT", "GPT", "GPT", "Claude", "Claude", "Claude"],
            "Input": ["API", "API", "UI", "API", "UI", "UI"],
            "Topic": ["Music", "Sports", "Music", "Sports", "Music", "Sports"],
            "Acc": [5, 0, 3, 0, 5, 5],
            "Rea": [4, 0, 5, 1, 5, 3],
        }
    )


def test_composite_score_as_percent_of_maximum():
    table = composite_score(riddles_like(), accuracy_col="Acc", reasoning_col="Rea")
    gpt_api = table[(table["Model"] == "GPT") & (table["Input"] == "API")].iloc[0]
    # (0.7*5 + 0.3*4) / 5 * 100 = 94; (0.7*0 + 0.3*0) = 0 -> mean 47.
    assert gpt_api["estimate"] == pytest.approx(47.0)
    assert gpt_api["n"] == 2
    half = stats.t.ppf(0.975, 1) * np.std([94, 0], ddof=1) / np.sqrt(2)
    assert [gpt_api["ci_low"], gpt_api["ci_high"]] == pytest.approx([47 - half, 47 + half])


def test_hallucination_and_idk_rates_with_wilson_interval():
    table = value_rate(riddles_like(), score_col="Acc", value=0).set_index("Model")
    assert table.loc["GPT", "estimate"] == pytest.approx(1 / 3)
    low, high = proportion_confint(1, 3, method="wilson")
    assert [table.loc["GPT", "ci_low"], table.loc["GPT", "ci_high"]] == pytest.approx([low, high])
    idk = value_rate(riddles_like(), score_col="Rea", value=5, group_cols=()).iloc[0]
    assert idk["estimate"] == pytest.approx(2 / 6)


def test_topic_difficulty_sorted_hardest_first():
    table = topic_difficulty(riddles_like(), topic_col="Topic", score_col="Acc")
    assert table["Topic"].tolist() == ["Sports", "Music"]
    assert table["estimate"].tolist() == pytest.approx([5 / 3, 13 / 3])


def test_two_group_comparison_matches_scipy_and_pingouin():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "Input": ["API"] * 80 + ["UI"] * 70,
            "score": np.r_[rng.normal(2, 1, 80), rng.normal(2.5, 1.3, 70)],
        }
    )
    table = two_group_comparison(
        df, group_col="Input", group_a="API", group_b="UI", score_col="score"
    )
    table = table.set_index("statistic")
    a, b = df["score"][:80], df["score"][80:]
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert table.loc["mean_difference", "p_value"] == pytest.approx(ref.pvalue)
    assert table.loc["mean_difference", "dof"] == pytest.approx(ref.df)
    d = pingouin.compute_effsize(a, b, eftype="cohen")
    assert table.loc["cohens_d", "estimate"] == pytest.approx(d)
    ci = pingouin.compute_esci(stat=d, nx=80, ny=70, eftype="cohen", confidence=0.95)
    assert [table.loc["cohens_d", "ci_low"], table.loc["cohens_d", "ci_high"]] == pytest.approx(
        list(ci), abs=0.01
    )


def test_grammar_auto_zero_blanks_grammar_without_justification():
    df = pd.DataFrame({"Rea": [0, 1, 2, 5], "Gra": [4, 3, 5, 5]})
    out = grammar_auto_zero(df, reasoning_col="Rea", grammar_col="Gra")
    assert out.isna().tolist() == [True, True, False, False]
    assert out.iloc[2:].tolist() == [5.0, 5.0]
