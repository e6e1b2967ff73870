"""Seed 004 checks: human agreement, run consistency, paraphrase sensitivity, coverage, report."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgekit.stats import (
    CI,
    human_agreement,
    paraphrase_sensitivity,
    run_consistency,
    score_coverage,
    seed004_report,
)

SCALE = (1, 2, 3, 4)


def study(seed: int, n: int = 30, noise: float = 0.1, runs: int = 3, variants=("base", "p1", "p2")):
    """A human rater plus one judge over runs and variants; judge flips ``noise`` of scores."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(SCALE, n)
    rows = [(i, "human", float(truth[i]), 0, "base", "ok") for i in range(n)]
    for run in range(runs):
        for variant in variants:
            flip = rng.random(n) < noise
            score = np.where(flip, rng.choice(SCALE, n), truth)
            rows += [(i, "judge", float(score[i]), run, variant, "ok") for i in range(n)]
    return pd.DataFrame(rows, columns=["item", "rater", "score", "run", "variant", "status"])


def test_human_agreement_passes_on_threshold_and_matches_sklearn():
    df = study(0)
    sub = df[(df["rater"] == "human") | ((df["run"] == 0) & (df["variant"] == "base"))]
    row = human_agreement(
        sub, "judge", "human", scale=SCALE, threshold=0.5, ci=CI("bca", seed=1)
    ).iloc[0]
    judge = sub[sub["rater"] == "judge"].sort_values("item")["score"]
    human = sub[sub["rater"] == "human"].sort_values("item")["score"]
    assert row["estimate"] == pytest.approx(cohen_kappa_score(judge, human, weights="quadratic"))
    assert bool(row["passed"]) == bool(row["estimate"] >= 0.5)
    strict = human_agreement(
        sub,
        "judge",
        "human",
        scale=SCALE,
        threshold=row["estimate"] - 1e-9,
        pass_rule="ci_low",
        ci=CI("bca", seed=1),
    ).iloc[0]
    assert not strict["passed"]  # the lower bound is below the estimate


