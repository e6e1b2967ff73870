"""Krippendorff's alpha, Fleiss' kappa, Gwet's AC1/AC2 against packages and published examples."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgekit.stats import CI, fleiss_kappa, gwet_ac, krippendorff_alpha
from judgekit.stats._bootstrap import unique_patterns
from judgekit.stats.agreement import disagreement_weights
from judgekit.stats.multirater import alpha_stat, chance_corrected_stat

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# (rows) x 12 units (columns), NaN = not coded. Unit 12 has one value and is not pairable.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)
# Fleiss (1971), Table 1 as distributed with R's irr package (`diagnoses`): 30 patients,
# 6 psychiatrists, 5 diagnoses coded 1-5. Fleiss reports kappa = .430.
DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ]
)  # fmt: skip
# The widely reproduced 10 subjects x 14 raters x 5 categories example (Wikipedia, "Fleiss'
# kappa"), given as counts per category: P_bar = 0.378, P_e = 0.213, kappa = 0.210.
WIKIPEDIA_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
)  # fmt: skip


def to_long(matrix: np.ndarray) -> pd.DataFrame:
    """Items x raters matrix (NaN = not rated) -> long table."""
    items, raters = np.indices(matrix.shape)
    return pd.DataFrame(
        {"item": items.ravel(), "rater": raters.ravel(), "score": matrix.ravel().astype(float)}
    )


def counts_to_long(counts: np.ndarray) -> pd.DataFrame:
    rows = [
        (item, f"r{slot}", float(level))
        for item, row in enumerate(counts)
        for slot, level in enumerate(np.repeat(np.arange(len(row)), row))
    ]
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


def random_ratings(seed: int, items: int = 60, raters: int = 5, levels=(1, 2, 3, 4, 5)):
    rng = np.random.default_rng(seed)
    truth = rng.choice(levels, items)
    noisy = np.where(
        rng.random((items, raters)) < 0.6, truth[:, None], rng.choice(levels, (items, raters))
    )
    matrix = noisy.astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = NAN
    return matrix


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_worked_example(level, published):
    df = to_long(KRIPPENDORFF_2011.T)
    row = krippendorff_alpha(df, level_of_measurement=level).iloc[0]
    assert round(row["estimate"], 3) == published
    ref = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert row["estimate"] == pytest.approx(ref)
    # 11 pairable units; the 7 blank cells and unit 12's lone value are set aside.
    assert row["n"] == 11
    assert row["dropped_reason"] == "item with a single rating: 1; missing: 7"


def test_krippendorff_2011_nominal_by_hand():
    # Coincidences o_ck = sum over units of (c-k pairs) / (m_u - 1). The 40 pairable values
    # have margins n_1..n_5 = 9, 13, 10, 5, 3 (sum of squares 384) and off-diagonal mass 8, so
    # alpha_nominal = 1 - (n - 1) * 8 / (n^2 - 384) = 1 - 39 * 8 / 1216 = 0.7434.
    data = KRIPPENDORFF_2011.T
    pairable = data[(~np.isnan(data)).sum(1) >= 2]
    o = np.zeros((5, 5))
    for unit in pairable:
        values = unit[~np.isnan(unit)].astype(int) - 1
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    o[c, k] += 1 / (len(values) - 1)
    margins = o.sum(1)
    n = margins.sum()
    assert n == 40
    by_hand = 1 - (n - 1) * (o.sum() - np.trace(o)) / (n**2 - (margins**2).sum())
    ours = krippendorff_alpha(to_long(data), level_of_measurement="nominal")["estimate"].iloc[0]
    assert ours == pytest.approx(by_hand)
    np.testing.assert_allclose(margins, [9, 13, 10, 5, 3])
    assert by_hand == pytest.approx(1 - 39 * 8 / 1216)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_matches_krippendorff_package_with_missing(seed, level):
    matrix = random_ratings(seed)
    ours = krippendorff_alpha(to_long(matrix), level_of_measurement=level, scale=(1, 2, 3, 4, 5))
    ref = krippendorff.alpha(
        reliability_data=matrix.T, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5]
    )
    assert ours["estimate"].iloc[0] == pytest.approx(ref)


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_pattern_statistic_equals_package_on_resampled_items(level):
    matrix = random_ratings(5)
    rows = matrix[(~np.isnan(matrix)).sum(1) >= 2]
    counts = np.stack([np.bincount(r[~np.isnan(r)].astype(int) - 1, minlength=5) for r in rows])
    patterns, _, inverse = unique_patterns(counts)
    stat = alpha_stat(patterns, (1, 2, 3, 4, 5), level)
    rng = np.random.default_rng(1)
    for _ in range(3):
        pick = rng.integers(0, len(rows), len(rows))
        weights = np.bincount(inverse[pick], minlength=len(patterns)).astype(float)
        ref = krippendorff.alpha(
            reliability_data=rows[pick].T, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5]
        )
        assert stat(weights[None])[0] == pytest.approx(ref)


def test_fleiss_1971_diagnoses():
    row = fleiss_kappa(to_long(DIAGNOSES)).iloc[0]
    assert round(row["estimate"], 3) == 0.430
    assert row["estimate"] == pytest.approx(sm_fleiss_kappa(aggregate_raters(DIAGNOSES)[0]))


def test_fleiss_wikipedia_14_raters():
    row = fleiss_kappa(counts_to_long(WIKIPEDIA_COUNTS)).iloc[0]
    assert round(row["estimate"], 3) == 0.210
    assert row["estimate"] == pytest.approx(sm_fleiss_kappa(WIKIPEDIA_COUNTS))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fleiss_matches_statsmodels_on_random_complete_data(seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 4, (40, 7))
    ours = fleiss_kappa(to_long(matrix.astype(float)))["estimate"].iloc[0]
    assert ours == pytest.approx(sm_fleiss_kappa(aggregate_raters(matrix)[0]))


# 12 items x 4 raters with gaps; reference values from irrCAC 0.4.4 (the Python port of
# Gwet's R package, CAC(raw, weights=..., categories=[1, 2, 3, 4]).gwet() / .fleiss()),
# which prints 5 decimals.
GWET_DATA = np.array(
    [
        [1, 1, 2, NAN], [2, 2, 2, 2], [3, 3, 3, 4], [1, 2, NAN, 1], [4, 4, 4, 4], [2, 3, 3, 3],
        [1, 1, 1, NAN], [NAN, 4, 3, 4], [2, 2, 1, 2], [3, 3, 3, 3], [1, NAN, NAN, 1],
        [4, 4, 3, 3],
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("weights", "gwet", "fleiss"),
    [(None, 0.53832, 0.53313), ("linear", 0.72544, None), ("quadratic", 0.86407, None)],
)
def test_gwet_and_fleiss_match_irrcac_reference(weights, gwet, fleiss):
    df = to_long(GWET_DATA)
    ours = gwet_ac(df, weights=weights, scale=(1, 2, 3, 4))["estimate"].iloc[0]
    assert ours == pytest.approx(gwet, abs=5e-6)
    if fleiss is not None:
        assert fleiss_kappa(df)["estimate"].iloc[0] == pytest.approx(fleiss, abs=5e-6)


def gwet_by_loops(matrix: np.ndarray, levels: list[float], agree: np.ndarray) -> float:
    """Gwet (2014) eq. 4.1-4.3 written out with loops, as an independent check."""
    q = len(levels)
    rated = [row[~np.isnan(row)] for row in matrix]
    rated = [r for r in rated if len(r) >= 1]
    p_a_terms = []
    pi = np.zeros(q)
    for r in rated:
        counts = np.array([(r == lv).sum() for lv in levels], dtype=float)
        pi += counts / len(r)
        if len(r) >= 2:
            star = agree @ counts
            p_a_terms.append(
                sum(counts[k] * (star[k] - 1) for k in range(q)) / (len(r) * (len(r) - 1))
            )
    pi /= len(rated)
    p_a = np.mean(p_a_terms)
    p_e = agree.sum() / (q * (q - 1)) * sum(p * (1 - p) for p in pi)
    return (p_a - p_e) / (1 - p_e)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_gwet_matches_literal_formula_on_random_data(weights):
    matrix = random_ratings(3, levels=(1, 2, 3, 4))
    levels = [1.0, 2.0, 3.0, 4.0, 5.0]  # a scale level nobody used still counts in q
    agree = 1 - disagreement_weights(tuple(levels), weights)
    ours = gwet_ac(to_long(matrix), weights=weights, scale=levels)["estimate"].iloc[0]
    assert ours == pytest.approx(gwet_by_loops(matrix, levels, agree))


def test_multirater_bootstrap_is_seeded_and_covers_estimate():
    df = to_long(random_ratings(8))
    for fn in (krippendorff_alpha, fleiss_kappa, gwet_ac):
        first = fn(df, ci=CI("bca", n_boot=300, seed=3)).iloc[0]
        again = fn(df, ci=CI("bca", n_boot=300, seed=3)).iloc[0]
        assert (first["ci_low"], first["ci_high"]) == (again["ci_low"], again["ci_high"])
        assert first["ci_low"] < first["estimate"] < first["ci_high"]
        assert first["ci_method"] == "bca"


def test_fleiss_pattern_statistic_with_weights_equals_statsmodels():
    rng = np.random.default_rng(4)
    matrix = rng.integers(0, 3, (30, 5))
    counts = aggregate_raters(matrix)[0]
    patterns, _, inverse = unique_patterns(counts)
    stat = chance_corrected_stat(patterns, np.eye(patterns.shape[1]), "fleiss")
    pick = rng.integers(0, 30, 30)
    weights = np.bincount(inverse[pick], minlength=len(patterns)).astype(float)
    assert stat(weights[None])[0] == pytest.approx(sm_fleiss_kappa(counts[pick]))


def test_abstentions_and_failed_statuses_are_not_ratings():
    df = to_long(DIAGNOSES)
    df["status"] = "ok"
    extra = pd.DataFrame(
        {"item": [0, 1, 2], "rater": [9, 9, 9], "score": [-1.0, NAN, 2.0],
         "status": ["ok", "unparseable", "duplicate"]}
    )  # fmt: skip
    row = fleiss_kappa(pd.concat([df, extra])).iloc[0]
    assert row["estimate"] == pytest.approx(sm_fleiss_kappa(aggregate_raters(DIAGNOSES)[0]))
    assert row["n_dropped"] == 3
    assert row["dropped_reason"] == "abstain: 1; duplicate: 1; unparseable: 1"
