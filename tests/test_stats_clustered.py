"""Clustered intervals, test families and degenerate cases, checked against independent code.

Every reference here is written out in the test: a plain loop that draws clusters with the same
generator, statsmodels' cluster-robust sandwich, a hand-written Holm step-down, and an exact
enumeration of within-cluster permutations.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from judgekit.stats import (
    CI,
    Columns,
    agreement_rates,
    cohen_kappa,
    krippendorff_alpha,
    self_preference,
)
from judgekit.stats.consistency import min_kappa_interval
from judgekit.stats.significance import adjust_p, permutation_within_clusters

SCALE = (0.0, 3.0, 5.0)
CLUSTERED = Columns(cluster="question")


def clustered_pairs(seed: int, questions: int, per_question: int, effect: float) -> pd.DataFrame:
    """Long table of two raters; each question shifts both raters' scores by a shared amount."""
    rng = np.random.default_rng(seed)
    shift = np.repeat(rng.normal(0, effect, questions), per_question)
    truth = rng.normal(0, 1, questions * per_question) + shift
    cut = np.array([-0.4, 0.6])
    a = np.array(SCALE)[np.searchsorted(cut, truth + rng.normal(0, 0.5, truth.size))]
    b = np.array(SCALE)[np.searchsorted(cut, truth + rng.normal(0, 0.5, truth.size))]
    items = np.arange(truth.size)
    question = np.repeat(np.arange(questions), per_question)
    return pd.DataFrame(
        {
            "item": np.r_[items, items],
            "rater": ["human"] * truth.size + ["judge"] * truth.size,
            "score": np.r_[a, b],
            "question": np.r_[question, question],
        }
    )


def hand_cluster_bootstrap(df: pd.DataFrame, n_boot: int, seed: int) -> np.ndarray:
    """Draw G questions with replacement per replicate, keep all their items, recompute kappa."""
    wide = df.pivot(index="item", columns="rater", values="score")
    question = df.drop_duplicates("item").set_index("item")["question"]
    labels = np.unique(question.astype(str))  # clusters numbered in sorted label order
    members = [wide.index[question.astype(str).to_numpy() == label] for label in labels]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        drawn = rng.integers(0, len(labels), size=len(labels))
        rows = wide.loc[np.concatenate([members[g] for g in drawn])]
        values.append(
            cohen_kappa_score(rows["human"], rows["judge"], weights="quadratic", labels=SCALE)
        )
    return np.array(values)


def test_cluster_bootstrap_matches_a_hand_written_resampling_of_clusters():
    df = clustered_pairs(1, questions=30, per_question=4, effect=1.0)
    row = cohen_kappa(
        df, "human", "judge", scale=SCALE, weights="quadratic",
        ci=CI("percentile", n_boot=300, seed=7), columns=CLUSTERED,
    ).iloc[0]  # fmt: skip
    boot = hand_cluster_bootstrap(df, 300, 7)
    low, high = np.quantile(boot, [0.025, 0.975])
    assert row["ci_low"] == pytest.approx(low, abs=1e-12)
    assert row["ci_high"] == pytest.approx(high, abs=1e-12)
    assert row["se"] == pytest.approx(np.std(boot, ddof=1), abs=1e-12)
    assert row["n_clusters"] == 30
    assert row["ci_method"] == "percentile, cluster bootstrap"


def test_strong_cluster_effect_widens_the_interval_and_singletons_do_not():
    clustered = clustered_pairs(2, questions=40, per_question=10, effect=1.5)
    options = {"scale": SCALE, "weights": "quadratic", "ci": CI("percentile", n_boot=1000, seed=0)}
    wide = cohen_kappa(clustered, "human", "judge", columns=CLUSTERED, **options)
    assert wide["design_effect"].iloc[0] > 1.3
    singletons = clustered.assign(question=clustered["item"])
    same = cohen_kappa(singletons, "human", "judge", columns=CLUSTERED, **options)
    assert same["design_effect"].iloc[0] == pytest.approx(1.0, abs=0.15)


