"""Report step 07 as a function: position effects and batch sizes against direct computations.

Studies judged by the simulator (in-process) in batches of four: one shuffled over two runs, the
judge drifting with the row's place in its batch; one unshuffled (each item at one position
only, so no drift can be read). The re-judging per batch size runs against the simulator too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from judgekit.cli.main import main
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.batch_effects import batch_effects_analysis
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

N_ITEMS = 16
HUMAN = {f"r{k}": (0, 3, 5)[(k * 5) % 3] for k in range(N_ITEMS)}
JUDGE = "simulator:sim-judge"
ORACLE = {k: float(v) for k, v in HUMAN.items()}


def _items(path: Path) -> Path:
    rows = [
        {"ID": item, "Question": f"Riddle {k % 6}?", "Answer": f"Answer {k}",
         "Ref_Answer": f"Answer {k}", "Human": HUMAN[item]}
        for k, item in enumerate(HUMAN)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _judged(folder: Path, *flags: str) -> Study:
    items = _items(folder / "items.csv")
    with run_simulator(SimulatorConfig(oracle=ORACLE, position_drift=0.8)) as sim:
        judge = ["--provider", "simulator", "--model", "sim-judge", "--base-url", sim.base_url]
        command = [str(items), "--rubric", "riddle_accuracy", "--labels-column", "Human"]
        command += ["--batch-size", "4", "--study", str(folder / "study"), *flags]
        assert main(["judge", *command, *judge]) == 0
    return load_study(folder / "study")


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return _judged(tmp_path_factory.mktemp("shuffled"), "--runs", "2", "--shuffle-seed", "7")


@pytest.fixture(scope="module")
def in_order(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return _judged(tmp_path_factory.mktemp("in_order"))


@pytest.fixture(scope="module")
def unlabelled(tmp_path_factory: pytest.TempPathFactory) -> Study:
    folder = tmp_path_factory.mktemp("unlabelled")
    items = _items(folder / "items.csv")
    with run_simulator(SimulatorConfig(oracle=ORACLE, position_drift=0.8)) as sim:
        command = [
            str(items),
            "--rubric",
            "riddle_accuracy",
            "--no-labels",
            "--batch-size",
            "4",
            "--runs",
            "2",
            "--shuffle-seed",
            "7",
            "--study",
            str(folder / "study"),
            "--provider",
            "simulator",
            "--model",
            "sim-judge",
            "--base-url",
            sim.base_url,
        ]
        assert main(["judge", *command]) == 0  # fmt: skip
    return load_study(folder / "study")


def _first_asks(study: Study, run: int) -> pd.DataFrame:
    """The run's rows scored at the first ask, with their human score."""
    rows = study.judgments
    rows = rows[(rows["run"] == run) & (rows["status"] == "ok") & (rows["attempt"] == 1)]
    return rows.assign(human=rows["item_id"].map(HUMAN).astype(float),
                       score=rows["score"].astype(float))  # fmt: skip


def test_the_step_is_registered_and_names_its_parts(shuffled: Study) -> None:
    assert ANALYSES["07_batch_effects"] is batch_effects_analysis
    result = batch_effects_analysis(shuffled, run=0)
    assert list(result.tables) == ["position_effects", "leniency_drift_verdicts",
                                   "position_profile"]  # fmt: skip
    assert list(result.figures) == [
        "position_effect_riddle_accuracy_base_run1", "position_effect_riddle_accuracy_base_run2"
    ]  # fmt: skip
    for run in (1, 2):
        assert f"riddle_accuracy · base · run {run}: 16 rows, 16 human labels" in result.lines
    assert "standard errors clustered on 'question'" in result.lines
    assert result.lines[-1] == "no batch-size figure: kappa could be computed at 0 batch size(s)"


def test_the_slopes_are_the_ols_of_score_on_position_at_equal_human_score(
    shuffled: Study,
) -> None:
    effects = batch_effects_analysis(shuffled, run=0).tables["position_effects"]
    for run in (1, 2):
        rows = _first_asks(shuffled, run)
        design = np.column_stack([np.ones(len(rows)), rows["human"], rows["position"],
                                  rows["batch_index"]])  # fmt: skip
        coefficients = np.linalg.lstsq(design, rows["score"].to_numpy(), rcond=None)[0]
        mine = effects[effects["run"] == run].set_index("term")
        assert mine.loc["position", "estimate"] == pytest.approx(coefficients[2], abs=1e-9)
        assert mine.loc["batch_index", "estimate"] == pytest.approx(coefficients[3], abs=1e-9)
        assert mine.loc["position", "n"] == len(rows)
    assert effects.loc[effects["term"] == "position", "estimate"].gt(0.1).all()  # the drift
    for _, family in effects.groupby("term"):  # one family per term, corrected by Holm
        holm = multipletests(family["p_value"], method="holm")[1]
        assert family["p_adjusted"].to_numpy() == pytest.approx(holm)


