"""Panel statistics against independent implementations and synthetic panels of known quality.

Agreement: sklearn's weighted kappa, the krippendorff package, statsmodels' Fleiss kappa.
Error correlation: numpy's Pearson correlation. Juries: numpy means / medians and hand-counted
majorities; Dawid-Skene: crowd-kit's ``DawidSkene`` and planted confusion matrices; learned
weights: sklearn's ``cross_val_predict`` on the same folds. Synthetic panels: independent
errors must make the jury better than every judge, shared errors must not.
"""

from __future__ import annotations

from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene as CrowdKitDawidSkene
from sklearn.linear_model import LinearRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import PredefinedSplit, cross_val_predict
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from judgekit.stats import CI, Columns
from judgekit.stats.bias_panel import panel_self_preference
from judgekit.stats.jury import jury_scores, with_juries
from judgekit.stats.jury_compare import jury_vs_best, panel_subsets, pareto_front
from judgekit.stats.jury_models import cluster_folds, cross_fitted_weights, dawid_skene
from judgekit.stats.panel import effective_judges, error_correlation, panel_agreement
from judgekit.types import UsageError

SCALE = (0.0, 3.0, 5.0)
BY_Q = Columns(cluster="question")
FAST = CI("percentile", n_boot=200, seed=7)