def test_clustered_agreement_share_se_matches_statsmodels_cluster_robust_se():
    df = clustered_pairs(3, questions=200, per_question=5, effect=1.0)
    wide = df.pivot(index="item", columns="rater", values="score")
    hits = pd.DataFrame(
        {
            "hit": (wide["human"] == wide["judge"]).astype(float),
            "question": df.drop_duplicates("item").set_index("item")["question"],
        }
    )
    fit = smf.ols("hit ~ 1", hits).fit(cov_type="cluster", cov_kwds={"groups": hits["question"]})
    robust_se = float(fit.bse["Intercept"])
    # Analytic with clusters: the cluster-robust SE itself, and Wilson's interval at the
    # Korn-Graubard effective sample size p(1 - p) / se^2.
    analytic = agreement_rates(
        df, "human", "judge", scale=SCALE, ci=CI("analytic"), columns=CLUSTERED
    ).set_index("statistic")
    exact = analytic.loc["exact"]
    assert exact["se"] == pytest.approx(robust_se, rel=1e-9)
    assert exact["ci_method"] == "wilson, cluster-robust effective n"
    p_hat = float(hits["hit"].mean())
    n_eff = p_hat * (1 - p_hat) / robust_se**2
    assert n_eff < len(hits)  # the cluster effect shrinks the sample
    z = 1.959963984540054
    centre = (p_hat + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * np.sqrt(p_hat * (1 - p_hat) / n_eff + z * z / (4 * n_eff**2)) / (1 + z * z / n_eff)
    assert (exact["ci_low"], exact["ci_high"]) == pytest.approx((centre - half, centre + half))
    assert exact["design_effect"] > 1.0
    # A bootstrap when one is asked for: whole questions resampled, its SE near the sandwich.
    boot = agreement_rates(
        df, "human", "judge", scale=SCALE, ci=CI("percentile", n_boot=4000, seed=1),
        columns=CLUSTERED,
    ).set_index("statistic")  # fmt: skip
    assert boot.loc["exact", "ci_method"] == "percentile, cluster bootstrap"
    assert boot.loc["exact", "se"] == pytest.approx(robust_se, rel=0.08)


def test_a_share_interval_follows_the_method_asked_for():
    from judgekit.stats import share_interval, wilson_ci

    hits = np.array([True] * 30 + [False] * 10)
    assert share_interval(hits, None, CI(None))["ci_method"] == "none"
    wilson = share_interval(hits, None, CI("analytic", level=0.9))
    assert (wilson["ci_low"], wilson["ci_high"]) == wilson_ci(30, 40, 0.9)
    bca = share_interval(hits, None, CI("bca", n_boot=500, seed=0))
    assert bca["ci_method"] == "bca, items bootstrap" and bca["ci_low"] < 0.75 < bca["ci_high"]
    singletons = share_interval(hits, np.arange(40), CI("analytic"))
    # One item per cluster: Wilson's interval, n shrunk only by the sandwich's G / (G - 1).
    expected = wilson_ci(0.75 * 39, 39, 0.95)
    assert (singletons["ci_low"], singletons["ci_high"]) == pytest.approx(expected)


def test_clustered_alpha_reports_design_effect_and_rejects_items_in_two_clusters():
    df = clustered_pairs(4, questions=30, per_question=5, effect=1.5)
    boot = CI("percentile", n_boot=500, seed=0)
    row = krippendorff_alpha(df, ci=boot, columns=CLUSTERED).iloc[0]
    assert row["n_clusters"] == 30 and row["design_effect"] > 1.0
    broken = df.copy()
    broken.loc[broken.index[0], "question"] = 99
    with pytest.raises(ValueError, match="sits in several clusters"):
        krippendorff_alpha(broken, ci=boot, columns=CLUSTERED)


def test_analytic_kappa_refuses_a_cluster():
    df = clustered_pairs(5, questions=10, per_question=3, effect=1.0)
    with pytest.raises(ValueError, match=r"needs CI\('percentile'\) or CI\('bca'\)"):
        cohen_kappa(df, "human", "judge", scale=SCALE, columns=CLUSTERED)


def two_raters(a: list[float], b: list[float]) -> pd.DataFrame:
    n = len(a)
    return pd.DataFrame(
        {"item": list(range(n)) * 2, "rater": ["A"] * n + ["B"] * n, "score": [*a, *b]}
    )


def test_undefined_and_degenerate_kappas_say_why():
    both = cohen_kappa(two_raters([3] * 12, [3] * 12), "A", "B").iloc[0]
    assert np.isnan(both["estimate"]) and both["note"] == "undefined: both raters constant"
    one = cohen_kappa(two_raters([0, 3, 5] * 4, [3] * 12), "A", "B").iloc[0]
    assert np.isnan(one["estimate"]) and one["note"] == "undefined: rater B constant"
    assert np.isnan(one["ci_low"]) and np.isnan(one["se"])
    perfect = cohen_kappa(two_raters([0, 3, 5, 5] * 2, [0, 3, 5, 5] * 2), "A", "B").iloc[0]
    assert perfect["estimate"] == 1.0
    assert np.isnan(perfect["ci_low"]) and perfect["note"] == "interval degenerate: n < 10"
    many = two_raters([0, 3, 5] * 10, [0, 3, 5] * 10)
    boot = cohen_kappa(many, "A", "B", ci=CI("percentile", seed=0)).iloc[0]
    assert np.isnan(boot["ci_high"]) and boot["note"].startswith("interval degenerate: zero width")


def test_no_usable_pairs_and_no_scale_does_not_crash():
    df = two_raters([np.nan] * 3, [1, 2, 3])
    row = cohen_kappa(df, "A", "B", weights="quadratic").iloc[0]
    assert row["n"] == 0 and np.isnan(row["estimate"])
    assert row["note"] == "undefined: no usable pairs"
    assert row["dropped_reason"] == "missing (A): 3"


def test_holm_and_benjamini_hochberg_against_hand_computation_per_family():
    table = pd.DataFrame(
        {
            "family": ["x"] * 4 + ["y"] * 2,
            "p_value": [0.01, 0.04, 0.03, 0.20, 0.039, np.nan],
        }
    )
    holm = adjust_p(table, family=["family"])
    p = np.array([0.01, 0.04, 0.03, 0.20])
    order = np.argsort(p)
    stepped = np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p))))
    expected = np.empty(4)
    expected[order] = np.minimum(stepped, 1.0)
    assert holm["p_adjusted"].iloc[:4].to_numpy() == pytest.approx(expected)
    assert holm["p_adjusted"].iloc[4] == pytest.approx(0.039)  # a family of one
    assert np.isnan(holm["p_adjusted"].iloc[5]) and holm["p_adjust"].iloc[0] == "Holm over 4 tests"
    assert (holm["p_value"] == table["p_value"]).sum() == 5  # raw p kept beside
    bh = adjust_p(table, family=["family"], method="fdr_bh")
    ref = multipletests(p, method="fdr_bh")[1]
    assert bh["p_adjusted"].iloc[:4].to_numpy() == pytest.approx(ref)
    with pytest.raises(ValueError, match="'holm' or 'fdr_bh'"):
        adjust_p(table, method="bonferroni")  # type: ignore[arg-type]


