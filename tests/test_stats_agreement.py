"""Cohen's kappa, agreement rates and confusion tables against sklearn, statsmodels and SAS."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from judgekit.stats import (
    CI,
    Columns,
    agreement_rates,
    cohen_kappa,
    confusion_table,
    confusion_wide,
    kappa_matrix,
    pairwise_kappa,
)
from judgekit.stats.agreement import disagreement_weights, kappa_from_pairs, kappa_stat
from judgekit.types import Scale

SCALE = (0.0, 3.0, 5.0)


def two_raters(a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    n = len(a)
    return pd.DataFrame(
        {
            "item": np.r_[np.arange(n), np.arange(n)],
            "rater": ["human"] * n + ["judge"] * n,
            "score": np.r_[a, b].astype(float),
        }
    )


def correlated(seed: int, n: int, levels: tuple[float, ...], keep: float = 0.6):
    rng = np.random.default_rng(seed)
    a = rng.choice(levels, n)
    b = np.where(rng.random(n) < keep, a, rng.choice(levels, n))
    return a, b


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_rank_based_kappa_matches_sklearn_and_statsmodels_se(seed, weights):
    a, b = correlated(seed, 150, SCALE)
    row = cohen_kappa(two_raters(a, b), "human", "judge", scale=SCALE, weights=weights)
    assert row["estimate"].iloc[0] == pytest.approx(cohen_kappa_score(a, b, weights=weights))
    table = pd.crosstab(a, b).reindex(index=SCALE, columns=SCALE, fill_value=0).to_numpy()
    # statsmodels with its default category scores 0..k-1 is the rank basis.
    ref = sm_cohens_kappa(table, wt=weights) if weights else sm_cohens_kappa(table)
    assert row["estimate"].iloc[0] == pytest.approx(ref.kappa)
    assert row["se"].iloc[0] == pytest.approx(ref.std_kappa)
    assert row["n"].iloc[0] == 150


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_value_based_kappa_matches_statsmodels_with_value_scores(weights):
    a, b = correlated(7, 200, SCALE)
    row = cohen_kappa(
        two_raters(a, b), "human", "judge", scale=SCALE, weights=weights, weight_basis="value"
    )
    table = pd.crosstab(a, b).reindex(index=SCALE, columns=SCALE, fill_value=0).to_numpy()
    # statsmodels' `weights` are category scores; |x - y| or (x - y)^2 of the real values.
    ref = sm_cohens_kappa(table, weights=np.array(SCALE), wt=weights)
    assert row["estimate"].iloc[0] == pytest.approx(ref.kappa)
    assert row["se"].iloc[0] == pytest.approx(ref.std_kappa)
    # By hand: 1 - sum(v O) / sum(v E) with v = |x - y|^p on the values.
    p = 1 if weights == "linear" else 2
    v = np.abs(np.subtract.outer(SCALE, SCALE)) ** p
    obs = table / table.sum()
    exp = np.outer(obs.sum(1), obs.sum(0))
    assert row["estimate"].iloc[0] == pytest.approx(1 - (v * obs).sum() / (v * exp).sum())
    rank = cohen_kappa(two_raters(a, b), "human", "judge", scale=SCALE, weights=weights)
    assert abs(rank["estimate"].iloc[0] - row["estimate"].iloc[0]) > 1e-3


def test_disagreement_weights_rank_and_value_on_uneven_scale():
    rank = disagreement_weights(SCALE, "linear", "rank")
    value = disagreement_weights(SCALE, "linear", "value")
    np.testing.assert_allclose(rank[0], [0, 0.5, 1])
    np.testing.assert_allclose(value[0], [0, 0.6, 1])
    np.testing.assert_allclose(disagreement_weights(SCALE, None), 1 - np.eye(3))


def test_sas_published_example_unweighted_and_weighted():
    # SAS/STAT PROC FREQ agreement example (also statsmodels' reference): 19 subjects,
    # 3 categories, table rows = rater A. SAS prints kappa 0.4842, ASE 0.1380, 95% CI
    # (0.2137, 0.7547); weighted kappa (Cicchetti-Allison = linear weights 1 - |i-j|/2)
    # 0.4701, ASE 0.1457, CI (0.1845, 0.7558). Derivation (unweighted): p_o = 13/19, margins
    # rows (5, 8, 6)/19, cols (0, 13, 6)/19, p_e = (0 + 104 + 36)/361 = 140/361, so
    # kappa = (13/19 - 140/361) / (1 - 140/361) = (247 - 140) / (361 - 140) = 107/221 = 0.4842.
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    a = np.repeat(np.repeat([1, 2, 3], 3), table.ravel())
    b = np.repeat(np.tile([1, 2, 3], 3), table.ravel())
    df = two_raters(a, b)
    plain = cohen_kappa(df, "human", "judge").iloc[0]
    assert plain["estimate"] == pytest.approx(107 / 221)
    assert [round(plain[c], 4) for c in ("estimate", "se", "ci_low", "ci_high")] == [
        0.4842,
        0.1380,
        0.2137,
        0.7547,
    ]
    linear = cohen_kappa(df, "human", "judge", weights="linear").iloc[0]
    assert [round(linear[c], 4) for c in ("estimate", "se", "ci_low", "ci_high")] == [
        0.4701,
        0.1457,
        0.1845,
        0.7558,
    ]
    assert linear["estimate"] == pytest.approx(cohen_kappa_score(a, b, weights="linear"))


def test_pairs_are_joined_on_item_before_dropping():
    # Rater b abstains on item 1 and errored on item 2; rater a never saw item 4.
    # Dropping from each list separately would shift b's scores against a's.
    rows = [
        ("i0", "a", 0, "ok"), ("i1", "a", 3, "ok"), ("i2", "a", 5, "ok"), ("i3", "a", 5, "ok"),
        ("i5", "a", 0, "ok"), ("i3", "b", 5, "ok"), ("i1", "b", -1, "ok"), ("i0", "b", 0, "ok"),
        ("i2", "b", np.nan, "error"), ("i4", "b", 3, "ok"), ("i5", "b", 3, "ok"),
    ]  # fmt: skip
    df = pd.DataFrame(rows, columns=["item", "rater", "score", "status"])
    row = cohen_kappa(df, "a", "b", scale=SCALE).iloc[0]
    # Usable pairs: i0 (0, 0), i3 (5, 5), i5 (0, 3).
    assert row["n"] == 3
    assert row["estimate"] == pytest.approx(cohen_kappa_score([0, 5, 0], [0, 5, 3]))
    assert row["n_dropped"] == 3
    assert row["dropped_reason"] == "abstain (b): 1; error (b): 1; not rated (a): 1"


def test_custom_column_names_and_scale_object():
    a, b = correlated(3, 60, SCALE)
    df = two_raters(a, b).rename(columns={"item": "id", "rater": "who", "score": "acc"})
    df["state"] = "ok"
    row = cohen_kappa(
        df, "human", "judge", scale=Scale((0, 3, 5), abstain=(-1,)), weights="quadratic",
        columns=Columns(item="id", rater="who", score="acc", status="state"),
    )  # fmt: skip
    assert row["estimate"].iloc[0] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


def test_bad_input_is_rejected_with_a_clear_message():
    df = two_raters(np.array([0, 3]), np.array([0, 4]))
    with pytest.raises(ValueError, match=r"row 3, column 'score': score 4 is not on the scale"):
        cohen_kappa(df, "human", "judge", scale=SCALE)
    with pytest.raises(ValueError, match="missing column"):
        cohen_kappa(df.drop(columns="item"), "human", "judge")
    dup = pd.concat([df, df.iloc[[0]]])
    with pytest.raises(ValueError, match="several usable scores"):
        cohen_kappa(dup, "human", "judge")
    bad = df.astype({"score": object})
    bad.loc[1, "score"] = "five"
    with pytest.raises(ValueError, match="row 1, column 'score'"):
        cohen_kappa(bad, "human", "judge")


def test_bootstrap_is_seeded():
    a, b = correlated(11, 120, SCALE)
    df = two_raters(a, b)
    run = lambda seed: cohen_kappa(  # noqa: E731
        df, "human", "judge", scale=SCALE, weights="quadratic", ci=CI("bca", n_boot=500, seed=seed)
    )[["ci_low", "ci_high"]].to_numpy()
    np.testing.assert_array_equal(run(5), run(5))
    np.testing.assert_array_equal(run(np.random.default_rng(5)), run(5))
    assert not np.array_equal(run(5), run(6))
    with pytest.raises(ValueError, match="explicit seed"):
        cohen_kappa(df, "human", "judge", ci=CI("percentile"))


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_cell_count_statistic_equals_sklearn_on_resampled_rows(weights):
    # The bootstrap draws confusion-cell counts instead of rows: check that the statistic of
    # drawn counts equals sklearn on the rows those counts stand for.
    a, b = correlated(4, 80, SCALE)
    k = len(SCALE)
    codes = np.searchsorted(SCALE, a) * k + np.searchsorted(SCALE, b)
    rng = np.random.default_rng(0)
    stat = kappa_stat(disagreement_weights(SCALE, weights))
    for _ in range(5):
        rows = rng.integers(0, len(a), len(a))
        cells = np.bincount(codes[rows], minlength=k * k).astype(float)
        expected = cohen_kappa_score(a[rows], b[rows], weights=weights, labels=list(SCALE))
        assert stat(cells[None])[0] == pytest.approx(expected)


def quadratic_kappa_moments(x, y, axis=-1):
    # Quadratic-weighted kappa on level codes equals 2 cov / (var x + var y + (mean diff)^2)
    # with population moments (Schuster 2004, Educ. Psychol. Meas. 64, 243-253).
    mx, my = x.mean(axis, keepdims=True), y.mean(axis, keepdims=True)
    cov = ((x - mx) * (y - my)).mean(axis)
    gap = (mx - my).squeeze(axis) ** 2
    return 2 * cov / (x.var(axis) + y.var(axis) + gap)


def test_bca_interval_close_to_scipy_bca():
    a, b = correlated(9, 150, SCALE)
    codes_a, codes_b = np.searchsorted(SCALE, a), np.searchsorted(SCALE, b)
    assert quadratic_kappa_moments(codes_a, codes_b) == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic")
    )
    ours = kappa_from_pairs(a, b, SCALE, weights="quadratic", ci=CI("bca", n_boot=10000, seed=1))
    ref = sps.bootstrap(
        (codes_a.astype(float), codes_b.astype(float)),
        quadratic_kappa_moments,
        paired=True, n_resamples=10000, method="BCa", random_state=1,
    ).confidence_interval  # fmt: skip
    assert ours["ci_low"] == pytest.approx(ref.low, abs=0.01)
    assert ours["ci_high"] == pytest.approx(ref.high, abs=0.01)


def test_interval_coverage_on_simulated_data():
    # Population: a fixed joint distribution of two raters; its kappa is the target.
    joint = np.array([[0.25, 0.05, 0.02], [0.05, 0.2, 0.05], [0.02, 0.06, 0.3]])
    joint /= joint.sum()
    v = disagreement_weights(SCALE, "quadratic")
    truth = 1 - (v * joint).sum() / (v * np.outer(joint.sum(1), joint.sum(0))).sum()
    rng = np.random.default_rng(2024)
    hits = {"analytic": 0, "percentile": 0}
    reps = 200
    for _ in range(reps):
        cells = rng.choice(9, size=120, p=joint.ravel())
        a, b = np.take(SCALE, cells // 3), np.take(SCALE, cells % 3)
        for ci in hits:
            interval = CI(ci, n_boot=400, seed=rng)
            row = kappa_from_pairs(a, b, SCALE, weights="quadratic", ci=interval)
            hits[ci] += row["ci_low"] <= truth <= row["ci_high"]
    for ci, count in hits.items():
        assert 0.88 <= count / reps <= 0.99, (ci, count / reps)


def test_agreement_rates_on_scale_steps_with_wilson_interval():
    a = np.array([0, 0, 3, 5, 5, 0, 3, 5])
    b = np.array([0, 3, 5, 0, 5, 5, 3, 3])
    rates = agreement_rates(two_raters(a, b), "human", "judge", scale=SCALE).set_index("statistic")
    assert rates.loc["exact", "estimate"] == pytest.approx(3 / 8)
    # One step apart: (0,3), (3,5), (5,3) -> within one: 3 exact + 3; (5,0) and (0,5) are two steps.
    assert rates.loc["within_one", "estimate"] == pytest.approx(6 / 8)
    low, high = proportion_confint(6, 8, method="wilson")
    assert rates.loc["within_one", ["ci_low", "ci_high"]].tolist() == pytest.approx([low, high])


def test_confusion_tables_keep_unused_levels_in_scale_order():
    df = two_raters(np.array([5, 0, 5]), np.array([5, 0, 0]))
    tidy = confusion_table(df, "human", "judge", scale=SCALE)
    assert tidy[["level_a", "level_b"]].to_numpy().tolist() == [
        [x, y] for x in SCALE for y in SCALE
    ]
    assert tidy["count"].sum() == 3
    wide = confusion_wide(tidy, "human", "judge")
    assert list(wide.index) == list(SCALE) and list(wide.columns) == list(SCALE)
    assert wide.loc[3.0].sum() == 0
    assert wide.loc[5.0, 0.0] == 1 and wide.loc[5.0, 5.0] == 1


def test_pairwise_kappa_and_matrix():
    rng = np.random.default_rng(3)
    truth = rng.choice(SCALE, 60)
    frames = []
    for variant in ("base", "p1", "p2"):
        noisy = np.where(rng.random(60) < 0.8, truth, rng.choice(SCALE, 60))
        frames.append(pd.DataFrame({"item": range(60), "variant": variant, "score": noisy}))
    df = pd.concat(frames)
    table = pairwise_kappa(df, columns=Columns(rater="variant"), scale=SCALE, weights="quadratic")
    assert len(table) == 3
    wide = kappa_matrix(table)
    np.testing.assert_allclose(wide.to_numpy(), wide.to_numpy().T)
    base = df[df["variant"] == "base"]["score"].to_numpy()
    p2 = df[df["variant"] == "p2"]["score"].to_numpy()
    assert wide.loc["base", "p2"] == pytest.approx(cohen_kappa_score(base, p2, weights="quadratic"))


def test_unknown_rater_and_degenerate_tables():
    df = two_raters(np.array([1, 1, 1]), np.array([1, 1, 1]))
    with pytest.raises(ValueError, match="no rows for rater 'nobody'"):
        cohen_kappa(df, "human", "nobody")
    # Everyone in one category: chance agreement is 1 and kappa is undefined (NaN), not 1 or 0.
    row = cohen_kappa(df, "human", "judge").iloc[0]
    assert np.isnan(row["estimate"]) and row["n"] == 3


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(SCALE), st.sampled_from(SCALE)), min_size=2, max_size=40),
    st.sampled_from([None, "linear", "quadratic"]),
)
def test_kappa_equals_sklearn_on_arbitrary_tables(pairs, weights):
    a, b = (np.array(side) for side in zip(*pairs, strict=True))
    row = kappa_from_pairs(a, b, SCALE, weights=weights)
    ours = row["estimate"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns when kappa is undefined (returns NaN)
        ref = cohen_kappa_score(a, b, weights=weights, labels=list(SCALE))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        # sklearn returns 0 (one rater constant) or NaN (both): kappa is 0 whatever the scores,
        # so judgekit reports it undefined, with the reason.
        assert np.isnan(ours) and "constant" in row["note"]
        assert np.isnan(ref) or ref == pytest.approx(0.0)
    elif np.isnan(ref):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(ref)


def test_analytic_kappa_interval_stays_within_kappas_bounds() -> None:
    # near-perfect agreement on 10 items: the normal interval would reach past 1
    a = np.array([0, 0, 0, 3, 3, 5, 5, 5, 5, 5], dtype=float)
    b = a.copy()
    b[0] = 3
    row = kappa_from_pairs(a, b, (0.0, 3.0, 5.0), weights="quadratic")
    assert row["estimate"] + 1.96 * row["se"] > 1  # type: ignore[operator]
    assert row["ci_high"] == 1.0


def test_kappa_without_an_interval_has_none_even_clustered() -> None:
    a, b = np.tile([1.0, 2, 3, 3, 2, 1], 5), np.tile([1.0, 2, 3, 2, 2, 1], 5)
    levels = (1.0, 2.0, 3.0)
    plain = kappa_from_pairs(a, b, levels, ci=CI(None))
    analytic = kappa_from_pairs(a, b, levels)
    assert plain["estimate"] == analytic["estimate"] and np.isfinite(analytic["ci_low"])
    assert plain["ci_method"] == "none" and np.isnan([plain["se"], plain["ci_low"]]).all()
    clusters = np.repeat(np.arange(15), 2)
    clustered = kappa_from_pairs(a, b, levels, ci=CI(None), clusters=clusters)
    assert clustered["estimate"] == plain["estimate"] and np.isnan(clustered["ci_high"])
