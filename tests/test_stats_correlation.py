"""Correlations against scipy/pingouin, and the status summary."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats

from judgekit.stats import CI, correlation, status_summary
from judgekit.stats._bootstrap import unique_patterns
from judgekit.stats.correlation import correlation_from_pairs, correlation_stat


def scores(seed: int, n: int = 120):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n).astype(float)
    b = np.clip(a + rng.integers(-2, 3, n), 0, 5).astype(float)
    return a, b


def long(a, b):
    n = len(a)
    return pd.DataFrame(
        {
            "item": np.r_[np.arange(n), np.arange(n)],
            "rater": ["x"] * n + ["y"] * n,
            "score": np.r_[a, b],
        }
    )


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_estimates_and_p_values_match_scipy(method):
    a, b = scores(0)
    row = correlation(long(a, b), "x", "y", method=method).iloc[0]
    ref = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[
        method
    ](a, b)
    assert row["estimate"] == pytest.approx(ref.statistic)
    assert row["p_value"] == pytest.approx(ref.pvalue)


def test_pearson_fisher_interval_matches_pingouin_and_scipy():
    a, b = scores(1, 80)
    row = correlation(long(a, b), "x", "y", method="pearson").iloc[0]
    ci = stats.pearsonr(a, b).confidence_interval(0.95)
    assert [row["ci_low"], row["ci_high"]] == pytest.approx([ci.low, ci.high])
    ping = pingouin.corr(a, b, method="pearson")["CI95"].iloc[0]
    assert [row["ci_low"], row["ci_high"]] == pytest.approx(list(ping), abs=0.005)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_rank_fisher_interval_uses_documented_variance(method):
    a, b = scores(2, 90)
    row = correlation_from_pairs(a, b, method=method)
    factor, offset = (1.06, 3) if method == "spearman" else (0.437, 4)
    z = np.arctanh(row["estimate"])
    half = stats.norm.ppf(0.975) * np.sqrt(factor / (90 - offset))
    assert [row["ci_low"], row["ci_high"]] == pytest.approx([np.tanh(z - half), np.tanh(z + half)])


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_pattern_statistic_equals_scipy_on_resampled_rows(method):
    # Ties are re-ranked in each replicate: compare with scipy on the rows drawn.
    a, b = scores(3, 60)
    patterns, _, inverse = unique_patterns(np.column_stack([a, b]))
    stat = correlation_stat(patterns[:, 0].astype(float), patterns[:, 1].astype(float), method)
    ref = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[
        method
    ]
    rng = np.random.default_rng(0)
    for _ in range(4):
        pick = rng.integers(0, 60, 60)
        weights = np.bincount(inverse[pick], minlength=len(patterns)).astype(float)
        assert stat(weights[None])[0] == pytest.approx(ref(a[pick], b[pick]).statistic)


def test_bootstrap_correlation_is_seeded():
    a, b = scores(4)
    boot = CI("bca", n_boot=500, seed=9)
    first = correlation_from_pairs(a, b, method="spearman", ci=boot)
    again = correlation_from_pairs(a, b, method="spearman", ci=boot)
    assert (first["ci_low"], first["ci_high"]) == (again["ci_low"], again["ci_high"])
    assert first["ci_low"] < first["estimate"] < first["ci_high"]


def test_correlation_pairs_on_item_and_reports_drops():
    df = long(*scores(5, 30))
    df["status"] = "ok"
    df.loc[3, "status"] = "missing"
    df.loc[30 + 7, "score"] = -1
    row = correlation(df, "x", "y").iloc[0]
    assert row["n"] == 28
    assert row["dropped_reason"] == "abstain (y): 1; missing (x): 1"


def test_status_summary_counts_every_status_including_zeros():
    df = pd.DataFrame(
        {
            "model": ["m1"] * 5 + ["m2"] * 3,
            "variant": ["base"] * 8,
            "status": ["ok", "ok", "abstain", "unparseable", "ok", "ok", "error", "ok"],
            "score": [3, -1, np.nan, np.nan, 5, 1, np.nan, 2],
        }
    )
    table = status_summary(df).set_index(["model", "status"])
    assert table.loc[("m1", "ok"), "count"] == 2  # the ok row scored -1 counts as abstain
    assert table.loc[("m1", "abstain"), "count"] == 2
    assert table.loc[("m1", "abstain"), "rate"] == pytest.approx(2 / 5)
    assert table.loc[("m2", "error"), "rate"] == pytest.approx(1 / 3)
    assert table.loc[("m2", "duplicate"), "count"] == 0
    assert table.groupby(level="model")["rate"].sum().tolist() == pytest.approx([1.0, 1.0])