def test_permutation_within_clusters_matches_exact_enumeration():
    values = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 2.0])
    labels = np.array([True, False, True, False, True, False])
    clusters = np.array([0, 0, 1, 1, 2, 2])
    observed = values[labels].mean() - values[~labels].mean()
    stats = []
    for flips in itertools.product([False, True], repeat=3):  # which unit of each pair is "own"
        mark = np.array([f for flip in flips for f in ((not flip), flip)])
        stats.append(values[mark].mean() - values[~mark].mean())
    exact = np.mean(np.abs(stats) >= abs(observed) - 1e-12)
    test = permutation_within_clusters(values, labels, clusters, n_perm=20_000, seed=3)
    assert test["estimate"] == pytest.approx(observed)
    assert test["p_value"] == pytest.approx(exact, abs=0.01)


def test_self_preference_ordinal_rows_match_statsmodels_and_state_assumptions():
    rng = np.random.default_rng(0)
    questions, models = 60, ["A", "B", "C"]
    rows = []
    for q in range(questions):
        base = rng.normal(3, 1)
        for model in models:
            human = float(np.clip(np.round(base + rng.normal(0, 1)), 0, 5))
            judge = float(np.clip(human + (0.5 if model == "A" else 0) + rng.normal(0, 0.7), 0, 5))
            rows.append({"question": q, "model": model, "human_score": human, "score": judge})
    df = pd.DataFrame(rows).assign(rater="A")
    table = self_preference(df, n_perm=2000, seed=0).set_index("method")
    data = df.assign(diff=df["score"] - df["human_score"], own=(df["model"] == "A").astype(float))
    fit = smf.ols("diff ~ own", data).fit(
        cov_type="cluster", cov_kwds={"groups": data["question"]}, use_t=True
    )
    ols = table.loc["judge_minus_human_ols_clustered"]
    assert ols["estimate"] == pytest.approx(fit.params["own"])
    assert ols["se"] == pytest.approx(fit.bse["own"])
    perm = table.loc["judge_minus_human_permutation"]
    assert perm["estimate"] == pytest.approx(ols["estimate"])
    assert perm["p_value"] < 0.01 and np.isnan(perm["ci_low"])
    assert "exchangeable within a question" in perm["assumption"]
    assert "clustering ignored" in table.loc["naive_welch", "assumption"]