def test_human_agreement_warns_below_twenty_items():
    df = study(1, n=12)
    sub = df[(df["rater"] == "human") | ((df["run"] == 0) & (df["variant"] == "base"))]
    with pytest.warns(UserWarning, match="only 12 labelled pairs"):
        row = human_agreement(sub, "judge", "human", scale=SCALE).iloc[0]
    assert "too few to trust the interval" in row["note"]
    big = study(1, n=25)
    sub = big[(big["rater"] == "human") | ((big["run"] == 0) & (big["variant"] == "base"))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        human_agreement(sub, "judge", "human", scale=SCALE)


def test_run_consistency_identical_runs_pass():
    df = study(2, noise=0.0)
    judge = df[(df["rater"] == "judge") & (df["variant"] == "base")]
    result = run_consistency(judge, scale=SCALE)
    summary = result.summary.set_index("statistic")
    assert summary.loc["share_identical", "estimate"] == 1.0
    assert bool(summary.loc["share_identical", "passed"])
    assert summary.loc["mean_flip_rate", "estimate"] == 0.0
    assert summary.loc["fleiss_kappa", "estimate"] == pytest.approx(1.0)
    assert (result.per_item["n_distinct"] == 1).all()


def test_run_consistency_flips_failures_and_fleiss():
    df = study(3, noise=0.3)
    judge = df[(df["rater"] == "judge") & (df["variant"] == "base")].copy()
    judge.loc[judge.index[0], ["score", "status"]] = [np.nan, "unparseable"]  # item 0, run 0
    result = run_consistency(judge, scale=SCALE)
    summary = result.summary.set_index("statistic")
    wide = judge.pivot(index="item", columns="run", values="score")
    complete = wide.dropna()
    identical = (complete.nunique(axis=1) == 1).sum()
    # Headline: the item that failed in a run counts as not identical, over all items.
    assert summary.loc["share_identical", "estimate"] == pytest.approx(identical / len(wide))
    assert summary.loc["share_identical", "n"] == len(wide)
    assert "1 item(s) not usable in every run" in summary.loc["share_identical", "note"]
    assert not summary.loc["share_identical", "passed"]
    among = summary.loc["share_identical_among_complete"]
    assert among["estimate"] == pytest.approx(identical / len(complete))
    assert among["n"] == len(complete)
    assert among["dropped_reason"] == "not usable in every run: 1"
    # Flip rate of item 5 by hand: share of its runs that differ from its modal score.
    runs = wide.loc[5].to_numpy()
    _, counts = np.unique(runs, return_counts=True)
    per_item = result.per_item.set_index("item")
    assert per_item.loc[5, "flip_rate"] == pytest.approx(1 - counts.max() / 3)
    ref = sm_fleiss_kappa(aggregate_raters(complete.to_numpy().astype(int))[0])
    complete_only = judge[judge["item"].isin(complete.index)]
    ours = run_consistency(complete_only, scale=SCALE, ci=CI(None)).summary.set_index("statistic")
    assert ours.loc["fleiss_kappa", "estimate"] == pytest.approx(ref)


def test_paraphrase_sensitivity_pass_fail_and_tables():
    df = study(4, noise=0.05)
    judge = df[(df["rater"] == "judge") & (df["run"] == 0)]
    result = paraphrase_sensitivity(judge, scale=SCALE, ci=CI("bca", n_boot=300, seed=2))
    assert len(result.pairwise) == 3
    assert result.matrix.shape == (3, 3)
    summary = result.summary.set_index("statistic")
    assert summary.loc["min_kappa", "estimate"] == pytest.approx(result.pairwise["estimate"].min())
    assert summary.loc["mean_kappa", "estimate"] == pytest.approx(
        result.pairwise["estimate"].mean()
    )
    assert bool(summary.loc["min_kappa", "passed"]) == bool(
        summary.loc["min_kappa", "estimate"] > 0.8
    )
    noisy = study(4, noise=0.6)
    bad = paraphrase_sensitivity(
        noisy[(noisy["rater"] == "judge") & (noisy["run"] == 0)], scale=SCALE, ci=CI("analytic")
    )
    assert not bad.summary.set_index("statistic").loc["min_kappa", "passed"]


def test_score_coverage_counts_entropy_and_tests():
    df = pd.DataFrame(
        {
            "item": list(range(40)) * 2,
            "rater": ["human"] * 40 + ["judge"] * 40,
            "score": [1] * 10 + [2] * 10 + [3] * 10 + [4] * 10 + [3] * 25 + [4] * 15,
        }
    )
    cov = score_coverage(df, scale=SCALE, human="human")
    counts = cov.counts[cov.counts["rater"] == "judge"].set_index("level")["count"]
    assert counts.to_dict() == {1: 0, 2: 0, 3: 25, 4: 15}
    summary = cov.summary.set_index("rater")
    assert summary.loc["judge", "share_of_scale_used"] == 0.5
    assert not summary.loc["judge", "passed"] and summary.loc["human", "passed"]
    shares = np.array([25, 15]) / 40
    assert summary.loc["judge", "entropy_bits"] == pytest.approx(-(shares * np.log2(shares)).sum())
    assert summary.loc["human", "normalized_entropy"] == pytest.approx(1.0)
    assert summary.loc["judge", "tvd"] == pytest.approx(0.5 * (0.25 + 0.25 + 0.375 + 0.125))
    ref = stats.chi2_contingency([[0, 0, 25, 15], [10, 10, 10, 10]], correction=False)
    assert summary.loc["judge", "statistic"] == pytest.approx(ref.statistic)
    assert summary.loc["judge", "p_value"] == pytest.approx(ref.pvalue)
    g = score_coverage(df, scale=SCALE, human="human", test="g").summary.set_index("rater")
    ref_g = stats.chi2_contingency(
        [[0, 0, 25, 15], [10, 10, 10, 10]], correction=False, lambda_="log-likelihood"
    )
    assert g.loc["judge", "statistic"] == pytest.approx(ref_g.statistic)
    assert summary.loc["judge", "note"] == ""


def test_score_coverage_notes_small_expected_counts():
    df = pd.DataFrame(
        {
            "item": list(range(6)) * 2,
            "rater": ["h"] * 6 + ["j"] * 6,
            "score": [1, 2, 3, 4, 4, 4] * 2,
        }
    )
    note = score_coverage(df, scale=SCALE, human="h").summary.set_index("rater").loc["j", "note"]
    assert "p-value is unreliable" in note


def test_seed004_report_combines_four_checks():
    df = study(5, noise=0.05)
    report = seed004_report(
        df, judge="judge", human="human", scale=SCALE, ci=CI("bca", n_boot=300, seed=0)
    )
    assert report["check"].tolist() == [
        "human_agreement",
        "run_consistency",
        "paraphrase_sensitivity",
        "score_coverage",
    ]
    assert report["passed"].notna().all()
    # Run consistency by hand on the base variant.
    base = df[(df["rater"] == "judge") & (df["variant"] == "base")]
    wide = base.pivot(index="item", columns="run", values="score")
    share = (wide.nunique(axis=1) == 1).mean()
    row = report.set_index("check").loc["run_consistency"]
    assert row["estimate"] == pytest.approx(share)
    assert bool(row["passed"]) == bool(share >= 1.0)


def test_seed004_report_marks_missing_runs_and_variants_as_not_run():
    df = study(6, runs=1, variants=("base",))
    report = seed004_report(
        df, judge="judge", human="human", scale=SCALE, ci=CI("bca", n_boot=200, seed=0)
    )
    skipped = report.set_index("check").loc[["run_consistency", "paraphrase_sensitivity"]]
    assert skipped["passed"].isna().all()
    assert skipped["note"].str.contains("needs at least two").all()


def test_coverage_of_a_rater_without_usable_scores_is_reported_not_raised() -> None:
    df = pd.DataFrame(
        {
            "item": [1, 2, 3, 1, 2, 3],
            "rater": ["human"] * 3 + ["judge"] * 3,
            "score": [0, 3, 5, np.nan, np.nan, np.nan],
            "status": ["ok"] * 3 + ["missing"] * 3,
        }
    )
    row = score_coverage(df, scale=(0, 3, 5), human="human").summary.set_index("rater").loc["judge"]
    assert row["n"] == 0 and np.isnan(row["p_value"]) and "no usable scores" in row["note"]
