"""Position effects, the leniency-drift verdict and shuffled orders, on the HTTP simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.engine import OpenAIJudge, judge
from judgekit.engine.ordering import order_items, run_permutation
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.simulator.scoring import snap
from judgekit.stats import CI, Columns
from judgekit.stats.position import (
    leniency_drift_verdict,
    position_effects,
    position_profile,
)
from judgekit.types import Item, UsageError

REASONING = load_rubric("riddle_reasoning")
N_ITEMS = 60


def reasoning_items(n: int = N_ITEMS) -> list[Item]:
    return [
        Item(
            f"R{i:03d}",
            {
                "Reasoning": f"Reasoning text {i}.",
                "Answer": f"Answer {i}",
                "Question": f"Riddle {i}?",
                "Ref_Reasoning": f"Reference reasoning {i}.",
            },
        )
        for i in range(1, n + 1)
    ]


#: What a careful human gave each item (also the simulated judge's unbiased score).
HUMAN = {
    f"R{i:03d}": float(v)
    for i, v in enumerate(np.random.default_rng(4).integers(0, 5, N_ITEMS), start=1)
}


def judged(config: SimulatorConfig, **kwargs: Any) -> pd.DataFrame:
    options = {"batch_size": 20, "runs": 3, "shuffle_seed": 11, "structured": False}
    options.update(kwargs)
    with run_simulator(config) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        return judge(reasoning_items(), REASONING, client, progress=False, **options)


def snapped_drift_slope(drift: float, batch: int) -> float:
    """Least-squares slope of the shift the simulator applies (drift x position, snapped)."""
    positions = np.arange(batch)
    shifts = [snap(2 + drift * p, REASONING.scale.allowed) - 2 for p in positions]
    return float(np.polyfit(positions, shifts, 1)[0])


#: 0.05 per position snapped to whole points is a step at position 11: slope ~0.074, not 0.05.
SNAPPED_DRIFT_SLOPE = snapped_drift_slope(0.05, 20)


@pytest.fixture(scope="module")
def drifting() -> pd.DataFrame:
    """Each row scored 0.05 points higher per position in its batch (snapped to the scale)."""
    return judged(SimulatorConfig(oracle=HUMAN, position_drift=0.05, noise_rate=0.2, seed=1))


@pytest.fixture(scope="module")
def steady() -> pd.DataFrame:
    """The same noise, no drift."""
    return judged(SimulatorConfig(oracle=HUMAN, noise_rate=0.2, seed=1))


@pytest.mark.parametrize("adjust", ["item", "human", "difference"])
def test_a_planted_drift_is_detected_and_fails_the_instruction(drifting, adjust) -> None:
    effects = position_effects(drifting, HUMAN, adjust=adjust)
    slope = effects.set_index("term").loc["position"]
    assert slope["ci_low"] <= SNAPPED_DRIFT_SLOPE <= slope["ci_high"]
    assert slope["ci_low"] > 0.04
    assert slope["n_items"] == N_ITEMS and slope["span"] == 19
    verdict = leniency_drift_verdict(effects, tolerance=0.5).set_index("term")
    assert verdict.loc["position", "verdict"] == "fail"
    assert verdict.loc["position", "statement"].startswith("FAIL: scores move by +")


@pytest.mark.parametrize("adjust", ["item", "human", "difference"])
def test_no_drift_is_reported_when_there_is_none(steady, adjust) -> None:
    effects = position_effects(steady, HUMAN, adjust=adjust)
    verdict = leniency_drift_verdict(effects, tolerance=0.5).set_index("term")
    assert verdict.loc["position", "drift_ci_low"] < 0 < verdict.loc["position", "drift_ci_high"]
    assert verdict.loc["position", "verdict"] == "pass"
    assert verdict.loc["batch_index", "verdict"] == "pass"


def test_clustered_standard_errors_match_a_hand_computed_sandwich(drifting) -> None:
    effects = position_effects(drifting, HUMAN, adjust="difference").set_index("term")
    rows = drifting[(drifting["status"] == "ok") & (drifting["attempt"] == 1)]
    x = np.column_stack([np.ones(len(rows)), rows["position"], rows["batch_index"]]).astype(float)
    y = (rows["score"] - rows["item_id"].map(HUMAN)).to_numpy(float)
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    bread = np.linalg.inv(x.T @ x)
    residual = y - x @ beta
    meat = np.zeros((3, 3))
    for item in rows["item_id"].unique():
        mask = (rows["item_id"] == item).to_numpy()
        score = x[mask].T @ residual[mask]
        meat += np.outer(score, score)
    n, k, g = len(y), 3, rows["item_id"].nunique()
    se = np.sqrt(np.diag(bread @ meat @ bread) * g / (g - 1) * (n - 1) / (n - k))
    assert effects.loc["position", "estimate"] == pytest.approx(beta[1], abs=1e-12)
    assert effects.loc["position", "se"] == pytest.approx(se[1], rel=1e-9)
    assert effects.loc["batch_index", "se"] == pytest.approx(se[2], rel=1e-9)


def test_item_effects_need_items_seen_at_several_positions() -> None:
    table = judged(SimulatorConfig(oracle=HUMAN), runs=1, shuffle_seed=None)
    effects = position_effects(table, adjust="item")
    assert effects["estimate"].isna().all()
    assert effects.set_index("term").loc["position", "note"].startswith("no item seen at two")
    assert set(leniency_drift_verdict(effects)["verdict"]) == {"not tested"}
    with pytest.raises(ValueError, match="needs the human scores"):
        position_effects(table, adjust="human")


def test_unscored_rows_are_set_aside_and_counted() -> None:
    config = SimulatorConfig(oracle=HUMAN, malformed={"missing_rows": 0.5}, seed=2)
    table = judged(config, runs=1, max_reasks=0)
    effects = position_effects(table, HUMAN, adjust="difference")
    missing = int((table["status"] == "missing").sum())
    assert missing > 0
    assert effects["n"].iloc[0] == len(table) - missing
    assert effects["dropped_reason"].iloc[0] == f"status missing: {missing}"


def test_modes_are_compared_side_by_side() -> None:
    config = SimulatorConfig(oracle=HUMAN, position_drift=0.05, noise_rate=0.2, seed=1)
    both = pd.concat(
        [
            judged(config, runs=2).assign(mode="independent"),
            judged(config, runs=2, mode="conversation").assign(mode="conversation"),
        ]
    )
    effects = position_effects(both, HUMAN, group_col="mode", terms=("position",))
    assert effects["group"].tolist() == ["independent", "conversation"]
    assert (effects["ci_low"] > 0).all()
    profile = position_profile(both, HUMAN, group_col="mode")
    assert len(profile) == 2 * 20 and set(profile["n"]) == {2 * 3}
    assert profile["outcome"].iloc[0] == "judge - human"


def test_drift_verdict_rule_at_its_boundaries() -> None:
    effects = pd.DataFrame(
        {
            "group": "all",
            "term": ["position", "position", "position", "batch_index"],
            "estimate": [0.001, 0.05, 0.01, 0.01],
            "ci_low": [-0.002, 0.03, -0.03, 0.005],
            "ci_high": [0.004, 0.07, 0.05, 0.02],
            "span": [59.0, 59.0, 59.0, 4.0],
            "note": "",
        }
    )
    verdict = leniency_drift_verdict(effects, tolerance=0.5)
    assert verdict["verdict"].tolist() == ["pass", "fail", "inconclusive", "pass"]
    assert verdict["drift"].tolist() == pytest.approx([0.059, 2.95, 0.59, 0.04])
    assert verdict["instruction"].iloc[3].startswith("Do not adjust leniency based on batch number")
    with pytest.raises(ValueError, match="tolerance"):
        leniency_drift_verdict(effects, tolerance=0)


def test_shuffled_runs_put_items_at_different_places_with_a_recorded_seed(steady) -> None:
    assert set(steady["shuffle_seed"]) == {11}
    for run, rows in steady[steady["attempt"] == 1].groupby("run"):
        expected = order_items([item.id for item in reasoning_items()], int(run), 11)
        sent = rows.sort_values(["batch_index", "position"])["item_id"].tolist()
        assert sent == [item_id for item_id in expected if item_id in set(sent)]
    first = steady[steady["position"].notna() & (steady["attempt"] == 1)]
    spread = first.groupby(["variant", "item_id"]).agg(
        runs=("run", "nunique"), distinct_positions=("position", "nunique")
    )
    assert (spread["runs"] == 3).mean() > 0.9
    assert (spread["distinct_positions"] >= 2).mean() > 0.9
    assert run_permutation(5, 1, 11) != run_permutation(5, 2, 11)
    assert run_permutation(5, 1, 11) == run_permutation(5, 1, 11)


def test_weighted_kappa_helper_agrees_with_sklearn(steady) -> None:
    from judgekit.stats.run_summary import batch_run_summary

    summary = batch_run_summary(steady, HUMAN, REASONING.scale.allowed)
    first = steady[(steady["run"] == 1) & (steady["status"] == "ok")]
    expected = cohen_kappa_score(
        first["score"].astype(int),
        first["item_id"].map(HUMAN).astype(int),
        weights="quadratic",
        labels=list(REASONING.scale.allowed),
    )
    assert summary["kappa"] == pytest.approx(expected, abs=1e-12)
    assert summary["kappa_ci_low"] < summary["kappa"] < summary["kappa_ci_high"]


def test_batch_summary_kappa_resamples_whole_questions(steady) -> None:
    from judgekit.stats import cohen_kappa
    from judgekit.stats.run_summary import batch_run_summary

    # 60 answers to 12 riddles (5 each); R060 is a riddle of its own.
    riddle = {f"R{i:03d}": f"riddle {(i - 1) // 5}" for i in range(1, N_ITEMS)}
    with_riddle = steady.assign(riddle=steady["item_id"].map(riddle).fillna("alone"))
    by_riddle = Columns(item="item_id", cluster="riddle")
    with pytest.raises(UsageError, match=r"clustered kappa interval needs CI\('percentile'\)"):
        batch_run_summary(with_riddle, HUMAN, REASONING.scale.allowed, columns=by_riddle)
    unclustered = steady.assign(riddle=steady["item_id"].map(riddle))  # R060 has none
    with pytest.raises(UsageError, match="item 'R060' has no value in cluster column 'riddle'"):
        batch_run_summary(
            unclustered, HUMAN, REASONING.scale.allowed, columns=by_riddle,
            ci=CI("bca", n_boot=50, seed=3),
        )  # fmt: skip
    summary = batch_run_summary(
        with_riddle, HUMAN, REASONING.scale.allowed, columns=by_riddle,
        ci=CI("bca", n_boot=400, seed=3),
    )  # fmt: skip
    assert summary["kappa_ci_method"] == "bca, cluster bootstrap"
    assert summary["kappa_n_clusters"] == 13
    first = steady[(steady["run"] == 1) & (steady["status"] == "ok")]
    long = pd.concat(
        [
            pd.DataFrame({"item": first["item_id"], "rater": who, "score": scores})
            for who, scores in (("judge", first["score"]), ("human", first["item_id"].map(HUMAN)))
        ]
    ).assign(riddle=lambda d: d["item"].map(riddle).fillna("alone"))
    columns = Columns(cluster="riddle")
    same = cohen_kappa(
        long, "judge", "human", scale=REASONING.scale.allowed, weights="quadratic",
        ci=CI("bca", n_boot=400, seed=3), columns=columns,
    ).iloc[0]  # fmt: skip
    assert summary["kappa"] == pytest.approx(same["estimate"], abs=1e-12)
    assert summary["kappa_design_effect"] == pytest.approx(same["design_effect"], rel=0.25)
    assert summary["kappa_ci_low"] < summary["kappa"] < summary["kappa_ci_high"]
    three = steady.assign(riddle=steady["item_id"].map(lambda item: f"group {int(item[1:]) % 3}"))
    few = batch_run_summary(
        three, HUMAN, REASONING.scale.allowed, columns=by_riddle, ci=CI("bca", n_boot=50, seed=0)
    )
    assert (
        np.isnan(few["kappa_ci_low"]) and few["kappa_note"] == "interval degenerate: clusters < 10"
    )
    one = batch_run_summary(
        steady.assign(riddle="all"),
        HUMAN,
        REASONING.scale.allowed,
        columns=by_riddle,
        ci=CI("bca", n_boot=50, seed=0),
    )
    assert np.isnan(one["kappa_ci_low"]) and one["kappa_note"] == "interval undefined: clusters < 2"


def test_item_effects_slope_equals_the_dummy_variable_regression(drifting) -> None:
    import statsmodels.formula.api as smf

    effects = position_effects(drifting, adjust="item").set_index("term")
    rows = drifting[(drifting["status"] == "ok") & (drifting["attempt"] == 1)].astype(
        {"position": float, "batch_index": float}
    )
    dummies = smf.ols("score ~ position + batch_index + C(item_id)", data=rows).fit()
    assert effects.loc["position", "estimate"] == pytest.approx(
        dummies.params["position"], abs=1e-10
    )
    assert effects.loc["batch_index", "estimate"] == pytest.approx(
        dummies.params["batch_index"], abs=1e-10
    )