def test_each_verdict_compares_the_drift_over_the_batch_with_the_tolerance(
    shuffled: Study,
) -> None:
    result = batch_effects_analysis(shuffled, run=0, tolerance=0.5)
    effects, verdicts = result.tables["position_effects"], result.tables["leniency_drift_verdicts"]
    assert len(verdicts) == len(effects)
    drift = effects["estimate"] * effects["span"]
    assert verdicts["drift"].to_numpy() == pytest.approx(drift.to_numpy())
    low, high = effects["ci_low"] * effects["span"], effects["ci_high"] * effects["span"]
    expected = np.where((low >= -0.5) & (high <= 0.5), "pass",
                        np.where(((low > 0) | (high < 0)) & (drift.abs() >= 0.5), "fail",
                                 "inconclusive"))  # fmt: skip
    assert verdicts["verdict"].tolist() == expected.tolist()


def test_the_profile_is_the_mean_leniency_at_each_position(shuffled: Study) -> None:
    profile = batch_effects_analysis(shuffled, run=0).tables["position_profile"]
    for run in (1, 2):
        rows = _first_asks(shuffled, run)
        expected = (rows["score"] - rows["human"]).groupby(rows["position"]).agg(["mean", "size"])
        mine = profile[profile["run"] == run].set_index("value")
        assert mine.index.tolist() == expected.index.tolist()
        assert mine["mean"].to_numpy() == pytest.approx(expected["mean"].to_numpy())
        assert mine["n"].tolist() == expected["size"].tolist()


def test_unshuffled_judgments_make_every_drift_inconclusive(in_order: Study) -> None:
    verdicts = batch_effects_analysis(in_order).tables["leniency_drift_verdicts"]
    tested = verdicts[verdicts["verdict"] != "not tested"]
    assert len(tested) == 2 and (tested["verdict"] == "inconclusive").all()
    assert tested["statement"].str.startswith("inconclusive (position confounded").all()


def test_parameters_the_study_cannot_meet_are_refused_in_one_line(in_order: Study) -> None:
    with pytest.raises(UsageError, match="no judgments of rubric 'factual_accuracy'"):
        batch_effects_analysis(in_order, rubric="factual_accuracy")
    with pytest.raises(UsageError, match="needs one rubric and one variant"):
        batch_effects_analysis(in_order, variant="", batch_sizes=[4])


def test_rejudging_per_batch_size_agrees_with_an_exact_judge(
    in_order: Study, tmp_path: Path
) -> None:
    with run_simulator(SimulatorConfig(oracle=ORACLE)) as sim:  # exact: kappa 1 at every size
        result = batch_effects_analysis(
            in_order, batch_sizes=[2, 8], dataset_path=str(in_order.folder.items),
            judge_model="sim-judge", base_url=sim.base_url, provider="simulator",
            n_boot=50, store_dir=tmp_path,
        )  # fmt: skip
    sensitivity = result.tables["batch_size_sensitivity"]
    assert sensitivity["batch_size"].tolist() == [2, 8]
    assert (sensitivity["rows_judged"] == N_ITEMS).all()
    assert sensitivity["kappa"].tolist() == pytest.approx([1.0, 1.0])
    assert sensitivity["requests"].tolist() == [N_ITEMS // 2, N_ITEMS // 8]
    assert (tmp_path / "responses.sqlite").is_file()
    assert f"judge model: sim-judge; {N_ITEMS} items at sizes [2, 8]" in result.lines
    assert list(result.figures)[-1] == "batch_size_riddle_accuracy"


def test_without_labels_a_human_adjustment_is_skipped_and_the_item_one_still_runs(
    unlabelled: Study,
) -> None:
    result = batch_effects_analysis(unlabelled, run=0)
    assert result.skipped == [
        f"skipped position effects (riddle_accuracy · base · run {run}): no human labels, which "
        "adjust='human' needs (adjust='item' compares each item with itself)"
        for run in (1, 2)
    ]
    assert result.tables == {} and result.figures == {}
    # item fixed effects need no label; within one run each item sits at one place only
    by_item = batch_effects_analysis(unlabelled, run=0, adjust="item")
    assert by_item.skipped == []
    effects = by_item.tables["position_effects"]
    assert len(effects) == 4 and (effects["adjust"] == "item").all()
    assert effects["note"].str.contains("shuffle the runs").all()
    assert (by_item.tables["position_profile"]["outcome"] == "score - item mean").all()
