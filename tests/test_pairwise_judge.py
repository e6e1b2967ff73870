"""`judgekit judge` on a pairwise items file against the simulator: both orders, the contract's
rows, the store (rerun, more orders, offline replay), dry run, variants, runs and panels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pairwise_study import make_pairwise_study, write_pairs
from scipy.special import expit

from judgekit.cli.main import main
from judgekit.data.pairwise import COMPARISON_COLUMNS, PairOutcome, pair_outcomes
from judgekit.data.tidy import final_verdicts
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.simulator.pairwise import answer_quality
from judgekit.stats import first_position_win_rate, longer_answer_win_rate


def comparisons(study: Path) -> pd.DataFrame:
    table = pd.read_parquet(study / "judgments.parquet").rename(columns={"item_id": "pair_id"})
    return table[[c for c in COMPARISON_COLUMNS if c in table.columns]]


def judge(items: Path, study: Path, url: str, *flags: str) -> int:
    return main(
        [
            "judge", str(items), "--rubric", "mtbench_pairwise", "--study", str(study),
            "--provider", "simulator", "--model", "sim-judge", "--base-url", url, *flags,
        ]
    )  # fmt: skip


def test_a_position_biased_judge_shows_its_bias_and_its_inconsistent_pairs(
    tmp_path: Path,
) -> None:
    position = 1.5
    study = make_pairwise_study(tmp_path, n_pairs=60, position=position)
    table = pd.read_parquet(study / "judgments.parquet")
    assert len(table) == 120 and set(table["order"]) == {"ab", "ba"}
    assert (table["status"] == "ok").all() and set(table["verdict"]) <= {"a", "b", "tie"}
    assert len(final_verdicts(table)) == 120  # the order is part of a verdict's key
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert table.groupby("item_id")["model_a"].first().to_dict() == dict(
        zip(pairs["ID"], pairs["Model_A"], strict=True)
    )
    # the simulator's model: first shown wins with expit(q_first - q_second + position)
    answers = zip(pairs["Answer_A"], pairs["Answer_B"], strict=True)
    gap = np.array([answer_quality(0, a) - answer_quality(0, b) for a, b in answers])
    expected = float(np.mean((expit(gap + position) + expit(position - gap)) / 2))
    row = first_position_win_rate(comparisons(study), cluster="pair_id").iloc[0]
    assert row["ci_low"] <= expected <= row["ci_high"] and row["ci_low"] > 0.5
    outcomes = pair_outcomes(comparisons(study))
    assert (outcomes["outcome"] == PairOutcome.INCONSISTENT).sum() >= 10
    manifest = json.loads((study / "study.json").read_text())
    assert manifest["commands"][-1]["pairwise"] == {"orders": "both", "seed": 0, "requests": 120}
    labels = pd.read_parquet(study / "human_labels.parquet")
    assert set(labels["verdict"]) <= {"a", "b", "tie"} and labels["score"].isna().all()
    assert not list(study.glob("scores/*.csv"))  # no ID,score files for verdicts


def test_each_order_is_its_own_stored_request_and_replays(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 6)
    study = tmp_path / "study"
    with run_simulator(SimulatorConfig(position_bias=1.0)) as sim:
        assert judge(items, study, sim.base_url, "--orders", "ab") == 0
        assert sim.stats()["requests"] == 6
        first = comparisons(study)
        assert set(first["order"]) == {"ab"}
        assert judge(items, study, sim.base_url) == 0  # both orders: only the swapped are paid
        assert sim.stats()["requests"] == 12
        both = comparisons(study)
        assert judge(items, study, sim.base_url) == 0  # again: every reply comes from the store
        assert sim.stats()["requests"] == 12
    ab = both[both["order"] == "ab"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ab, first.reset_index(drop=True))
    assert judge(items, study, "http://127.0.0.1:9/v1", "--offline") == 0
    pd.testing.assert_frame_equal(comparisons(study), both)


def test_random_orders_are_seeded_and_recorded(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 20, labels=False)
    shown = []
    with run_simulator(SimulatorConfig()) as sim:
        for name, seed in (("s1", "4"), ("s2", "4"), ("s3", "5")):
            assert judge(items, tmp_path / name, sim.base_url, "--orders", "random",
                         "--seed", seed) == 0  # fmt: skip
            table = comparisons(tmp_path / name)
            assert len(table) == 20 and table["pair_id"].is_unique
            shown.append(table.set_index("pair_id")["order"].to_dict())
    assert shown[0] == shown[1] and shown[0] != shown[2]
    assert {"ab", "ba"} == set(shown[0].values())
    record = json.loads((tmp_path / "s1" / "study.json").read_text())["commands"][-1]
    assert record["pairwise"] == {"orders": "random", "seed": 4, "requests": 20}
    assert set(pair_outcomes(comparisons(tmp_path / "s1"))["outcome"]) == {"one_order"}
    assert pd.read_parquet(tmp_path / "s1" / "human_labels.parquet").empty


def test_dry_run_shows_the_first_request_of_each_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 3)
    pairs = pd.read_csv(items)
    assert judge(items, tmp_path / "s", "http://127.0.0.1:9/v1", "--dry-run") == 0
    out = capsys.readouterr().out
    first, _, second = out.partition("the first request shown in the other order (p1/ba)")
    a, b = pairs.loc[0, "Answer_A"].strip(), pairs.loc[0, "Answer_B"].strip()
    assert second, out
    assert first.index(a) < first.index(b) and second.index(b) < second.index(a)
    assert not (tmp_path / "s" / "judgments.parquet").exists()


def test_variants_runs_and_a_panel_each_judge_both_orders(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 4)
    with run_simulator(SimulatorConfig(position_bias=0.5)) as sim:
        judges = [f"--judge=j{k}=simulator:sim-judge@{sim.base_url}" for k in (1, 2)]
        code = main(
            [
                "judge", str(items), "--rubric", "mtbench_pairwise", "--study",
                str(tmp_path / "s"), *judges, "--variant", "base", "--variant", "paraphrase_1",
                "--runs", "2",
            ]
        )  # fmt: skip
    assert code == 0
    table = comparisons(tmp_path / "s")
    assert len(table) == 4 * 2 * 2 * 2 * 2
    counts = table.groupby(["judge", "variant", "run", "order"]).size()
    assert len(counts) == 16 and (counts == 4).all()
    assert len(pair_outcomes(table)) == 4 * 2 * 2 * 2


def test_unparsed_orders_keep_their_status_and_reason(tmp_path: Path) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 4)
    with run_simulator(SimulatorConfig(malformed={"truncated": 1.0})) as sim:
        assert judge(items, tmp_path / "s", sim.base_url, "--max-unscored", "99") == 0
    table = comparisons(tmp_path / "s")
    assert len(table) == 8 and (table["status"] != "ok").all()
    assert (table["verdict"] == "").all() and (table["reason"].str.len() > 0).all()
    assert set(pair_outcomes(table)["outcome"]) == {PairOutcome.BOTH_UNPARSED}


@pytest.mark.parametrize("knob", ["length", "self"])
def test_length_bias_and_self_preference_show_over_http(tmp_path: Path, knob: str) -> None:
    items = write_pairs(tmp_path / "pairs.csv", 40)
    pairs = pd.read_csv(items)
    for side in "AB":  # the judge's own answers (alpha's) carry the marker
        mine = pairs[f"Model_{side}"] == "alpha"
        pairs.loc[mine, f"Answer_{side}"] = pairs.loc[mine, f"Answer_{side}"] + " -- by the judge"
    pairs.to_csv(items, index=False)
    sim = SimulatorConfig(length_bias=4.0) if knob == "length" else SimulatorConfig(
        self_preference=4.0, self_marker="-- by the judge"
    )  # fmt: skip
    with run_simulator(sim) as server:
        assert judge(items, tmp_path / "s", server.base_url) == 0
    games = comparisons(tmp_path / "s").merge(
        pairs.rename(columns={"ID": "pair_id"}), on="pair_id"
    ).rename(columns={"verdict": "winner"})  # fmt: skip
    if knob == "length":
        games = games.assign(length_a=games["Answer_A"].str.len(),
                             length_b=games["Answer_B"].str.len())  # fmt: skip
        row = longer_answer_win_rate(games, cluster="pair_id").iloc[0]
        assert row["ci_low"] > 0.6
    else:
        own = games[(games["Model_A"] == "alpha") | (games["Model_B"] == "alpha")]
        side = np.where(own["Model_A"] == "alpha", "a", "b")
        assert len(own) >= 20 and (own["winner"] == side).mean() > 0.85