def test_min_kappa_interval_bootstraps_the_minimum_itself():
    rng = np.random.default_rng(6)
    truth = rng.integers(0, 3, 40)
    rows = []
    for variant, noise in (("v1", 0.1), ("v2", 0.3), ("v3", 0.5)):
        scores = np.where(rng.random(40) < noise, rng.integers(0, 3, 40), truth)
        rows += [{"item": i, "variant": variant, "score": SCALE[s]} for i, s in enumerate(scores)]
    df = pd.DataFrame(rows)
    low, high = min_kappa_interval(
        df, scale=SCALE, weights="quadratic", weight_basis="rank",
        ci=CI("percentile", n_boot=200, seed=4), columns=Columns(rater="variant"),
    )  # fmt: skip
    wide = df.pivot(index="item", columns="variant", values="score")
    draw = np.random.default_rng(4)
    minima = []
    for _ in range(200):
        pick = wide.iloc[draw.integers(0, len(wide), size=len(wide))]
        minima.append(
            min(
                cohen_kappa_score(pick[x], pick[y], weights="quadratic", labels=SCALE)
                for x, y in itertools.combinations(wide.columns, 2)
            )
        )
    assert (low, high) == pytest.approx(tuple(np.quantile(minima, [0.025, 0.975])), abs=1e-12)


def test_clustered_alpha_matches_a_loop_over_the_krippendorff_package():
    import krippendorff

    df = clustered_pairs(8, questions=25, per_question=4, effect=1.0)
    row = krippendorff_alpha(
        df, scale=SCALE, ci=CI("percentile", n_boot=200, seed=11), columns=CLUSTERED
    ).iloc[0]
    wide = df.pivot(index="item", columns="rater", values="score")  # items in first-seen order
    question = df.drop_duplicates("item").set_index("item")["question"].astype(str)
    labels = np.unique(question)
    members = [wide.index[question.to_numpy() == label] for label in labels]
    rng = np.random.default_rng(11)
    values = []
    for _ in range(200):
        drawn = rng.integers(0, len(labels), size=len(labels))
        rows = wide.loc[np.concatenate([members[g] for g in drawn])]
        values.append(
            krippendorff.alpha(reliability_data=rows.to_numpy().T, level_of_measurement="interval")
        )
    low, high = np.quantile(values, [0.025, 0.975])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9)


def test_seed004_report_passes_the_cluster_to_every_check():
    from judgekit.stats import seed004_report

    df = clustered_pairs(9, questions=30, per_question=3, effect=1.0)
    df = df.assign(rater=df["rater"].map({"human": "human", "judge": "j"}), run=0, variant="base")
    judge = df[df["rater"] == "j"]
    again = judge.assign(run=1)
    table = pd.concat([df, again], ignore_index=True)
    report = seed004_report(
        table,
        judge="j",
        human="human",
        scale=SCALE,
        ci=CI("bca", n_boot=300, seed=0),
        columns=CLUSTERED,
    ).set_index("check")
    assert report.loc["run_consistency", "estimate"] == 1.0
    assert report.loc["human_agreement", "ci_low"] < report.loc["human_agreement", "estimate"]


