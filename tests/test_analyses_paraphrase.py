"""Report step 04 as a function: a judge's scores under different wordings of the prompt (#35)."""

from __future__ import annotations

import dataclasses

import pytest
from direct_study import RUBRIC, make_direct_study
from sklearn.metrics import cohen_kappa_score

from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.paraphrase import paraphrase_analysis
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

JUDGE = "simulator:sim-judge"
VARIANTS = ("base", "paraphrase_1", "paraphrase_2")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    root = tmp_path_factory.mktemp("paraphrase") / "study"
    return load_study(make_direct_study(root, runs=2, variants=VARIANTS))


def test_the_step_is_registered() -> None:
    assert ANALYSES["04_paraphrase_sensitivity"] is paraphrase_analysis


def test_pairwise_kappas_match_an_independent_computation(study: Study) -> None:
    result = paraphrase_analysis(study, run=0, ci_method="analytic")
    pairwise = result.tables["paraphrase_pairwise"]
    assert pairwise.groupby("run").size().tolist() == [3, 3]  # every pair of three variants
    for row in pairwise.itertuples():
        verdicts = study.verdicts[study.verdicts["run"] == row.run]
        scores = verdicts.pivot(index="item_id", columns="variant", values="score").astype(int)
        expected = cohen_kappa_score(scores[row.rater_a], scores[row.rater_b],
                                     labels=[0, 3, 5], weights="quadratic")  # fmt: skip
        assert row.estimate == pytest.approx(expected)
    summary = result.tables["paraphrase_summary"].set_index(["run", "statistic"])
    for run, rows in pairwise.groupby("run"):
        assert summary.loc[(run, "min_kappa"), "estimate"] == pytest.approx(rows["estimate"].min())
        assert summary.loc[(run, "min_kappa"), "passed"] == (rows["estimate"].min() > 0.8)
    assert set(result.tables["paraphrase_pairwise_clustered"]["n_clusters"]) == {8}
    assert sorted(result.figures) == [
        f"paraphrase_kappa_{RUBRIC}_simulator_sim-judge_run{n}" for n in (1, 2)
    ]
    assert not result.skipped


def test_one_run_names_its_figure_without_the_run(study: Study) -> None:
    result = paraphrase_analysis(study, n_boot=50)  # run 1 only
    assert list(result.figures) == [f"paraphrase_kappa_{RUBRIC}_simulator_sim-judge"]
    assert set(result.tables["paraphrase_summary"]["run"]) == {1}


def test_a_run_with_one_variant_is_a_skipped_line(study: Study) -> None:
    verdicts = study.verdicts
    kept = verdicts[(verdicts["run"] == 1) | (verdicts["variant"] == "base")]
    judgments = study.judgments.drop(columns="question")  # no cluster
    result = paraphrase_analysis(
        dataclasses.replace(study, verdicts=kept, judgments=judgments), run=0, n_boot=50
    )
    assert result.skipped == [
        f"skipped {RUBRIC} · {JUDGE} · run 2: fewer than two items scored under two or more "
        "variants"
    ]
    assert set(result.tables["paraphrase_pairwise"]["run"]) == {1}
    assert result.tables["paraphrase_pairwise_clustered"].empty
    assert result.lines[-1] == (
        "the study's items share no question: the intervals above treat items as independent"
    )


def test_a_study_of_one_variant_is_one_line(study: Study) -> None:
    base = study.verdicts[study.verdicts["variant"] == "base"]
    with pytest.raises(UsageError, match="paraphrase sensitivity needs >= 2 variants"):
        paraphrase_analysis(dataclasses.replace(study, verdicts=base))
