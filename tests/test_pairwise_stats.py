"""Pairwise statistics against independent implementations (sklearn) and hand counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

from judgekit.stats import CI
from judgekit.stats.pairwise import (
    first_position_win_rate,
    human_agreement_s1_s2,
    outcome_shares,
    position_consistency,
    rater_kappas,
    verdict_accuracy,
    verdict_kappa,
)


def _random_study(seed: int, pairs: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(["a", "b", "tie"], size=pairs, p=[0.45, 0.4, 0.15])
    rows, labels = [], []
    for k, gold in enumerate(truth):
        for order in ("ab", "ba"):
            verdict = gold if rng.random() < 0.7 else rng.choice(["a", "b", "tie", ""])
            status = "ok" if verdict else "unparseable"
            rows.append((f"p{k}", order, verdict, status, f"q{k // 3}"))
        for rater in ("h1", "h2", "h3"):
            labels.append((f"p{k}", rater, gold if rng.random() < 0.8 else rng.choice(["a", "b"])))
    frame = pd.DataFrame(rows, columns=["pair_id", "order", "verdict", "status", "cluster"])
    frame = frame.assign(judge="j", variant="base", run=1, reason="", model_a="x", model_b="y")
    return frame, pd.DataFrame(labels, columns=["pair_id", "rater", "label"])


def _gold(labels: pd.DataFrame) -> pd.Series:
    counts = labels.groupby(["pair_id", "label"]).size().unstack(fill_value=0)
    unique = counts.eq(counts.max(axis=1), axis=0).sum(axis=1) == 1
    return counts.idxmax(axis=1)[unique]


@pytest.mark.parametrize("unparsed", ["wrong", "tie"])
def test_accuracy_and_macro_scores_match_sklearn(unparsed: str) -> None:
    comparisons, labels = _random_study(1)
    table = verdict_accuracy(comparisons, labels, unparsed=unparsed, ci=CI(None))
    got = table.set_index("measure")["estimate"]
    joined = comparisons.join(_gold(labels).rename("gold"), on="pair_id").dropna(subset=["gold"])
    pred = joined["verdict"].replace("", "tie" if unparsed == "tie" else "none")
    classes = sorted(set(joined["gold"]) | (set(pred) - {"none"}))
    precision, recall, f1, _ = precision_recall_fscore_support(
        joined["gold"], pred, labels=classes, average="macro", zero_division=0
    )
    assert got["accuracy"] == pytest.approx(float(np.mean(pred == joined["gold"])), abs=1e-12)
    assert got["macro_precision"] == pytest.approx(precision, abs=1e-12)
    assert got["macro_recall"] == pytest.approx(recall, abs=1e-12)
    assert got["macro_f1"] == pytest.approx(f1, abs=1e-12)


def test_macro_interval_is_seeded_and_clustered() -> None:
    comparisons, labels = _random_study(2)
    ci = CI("percentile", n_boot=300, seed=5)
    first = verdict_accuracy(comparisons, labels, ci=ci, cluster="cluster")
    again = verdict_accuracy(comparisons, labels, ci=ci, cluster="cluster")
    pd.testing.assert_frame_equal(first, again)
    row = first.set_index("measure").loc["macro_f1"]
    assert row["ci_low"] < row["estimate"] < row["ci_high"] and row["level"] == 0.95


def test_kappas_match_sklearn() -> None:
    comparisons, labels = _random_study(3)
    gold = _gold(labels)
    table = verdict_kappa(comparisons, labels, ci=CI(None)).set_index("order")
    for order in ("ab", "ba"):
        rows = comparisons[(comparisons["order"] == order) & (comparisons["status"] == "ok")]
        rows = rows.join(gold.rename("gold"), on="pair_id").dropna(subset=["gold"])
        expected = cohen_kappa_score(rows["verdict"], rows["gold"])
        assert table.loc[order, "estimate"] == pytest.approx(expected, abs=1e-12)
    wide = labels.pivot(index="pair_id", columns="rater", values="label")
    raters = rater_kappas(labels, ci=CI(None))
    assert raters["estimate"].iloc[0] == pytest.approx(
        cohen_kappa_score(wide["h1"], wide["h2"]), abs=1e-12
    )


def test_position_and_outcomes_by_hand() -> None:
    comparisons, _ = _random_study(4)
    wide = comparisons.pivot(index="pair_id", columns="order", values="verdict")
    both = wide[(wide["ab"] != "") & (wide["ba"] != "")]
    row = position_consistency(comparisons, cluster="cluster").iloc[0]
    assert row["estimate"] == pytest.approx(float(np.mean(both["ab"] == both["ba"])))
    assert row["n"] == len(both) and row["n_dropped"] == len(wide) - len(both)
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    shares = outcome_shares(comparisons, ci=CI(None))
    assert shares["estimate"].sum() == pytest.approx(1.0)
    decisive = comparisons[comparisons["verdict"].isin(["a", "b"])]
    first = np.where(decisive["order"] == "ab", "a", "b") == decisive["verdict"]
    rate = first_position_win_rate(comparisons, ci=CI(None)).iloc[0]
    assert rate["estimate"] == pytest.approx(float(first.mean()))


def test_a_cluster_column_of_any_name_is_carried_to_the_pairs() -> None:
    comparisons, labels = _random_study(6)
    renamed = comparisons.rename(columns={"cluster": "question"})
    ci = CI("percentile", n_boot=200, seed=1)
    by_name = position_consistency(renamed, cluster="question", ci=ci)
    pd.testing.assert_frame_equal(
        by_name, position_consistency(comparisons, cluster="cluster", ci=ci)
    )
    wide = renamed.pivot(index="pair_id", columns="order", values="verdict")
    judged = wide.index[(wide["ab"] != "") & (wide["ba"] != "")]
    clusters = renamed.drop_duplicates("pair_id").set_index("pair_id").loc[judged, "question"]
    assert by_name["n_clusters"].iloc[0] == clusters.nunique()
    assert len(human_agreement_s1_s2(renamed, labels, cluster="question", ci=ci)) == 2


def test_s2_leaves_out_every_tie() -> None:
    comparisons, labels = _random_study(5)
    table = human_agreement_s1_s2(comparisons, labels, ci=CI(None)).set_index("setup")
    assert table.loc["S2", "n"] < table.loc["S1", "n"]
    assert 0 <= table.loc["S1", "estimate"] <= 1