def synthetic_panel(
    n_questions: int = 60,
    per_question: int = 4,
    k: int = 5,
    accuracy: float = 0.7,
    shared: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Human = truth; each judge copies it with prob. ``accuracy``, else errs.

    An error is shared (every erring judge gives the item's one wrong level) with probability
    ``shared``, else each erring judge draws its own wrong level.
    """
    rng = np.random.default_rng(seed)
    n = n_questions * per_question
    truth = rng.integers(0, 3, n)
    common_wrong = (truth + rng.integers(1, 3, n)) % 3
    rows = [(i, i // per_question, "human", SCALE[t]) for i, t in enumerate(truth)]
    common_err = rng.random(n) < 1 - accuracy
    for j in range(k):
        own_err = rng.random(n) < 1 - accuracy
        own_wrong = (truth + rng.integers(1, 3, n)) % 3
        is_shared = rng.random() < 0 if shared == 0 else rng.random(n) < shared
        err = np.where(is_shared, common_err, own_err)
        wrong = np.where(is_shared, common_wrong, own_wrong)
        level = np.where(err, wrong, truth)
        rows += [(i, i // per_question, f"j{j}", SCALE[s]) for i, s in enumerate(level)]
    return pd.DataFrame(rows, columns=["item", "question", "rater", "score"]).assign(status="ok")


JUDGES = [f"j{j}" for j in range(5)]


def test_panel_agreement_matches_sklearn_krippendorff_and_statsmodels() -> None:
    long = synthetic_panel(k=3, accuracy=0.6, seed=1)
    judges = JUDGES[:3]
    table = panel_agreement(long, judges, scale=SCALE, ci=FAST, columns=BY_Q)
    wide = long.pivot(index="item", columns="rater", values="score")
    for a, b in combinations(judges, 2):
        row = table[(table["rater_a"] == a) & (table["rater_b"] == b)].iloc[0]
        assert row["estimate"] == pytest.approx(
            cohen_kappa_score(wide[a], wide[b], weights="quadratic"), abs=1e-12
        )
        assert row["ci_low"] < row["estimate"] < row["ci_high"]
    ranks = wide[judges].replace({0.0: 0, 3.0: 1, 5.0: 2}).to_numpy().T
    alpha = table[table["statistic"] == "krippendorff_alpha"].iloc[0]
    assert alpha["estimate"] == pytest.approx(
        krippendorff.alpha(ranks, level_of_measurement="interval"), abs=1e-10
    )
    fleiss = table[table["statistic"] == "fleiss_kappa"].iloc[0]
    counts, _ = aggregate_raters(wide[judges].to_numpy())
    assert fleiss["estimate"] == pytest.approx(sm_fleiss(counts), abs=1e-10)
    assert "cluster bootstrap" in fleiss["ci_method"]


def test_error_correlation_matches_numpy_and_kish_formula() -> None:
    long = synthetic_panel(k=3, shared=0.5, seed=2)
    wide = long.pivot(index="item", columns="rater", values="score")
    rank = wide.replace({0.0: 0, 3.0: 1, 5.0: 2})
    errors = rank[JUDGES[:3]].sub(rank["human"], axis=0)
    centred = errors - errors.groupby(rank["human"]).transform("mean")
    for given_human, reference in ((True, centred), (False, errors)):
        table = error_correlation(
            long, JUDGES[:3], human="human", scale=SCALE, given_human=given_human, ci=FAST,
            columns=BY_Q,
        )  # fmt: skip
        r = np.corrcoef(reference.to_numpy().T)[np.triu_indices(3, 1)]
        pairs = table[table["statistic"] == "error_correlation"]["estimate"].to_numpy()
        assert pairs == pytest.approx(r, abs=1e-10)
        summary = table.set_index("statistic")["estimate"]
        assert summary["mean_error_correlation"] == pytest.approx(r.mean())
        assert summary["effective_judges"] == pytest.approx(3 / (1 + 2 * r.mean()))
        assert (table["ci_low"] <= table["estimate"]).all()
        assert (table["estimate"] <= table["ci_high"]).all()
    assert float(effective_judges(5, 0.0)) == 5.0 and float(effective_judges(5, 1.0)) == 1.0


def test_independent_errors_the_jury_beats_every_judge() -> None:
    long = synthetic_panel(k=5, accuracy=0.65, shared=0.0, seed=3)
    juries = jury_scores(long, JUDGES, methods=["majority", "mean"], scale=SCALE, columns=BY_Q)
    table = jury_vs_best(
        with_juries(long, juries), JUDGES, ["jury:majority"], human="human", scale=SCALE,
        ci=FAST, columns=BY_Q,
    )  # fmt: skip
    assert table["ci_low"].iloc[0] > 0, table.to_dict("records")
    errors = error_correlation(long, JUDGES, human="human", scale=SCALE, ci=CI(None), columns=BY_Q)
    n_eff = float(errors[errors["statistic"] == "effective_judges"]["estimate"].iloc[0])
    assert n_eff > 4.0


def test_shared_errors_the_jury_does_not_beat_the_best_judge() -> None:
    long = synthetic_panel(k=5, accuracy=0.65, shared=0.8, seed=3)
    juries = jury_scores(long, JUDGES, methods=["majority"], scale=SCALE, columns=BY_Q)
    table = jury_vs_best(
        with_juries(long, juries), JUDGES, ["jury:majority"], human="human", scale=SCALE,
        ci=FAST, columns=BY_Q,
    )  # fmt: skip
    # No gain: the estimate is not positive and the interval does not exclude zero from above.
    assert table["estimate"].iloc[0] <= 0 and table["ci_low"].iloc[0] < 0
    errors = error_correlation(long, JUDGES, human="human", scale=SCALE, ci=CI(None), columns=BY_Q)
    n_eff = float(errors[errors["statistic"] == "effective_judges"]["estimate"].iloc[0])
    assert n_eff < 1.6


def test_the_selection_aware_interval_never_flatters_the_jury() -> None:
    # Five judges of equal quality: which one is "best" is chance, and the bootstrap says so.
    long = synthetic_panel(k=5, accuracy=0.7, seed=4)
    juries = jury_scores(long, JUDGES, methods=["mean"], scale=SCALE, columns=BY_Q)
    row = jury_vs_best(
        with_juries(long, juries), JUDGES, ["jury:mean"], human="human", scale=SCALE,
        ci=CI("percentile", n_boot=400, seed=1), columns=BY_Q,
    ).iloc[0]  # fmt: skip
    # Each resample subtracts the resample's best judge, never less than the one chosen once.
    assert row["ci_low"] <= row["naive_ci_low"] and row["ci_high"] <= row["naive_ci_high"]
    shares = dict(part.split(": ") for part in row["best_judge_share"].split("; "))
    assert sum(float(v) > 0.05 for v in shares.values()) >= 3
    assert row["n_clusters"] == 60 and "re-chosen" in row["ci_method"]


def test_majority_is_strict_over_the_whole_panel_and_keeps_ties_and_failures() -> None:
    rows = [
        # item 1: 2 of 4 say 5 (a tie with 3): tie; item 2: 3 of 4: ok;
        # item 3: d failed, 2 of 4 say 5, 1 says 3: no strict majority of the panel.
        (1, "a", 5, "ok"), (1, "b", 5, "ok"), (1, "c", 3, "ok"), (1, "d", 3, "ok"),
        (2, "a", 0, "ok"), (2, "b", 0, "ok"), (2, "c", 0, "ok"), (2, "d", 5, "ok"),
        (3, "a", 5, "ok"), (3, "b", 5, "ok"), (3, "c", 3, "ok"), (3, "d", None, "error"),
        (4, "a", 3, "ok"), (4, "b", 3, "ok"), (4, "c", 3, "ok"), (4, "d", None, "unparseable"),
    ]  # fmt: skip
    long = pd.DataFrame(rows, columns=["item", "rater", "score", "status"])
    out = jury_scores(long, list("abcd"), scale=SCALE).set_index(["rater", "item"])
    majority = out.loc["jury:majority"]
    assert list(majority["status"]) == ["tie", "ok", "no_majority", "ok"]
    assert list(majority["score"].fillna(-9)) == [-9, 0, -9, 3]
    assert majority.loc[3, "unscored"] == "d: error" and majority.loc[4, "n_scored"] == 3
    mean = out.loc["jury:mean"]
    # Item 1's mean (5, 5, 3, 3) is 4, midway between 3 and 5: it rounds up, never a drop.
    assert list(mean["status"]) == ["ok", "ok", "judge_unscored", "judge_unscored"]
    assert mean.loc[1, "score"] == 5 and mean.loc[1, "value"] == 4
    assert mean.loc[2, "value"] == pytest.approx(np.mean([0, 0, 0, 5]))
    # The judges' order changes nothing.
    again = jury_scores(long, list("dcba"), scale=SCALE).set_index(["rater", "item"])
    pd.testing.assert_frame_equal(
        out.drop(columns="unscored"), again.drop(columns="unscored"), check_like=True
    )


def test_a_two_judge_mean_jury_keeps_every_half_point_item_on_a_ten_point_scale() -> None:
    # The study: two judges on a 1-10 scale, 40 items; many means end in .5.
    rng = np.random.default_rng(37)
    a, b = rng.integers(1, 11, 40), rng.integers(1, 11, 40)
    long = pd.DataFrame(
        {"item": np.tile(np.arange(40), 2), "rater": ["a"] * 40 + ["b"] * 40,
         "score": np.concatenate([a, b]).astype(float)}
    )  # fmt: skip
    out = jury_scores(long, ["a", "b"], methods=["mean", "median"], scale=range(1, 11))
    assert ((a + b) % 2 == 1).sum() >= 10  # the half-point means are really there
    assert (out["status"] == "ok").all() and out["score"].notna().all()
    mean = out[out["rater"] == "jury:mean"].set_index("item").sort_index()
    assert mean["value"].to_numpy() == pytest.approx((a + b) / 2)
    # The stated rule: the nearest level, exactly midway the higher one.
    assert (mean["score"].to_numpy() == np.floor((a + b) / 2 + 0.5)).all()


def test_mean_and_median_juries_match_numpy() -> None:
    long = synthetic_panel(k=3, accuracy=0.5, seed=5)
    out = jury_scores(long, JUDGES[:3], scale=SCALE)
    wide = long.pivot(index="item", columns="rater", values="score")[JUDGES[:3]]
    for method, reference in (("mean", wide.mean(axis=1)), ("median", wide.median(axis=1))):
        got = out[out["rater"] == f"jury:{method}"].set_index("item")
        assert got["value"].to_numpy() == pytest.approx(reference.loc[got.index].to_numpy())
        levels = np.asarray(SCALE)
        nearest = levels[np.abs(reference.to_numpy()[:, None] - levels).argmin(axis=1)]
        ok = got["status"] == "ok"
        assert (got.loc[ok, "score"].to_numpy() == nearest[ok.to_numpy()]).all()


def _crowd_panel(seed: int, n: int = 400) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Five judges with planted 3x3 confusion matrices; 5% of votes missing."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n, p=[0.3, 0.3, 0.4])
    confusions = []
    for j in range(5):
        diag = 0.55 + 0.08 * j
        matrix = np.full((3, 3), (1 - diag) / 2)
        np.fill_diagonal(matrix, diag)
        matrix[0] = [diag, 1 - diag, 0.0] if j == 0 else matrix[0]  # one asymmetric judge
        confusions.append(matrix)
    rows = []
    for j, matrix in enumerate(confusions):
        for i, t in enumerate(truth):
            if rng.random() < 0.05:
                continue
            rows.append((i, f"j{j}", float(rng.choice(3, p=matrix[t]))))
    return pd.DataFrame(rows, columns=["item", "rater", "score"]), truth, np.stack(confusions)


def test_dawid_skene_matches_crowd_kit() -> None:
    long, _, _ = _crowd_panel(seed=11, n=200)
    for iterations in (1, 10, 60):
        ours = dawid_skene(long, JUDGES, scale=(0, 1, 2), max_iter=iterations, tol=-np.inf)
        theirs = CrowdKitDawidSkene(n_iter=iterations, tol=-np.inf).fit(
            long.rename(columns={"item": "task", "rater": "worker", "score": "label"})
        )
        probas = theirs.probas_.reindex(index=ours.posteriors.index, columns=[0.0, 1.0, 2.0])
        assert np.abs(probas.to_numpy() - ours.posteriors.to_numpy()).max() < 1e-9
        errors = theirs.errors_.stack().rename("theirs")  # worker, label, true label
        mine = ours.confusion.set_index(["judge", "level", "true_level"])["probability"]
        joined = pd.concat([errors, mine.rename("ours")], axis=1, join="inner")
        assert len(joined) == 45 and np.allclose(joined["theirs"], joined["ours"], atol=1e-9)


def test_dawid_skene_recovers_planted_confusion_matrices() -> None:
    long, truth, planted = _crowd_panel(seed=12, n=3000)
    fit = dawid_skene(long, JUDGES, scale=(0, 1, 2))
    assert fit.converged
    estimated = (
        fit.confusion.pivot_table(
            index=["judge", "true_level"], columns="level", values="probability"
        )
        .to_numpy()
        .reshape(5, 3, 3)
    )
    assert np.abs(estimated - planted).max() < 0.05
    assert fit.priors.to_numpy() == pytest.approx([0.3, 0.3, 0.4], abs=0.03)
    labels = fit.scores.set_index("item")["score"].reindex(range(len(truth)))
    majority = jury_scores(long, JUDGES, methods=["majority"]).set_index("item")["score"]
    assert (labels.to_numpy() == truth).mean() > (
        majority.reindex(range(len(truth))) == truth
    ).mean()


def test_learned_weights_are_cross_fitted_by_cluster_as_sklearn() -> None:
    long = synthetic_panel(k=3, accuracy=0.6, seed=6)
    fit = cross_fitted_weights(
        long, JUDGES[:3], human="human", scale=SCALE, columns=BY_Q, n_folds=4, seed=3
    )
    scores = fit.scores.set_index("item").sort_index()
    wide = long.pivot(index="item", columns="rater", values="score").sort_index()
    question = long.drop_duplicates("item").set_index("item")["question"].sort_index()
    folds = question.map(cluster_folds(list(question), 4, 3))
    # Whole questions share a fold.
    assert (scores.groupby(question)["fold"].nunique() == 1).all()
    reference = cross_val_predict(
        LinearRegression(), wide[JUDGES[:3]], wide["human"], cv=PredefinedSplit(folds.to_numpy())
    )
    assert scores["value"].to_numpy() == pytest.approx(reference, abs=1e-9)
    # An item's own label never reaches its score: changing it moves only the other folds.
    target = scores.index[0]
    changed = long.copy()
    changed.loc[(changed["item"] == target) & (changed["rater"] == "human"), "score"] = 0.0
    changed.loc[(changed["item"] == target) & (changed["rater"] != "human"), "score"] = 5.0
    refit = cross_fitted_weights(
        changed, JUDGES[:3], human="human", scale=SCALE, columns=BY_Q, n_folds=4, seed=3
    ).scores.set_index("item")
    same_fold = scores["fold"] == scores.loc[target, "fold"]
    others = same_fold & (scores.index != target)
    assert refit.loc[others[others].index, "value"].to_numpy() == pytest.approx(
        scores.loc[others, "value"].to_numpy()
    )
    with pytest.raises(UsageError, match="clusters"):
        cross_fitted_weights(long[long["question"] < 2], JUDGES[:3], human="human", columns=BY_Q)


def test_panel_subsets_every_subset_cost_and_pareto_front() -> None:
    long = synthetic_panel(k=3, accuracy=0.6, seed=8)
    cost = {"j0": 1.0, "j1": 2.0, "j2": 0.5}
    table = panel_subsets(
        long, JUDGES[:3], human="human", cost=cost, jury="majority", scale=SCALE, ci=FAST,
        columns=BY_Q, min_coverage=0.0,
    )  # fmt: skip
    assert len(table) == 7 and list(table["size"]) == [1, 1, 1, 2, 2, 2, 3]
    assert table.set_index("subset").loc["j0 + j1 + j2", "cost"] == 3.5
    wide = long.pivot(index="item", columns="rater", values="score")
    single = table.set_index("subset").loc["j1", "estimate"]
    assert single == pytest.approx(
        cohen_kappa_score(wide["human"], wide["j1"], weights="quadratic")
    )
    for i, row in table.iterrows():
        dominated = any(
            o["cost"] <= row["cost"] and o["estimate"] >= row["estimate"]
            and (o["cost"] < row["cost"] or o["estimate"] > row["estimate"])
            for j, o in table.iterrows() if j != i
        )  # fmt: skip
        assert row["pareto"] == (not dominated)
    strict = panel_subsets(long, JUDGES[:3], human="human", jury="majority", scale=SCALE,
                           ci=CI(None), columns=BY_Q, min_coverage=1.0)  # fmt: skip
    pairs = strict[strict["size"] == 2]
    assert not pairs["pareto"].any() and pairs["note"].str.contains("coverage below").all()
    assert list(pareto_front(pd.Series([1, 1]), pd.Series([np.nan, 0.2]))) == [False, True]


def _authored_panel(seed: int, bias: float) -> pd.DataFrame:
    """Three judges of three families score 40 questions x 3 authors; A favours its own."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(40):
        for author in ("A", "B", "C"):
            truth = float(rng.integers(0, 6))
            item = f"{q}-{author}"
            rows.append((item, q, author, "human", truth))
            for judge in ("A", "B", "C"):
                lift = bias if judge == author == "A" else 0.0
                score = float(np.clip(np.round(truth + lift + rng.normal(0, 0.6)), 0, 5))
                rows.append((item, q, author, judge, score))
    return pd.DataFrame(rows, columns=["item", "question", "model", "rater", "score"])


def test_panel_self_preference_finds_the_planted_bias_with_holm_across_judges() -> None:
    from statsmodels.stats.multitest import multipletests

    long = _authored_panel(seed=9, bias=1.0)
    table = panel_self_preference(long, ["A", "B", "C"], human="human", n_perm=200)
    did = table[table["method"] == "own_minus_other_judges_did"].set_index("judge")
    assert did.loc["A", "p_adjusted"] < 0.01 and did.loc["A", "estimate"] > 0.5
    assert (did.loc[["B", "C"], "p_adjusted"] > 0.05).all()
    assert did["p_adjusted"].to_numpy() == pytest.approx(
        multipletests(did["p_value"].to_numpy(), method="holm")[1]
    )
    assert did["p_adjust"].iloc[0] == "Holm over 3 tests" and (did["n_clusters"] == 40).all()
    # own_minus_other_judges is the mean gap on the judge's own answers; SE clustered by question.
    gap = table[table["method"] == "own_minus_other_judges"].set_index("judge").loc["A"]
    wide = long.pivot(index="item", columns="rater", values="score")
    own = wide.index.str.endswith("-A")
    assert gap["estimate"] == pytest.approx((wide["A"] - wide[["B", "C"]].mean(axis=1))[own].mean())
    single = table[table["method"] == "judge_minus_human_ols_clustered"]
    assert set(single["judge"]) == {"A", "B", "C"}
    with pytest.raises(UsageError, match="human"):
        panel_self_preference(long, ["A", "B"], human="nobody", n_perm=10)


def test_jury_vs_best_says_why_when_nothing_is_defined() -> None:
    # Both judges constant: no kappa is defined, and the row says so instead of failing.
    long = pd.DataFrame(
        {"item": np.repeat(range(12), 3), "rater": ["h", "a", "b"] * 12,
         "score": [v for i in range(12) for v in (i % 3, 1, 1)],
         "question": np.repeat(range(12), 3)}
    )  # fmt: skip
    long = with_juries(long, jury_scores(long, ["a", "b"], methods=["mean"], columns=BY_Q))
    row = jury_vs_best(long, ["a", "b"], ["jury:mean"], human="h", ci=FAST, columns=BY_Q).iloc[0]
    assert np.isnan(row["estimate"]) and row["note"].startswith("undefined: no judge's kappa")
