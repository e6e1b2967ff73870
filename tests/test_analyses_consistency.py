"""Report step 03 as a function: a judge against itself over repeated runs (#35)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from direct_study import RUBRIC, make_direct_study

from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.consistency import consistency_analysis
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

JUDGE = "simulator:sim-judge"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    root = tmp_path_factory.mktemp("consistency") / "study"
    return load_study(make_direct_study(root, runs=3, variants=("base", "paraphrase_1")))


def _scores(study: Study, variant: str) -> pd.DataFrame:
    """Each item's score per run (columns), straight from the study's verdicts."""
    verdicts = study.verdicts[study.verdicts["variant"] == variant]
    return verdicts.pivot(index="item_id", columns="run", values="score")


def test_the_step_is_registered() -> None:
    assert ANALYSES["03_run_consistency"] is consistency_analysis


def test_shares_and_flip_rates_match_an_independent_computation(study: Study) -> None:
    result = consistency_analysis(study, variant="", n_boot=50)
    summary = result.tables["consistency_summary"].set_index(["variant", "statistic"])
    items = result.tables["consistency_per_item"]
    for variant in ("base", "paraphrase_1"):
        scores = _scores(study, variant)
        identical = scores.nunique(axis=1) == 1
        assert summary.loc[(variant, "share_identical"), "estimate"] == identical.mean()
        modal = scores.mode(axis=1)[0]
        flips = scores.ne(modal, axis=0).mean(axis=1)
        mine = items[items["variant"] == variant].set_index("item")["flip_rate"]
        assert mine.sort_index().tolist() == pytest.approx(flips.sort_index().tolist())
        assert summary.loc[(variant, "mean_flip_rate"), "estimate"] == pytest.approx(flips.mean())
    assert 0 < summary.xs("share_identical", level="statistic")["estimate"].min() < 1
    clustered = result.tables["consistency_summary_clustered"]
    assert set(clustered["n_clusters"].dropna()) == {8}
    assert list(result.tables) == [
        "consistency_summary", "consistency_per_item", "consistency_summary_clustered"
    ]  # fmt: skip
    assert list(result.figures) == ["consistency_flip_rates"]
    assert result.lines[0] == (
        f"runs judged per rubric / judge / variant: {{('{RUBRIC}', '{JUDGE}', 'base'): 3, "
        f"('{RUBRIC}', '{JUDGE}', 'paraphrase_1'): 3}}"
    )
    assert not result.skipped


def test_a_variant_judged_once_is_a_skipped_line(study: Study) -> None:
    verdicts = study.verdicts
    once = verdicts[(verdicts["variant"] == "base") | (verdicts["run"] == 1)]
    judgments = study.judgments.drop(columns="question")  # no cluster
    result = consistency_analysis(
        dataclasses.replace(study, verdicts=once, judgments=judgments), variant="", n_boot=50
    )
    assert result.skipped == [
        f"skipped {RUBRIC} · {JUDGE} · paraphrase_1: fewer than two items scored in each of two "
        "or more runs"
    ]
    assert set(result.tables["consistency_summary"]["variant"]) == {"base"}
    assert result.tables["consistency_summary_clustered"].empty
    assert result.lines[-1] == (
        "the study's items share no question: the intervals above treat items as independent"
    )


def test_a_study_of_one_run_is_one_line(study: Study) -> None:
    one = study.verdicts[study.verdicts["run"] == 1]
    with pytest.raises(UsageError, match="run consistency needs a judgments table with runs >= 2"):
        consistency_analysis(dataclasses.replace(study, verdicts=one))
