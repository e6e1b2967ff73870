"""Report step 05 as a function: its tables against scipy/statsmodels on the same study.

Two studies judged by the simulator (in-process): one with human scores, answering models and
two runs; one without labels, where the bias probes are skipped in one line each.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.multitest import multipletests

from judgekit.cli.main import main
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.distributions import distributions_analysis
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.folder import Study, load_study

N_ITEMS = 24
HUMAN = {f"a{k}": 1 + (k * 7) % 4 for k in range(N_ITEMS)}
JUDGE = "simulator:sim-judge"


def _items(path: Path) -> Path:
    rows = [
        {"ID": item, "Question": f"What is fact {k % 8}?", "Answer": "So it is." + " yes" * k,
         "Model": ("alpha", "beta", "gamma")[k % 3], "Human": HUMAN[item]}
        for k, item in enumerate(HUMAN)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _judged(folder: Path, *flags: str) -> Study:
    items = _items(folder / "items.csv")
    config = SimulatorConfig(oracle={k: float(v) for k, v in HUMAN.items()}, noise_rate=0.4)
    with run_simulator(config) as sim:
        judge = ["--provider", "simulator", "--model", "sim-judge", "--base-url", sim.base_url]
        command = [str(items), "--rubric", "factual_accuracy", "--study", str(folder / "study")]
        assert main(["judge", *command, *flags, *judge]) == 0
    return load_study(folder / "study")


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return _judged(tmp_path_factory.mktemp("labelled"), "--labels-column", "Human", "--runs", "2")


@pytest.fixture(scope="module")
def unlabelled(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return _judged(tmp_path_factory.mktemp("unlabelled"), "--no-labels")


def _answers(study: Study, run: int) -> pd.DataFrame:
    """The judge's scored answers of one run with their human score, length and model."""
    items = pd.read_csv(study.folder.items, dtype={"ID": str})
    verdicts = study.verdicts
    scored = verdicts[(verdicts["run"] == run) & (verdicts["status"] == "ok")]
    return scored.merge(items, left_on="item_id", right_on="ID").assign(
        length=lambda f: f["Answer"].str.len(), score=lambda f: f["score"].astype(float)
    )


def test_the_step_is_registered_and_every_table_is_written(labelled: Study) -> None:
    assert ANALYSES["05_distributions_and_bias"] is distributions_analysis
    result = distributions_analysis(labelled, run=0, own_models={JUDGE: "alpha"})
    assert list(result.tables) == ["score_coverage", "length_bias", "self_preference"]
    assert list(result.figures) == ["distributions_factual_accuracy", "self_preference"]
    assert result.skipped == []
    assert f"self-preference: {JUDGE} belongs to alpha" in result.lines
    assert "standard errors clustered on 'question'" in result.lines


def test_scale_coverage_counts_the_levels_each_rater_used(labelled: Study) -> None:
    coverage = distributions_analysis(labelled, run=0).tables["score_coverage"]
    for run in (1, 2):
        judge = coverage[(coverage["rater"] == JUDGE) & (coverage["run"] == run)].iloc[0]
        used = _answers(labelled, run)["score"].nunique()
        assert judge["levels_used"] == used
        assert judge["share_of_scale_used"] == pytest.approx(used / 4)
    human = coverage[coverage["rater"] == "human"]
    assert (human["levels_used"] == len(set(HUMAN.values()))).all()
    # one family: every judge's test against the human's, corrected together by Holm
    tested = coverage[coverage["p_value"].notna()]
    holm = multipletests(tested["p_value"], method="holm")[1]
    assert tested["p_adjusted"].to_numpy() == pytest.approx(holm)


def test_length_bias_is_the_clustered_ols_of_score_on_log_length(labelled: Study) -> None:
    lengths = distributions_analysis(labelled, run=0).tables["length_bias"]
    assert sorted(lengths["run"]) == [1, 2]
    for run in (1, 2):
        data = _answers(labelled, run)
        fit = smf.ols("score ~ np.log(length) + Human", data=data).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(data["Question"])[0]}
        )
        row = lengths[lengths["run"] == run].iloc[0]
        assert row["estimate"] == pytest.approx(fit.params["np.log(length)"])
        assert row["se"] == pytest.approx(fit.bse["np.log(length)"])
        assert row["n"] == len(data)
    holm = multipletests(lengths["p_value"], method="holm")[1]
    assert lengths["p_adjusted"].to_numpy() == pytest.approx(holm)


def test_naive_self_preference_is_welchs_gap_on_the_judges_own_answers(labelled: Study) -> None:
    bias = distributions_analysis(labelled, run=1, own_models={JUDGE: "alpha"})
    bias = bias.tables["self_preference"]
    data = _answers(labelled, 1)
    own, other = data.loc[data["Model"] == "alpha", "score"], data.loc[data["Model"] != "alpha"]
    welch = stats.ttest_ind(own, other["score"], equal_var=False)
    row = bias[bias["method"] == "naive_welch"].iloc[0]
    assert row["estimate"] == pytest.approx(own.mean() - other["score"].mean())
    assert row["p_value"] == pytest.approx(welch.pvalue)
    assert set(bias["run"]) == {1}  # run 1 only: the parameter selects it


def test_the_study_settings_name_the_judges_own_model_when_the_parameter_does_not(
    labelled: Study,
) -> None:
    result = distributions_analysis(replace(labelled, settings={"own_models": {JUDGE: "beta"}}))
    assert f"self-preference: {JUDGE} belongs to beta" in result.lines
    assert not result.tables["self_preference"].empty


def test_without_labels_the_bias_probes_are_skipped_in_one_line(unlabelled: Study) -> None:
    result = distributions_analysis(unlabelled, run=0)
    assert result.skipped == [
        "skipped human comparison, length bias and self-preference for factual_accuracy: no "
        "human labels (--labels-column, or `judgekit label`); distributions and scale use only"
    ]
    assert "self-preference not probed" in "\n".join(result.lines)
    assert result.tables["length_bias"].empty and result.tables["self_preference"].empty
    assert list(result.figures) == ["distributions_factual_accuracy"]
    coverage = result.tables["score_coverage"]
    assert set(coverage["rater"]) == {JUDGE} and coverage["p_value"].isna().all()
    used = np.unique(_answers(unlabelled, 1)["score"]).size
    assert coverage["levels_used"].tolist() == [used]