def test_clustered_topic_interval_matches_the_sandwich_formula_by_hand():
    from scipy import stats as scipy_stats

    from judgekit.riddles import topic_difficulty

    rng = np.random.default_rng(12)
    riddle = np.repeat(np.arange(40), 6)
    score = np.clip(np.repeat(rng.normal(3, 1.2, 40), 6) + rng.normal(0, 0.8, 240), 0, 5)
    df = pd.DataFrame({"topic": np.where(riddle < 20, "a", "b"), "riddle": riddle, "acc": score})
    table = topic_difficulty(
        df, topic_col="topic", score_col="acc", columns=Columns(cluster="riddle")
    )
    row = table.set_index("topic").loc["a"]
    part = df[df["topic"] == "a"]
    y, n, g = part["acc"].to_numpy(), len(part), part["riddle"].nunique()
    sums = (part["acc"] - y.mean()).groupby(part["riddle"]).sum().to_numpy()
    # Liang-Zeger sandwich of a mean with the usual G/(G-1) * (N-1)/(N-k) factor, k = 1.
    se = np.sqrt(g / (g - 1) * (n - 1) / (n - 1) * np.sum(sums**2)) / n
    half = scipy_stats.t.ppf(0.975, g - 1) * se
    assert row["se"] == pytest.approx(se)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((y.mean() - half, y.mean() + half))
    assert row["n_clusters"] == 20 and row["design_effect"] > 1.5


def test_undefined_alpha_and_correlation_say_why():
    same = two_raters([3] * 12, [3] * 12)
    alpha = krippendorff_alpha(same, ci=CI("percentile", seed=0)).iloc[0]
    assert np.isnan(alpha["estimate"]) and alpha["note"] == "undefined: every rating on one level"
    from judgekit.stats import correlation

    flat = correlation(two_raters([0, 3, 5] * 4, [5] * 12), "A", "B").iloc[0]
    assert np.isnan(flat["estimate"]) and flat["note"] == "undefined: rater B constant"


def _variant_scores(n_items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, n_items)
    frames = []
    for variant in ("base", "paraphrase_1", "paraphrase_2"):
        noisy = np.where(rng.random(n_items) < 0.85, base, rng.integers(0, 4, n_items))
        frames.append(
            pd.DataFrame(
                {
                    "item": [f"i{i}" for i in range(n_items)],
                    "rater": variant,
                    "score": noisy.astype(float),
                    "question": [f"q{i // 4}" for i in range(n_items)],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("cluster", [None, "question"])
def test_min_kappa_bootstrap_memory_does_not_grow_with_replicates_times_items(
    cluster: str | None,
) -> None:
    """The minimum-kappa bootstrap counts drawn patterns in chunks (no n_boot x n_items matrix).

    A dense float weight matrix for 1,000 replicates of 50,000 items alone is 400 MB (the
    dense code grew by 1.5 GB at the same product, 25,000 items x 2,000 replicates);
    chunked, the whole call stays under 150 MB (about 90 MB measured, most of it the data
    frames), whatever the product.
    """
    import tracemalloc

    from judgekit.stats.consistency import min_kappa_interval

    frame = _variant_scores(50_000, seed=2)
    options = {"scale": [0, 1, 2, 3], "weights": "quadratic", "weight_basis": "rank"}
    columns = Columns(cluster=cluster) if cluster else Columns()
    tracemalloc.start()
    low, high = min_kappa_interval(
        frame, ci=CI("percentile", n_boot=1000, seed=0), columns=columns, **options
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 0.6 < low < high < 0.8
    assert peak < 150e6, f"peak {peak / 1e6:.0f} MB"


def test_an_item_without_a_cluster_is_an_error_never_its_own_cluster():
    from judgekit.stats import position_effects
    from judgekit.stats.examples import batch_judgments, two_raters
    from judgekit.types import UsageError

    judgments, human = batch_judgments()
    judgments["question"] = ["a", "b", "c"] * 3 + ["d", "d", None]
    by_question = Columns(item="item_id", cluster="question")
    with pytest.raises(UsageError, match="has no cluster: every row needs one"):
        position_effects(judgments, human, adjust="difference", columns=by_question)
    long = two_raters().assign(question=lambda d: d["item"].where(d["item"] != 12) % 4)
    with pytest.raises(UsageError, match="item 12 has no value in cluster column 'question'"):
        agreement_rates(long, "judge", "human", columns=Columns(cluster="question"))
