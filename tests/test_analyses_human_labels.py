"""Report step 08 as a function: every judge against each rater, conflicts, PPI, its lines.

The study is three simulated judges with an items file's label column and a labeller of the
labelling tool who scored 20 items, three of them differently; each figure is checked against
scikit-learn or plain pandas on the same scores, not against judgekit's statistics.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from test_panel_report import LEVELS, panel_study

from judgekit.labels import write_labels_table
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.human_labels import calibration, human_labels_analysis
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

TOOL = [f"i{i}" for i in range(20)]  # the items the labeller "bela" scored
CHANGED = TOOL[:3]  # scored one level off the column's label


def _study(folder: Path, tool: bool = True) -> Study:
    folder = panel_study(folder, ["a", "b", "c"])
    items = pd.DataFrame({"ID": [f"i{i}" for i in range(60)], "Question": "q", "Answer": "x"})
    items.to_csv(folder / "items.csv", index=False)
    if tool:
        column = pd.read_parquet(folder / "human_labels.parquet").set_index("item_id")["score"]
        scores = column.loc[TOOL].copy()
        scores.loc[CHANGED] = scores.loc[CHANGED].map(lambda s: 2.0 if s == 1.0 else s - 1)
        labels = pd.DataFrame(
            {"item_id": TOOL, "labeller": "bela", "score": scores.to_numpy(), "status": "ok",
             "note": "", "labelled_at": "2026-12-01T10:00:00+00:00",
             "rubric": "factual_accuracy", "rubric_version": ""}
        )  # fmt: skip
        write_labels_table(labels, folder / "labels.csv")
    return load_study(folder, replies=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return _study(tmp_path_factory.mktemp("labels") / "study")


@pytest.fixture(scope="module")
def analysis(study: Study):
    return ANALYSES["08_human_labels"](
        study, n_labels=20, n_boot=100, coverage_check="study", ppi_labels=20, n_subsamples=10
    )


def _scores(study: Study, judge: str) -> pd.Series:
    rows = study.verdicts[(study.verdicts["judge"] == judge) & (study.verdicts["status"] == "ok")]
    return rows.set_index("item_id")["score"].astype(float)


def _bela(study: Study) -> pd.Series:
    human = study.human[study.human["labeller"] == "bela"]
    return human.set_index("item_id")["score"].astype(float)


def test_tables_in_write_order_and_registered(analysis) -> None:
    assert ANALYSES["08_human_labels"] is human_labels_analysis
    assert list(analysis.tables) == [
        "planner", "label_conflicts", "inter_human_agreement", "judge_vs_human",
        "disagreements", "corrected_means", "ppi_coverage",
    ]  # fmt: skip
    assert list(analysis.figures) == ["labels_planner", "labels_ppi_study"]
    assert sorted(analysis.tables["planner"]["n"]) == [10, 20, 30, 50, 100]


def test_every_judge_against_each_rater_is_the_quadratic_kappa(study, analysis) -> None:
    versus = analysis.tables["judge_vs_human"].set_index(["judge", "human_labels"])
    assert len(versus) == 6  # three judges x two raters
    column = study.labels.set_index("item_id")["score"].astype(float)
    for judge in ("a", "b", "c"):
        mine = _scores(study, judge)
        for rater, theirs in (("bela", _bela(study)), ("column label", column)):
            shared = mine.index.intersection(theirs.index)
            expected = cohen_kappa_score(
                mine[shared], theirs[shared], weights="quadratic", labels=list(LEVELS)
            )
            row = versus.loc[(judge, rater)]
            assert row["estimate"] == pytest.approx(expected) and row["n"] == len(shared)


def test_raters_against_each_other_and_their_conflicts(study, analysis) -> None:
    conflicts = analysis.tables["label_conflicts"]
    assert sorted(conflicts["item_id"]) == sorted(CHANGED)
    kappa = analysis.tables["inter_human_agreement"]
    kappa = kappa[kappa["statistic"] == "kappa (quadratic)"].iloc[0]
    column = study.labels.set_index("item_id")["score"].astype(float).loc[TOOL]
    expected = cohen_kappa_score(_bela(study)[TOOL], column, weights="quadratic")
    assert kappa["estimate"] == pytest.approx(expected) and kappa["n"] == len(TOOL)
    assert "3 item(s) scored differently by two raters (none is resolved):" in analysis.lines


def test_ppi_uses_the_tool_labeller_and_every_judge(study, analysis) -> None:
    assert "labels used for PPI: bela" in analysis.lines
    means = analysis.tables["corrected_means"]
    assert set(means["judge"]) == {"a", "b", "c"} and set(means["human_labels"]) == {"bela"}
    answer_model = study.verdicts.drop_duplicates("item_id").set_index("item_id")["answer_model"]
    bela = _bela(study)
    for model in ("a", "b", "c"):
        row = means.set_index(["judge", "model", "estimator"])
        judged = _scores(study, "b")
        judged = judged[answer_model.loc[judged.index] == model]
        assert row.loc[("b", model, "judge_only"), "estimate"] == pytest.approx(judged.mean())
        labelled = bela[answer_model.loc[bela.index] == model]
        human_only = row.loc[("b", model, "human_only")]
        assert human_only["n_labelled"] == len(labelled)
        assert human_only["estimate"] == pytest.approx(labelled.mean())


def test_coverage_check_too_small_and_none_say_so(study) -> None:
    small = human_labels_analysis(study, n_boot=50, coverage_check="study", ppi_labels=40)
    assert "coverage check skipped for a: fewer than 80 fully labelled items" in small.lines
    assert "no coverage check run" in small.lines and "ppi_coverage" not in small.tables
    none = human_labels_analysis(study, n_boot=50, coverage_check="none")
    assert "no coverage check run" in none.lines and list(none.figures) == ["labels_planner"]
    with pytest.raises(UsageError, match="coverage_check 'all'"):
        human_labels_analysis(study, coverage_check="all")


def test_calibration_binds_the_planned_judge_and_every_rater(study, analysis) -> None:
    record = calibration(study, analysis, endpoint="http://judge")
    assert record["judge_model"] == "model-a" and record["endpoint"] == "http://judge"
    assert sorted(record["labellers"]) == ["bela", "column label"]


def test_a_study_with_one_rater_and_no_labels(tmp_path: Path) -> None:
    one = human_labels_analysis(
        _study(tmp_path / "one", tool=False), n_labels=20, n_boot=50, coverage_check="none"
    )
    assert one.tables["inter_human_agreement"].empty
    assert "one rater only: no inter-human agreement (the ceiling for the judge) yet" in one.lines
    assert "no item was scored differently by two raters" in one.lines
    bare = panel_study(tmp_path / "bare", ["a", "b"], labelled=False)
    with pytest.raises(UsageError, match="no scored labels for factual_accuracy"):
        human_labels_analysis(load_study(bare), coverage_check="none")
