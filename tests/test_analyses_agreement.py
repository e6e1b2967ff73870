"""Report step 02 as a function: the judge against the human labels (#35)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from direct_study import RUBRIC, make_direct_study
from sklearn.metrics import cohen_kappa_score

from judgekit.labels.table import write_labels_table
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.agreement import agreement_analysis
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

JUDGE = "simulator:sim-judge"
LEVELS = [0, 3, 5]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    root = tmp_path_factory.mktemp("agreement") / "study"
    return load_study(make_direct_study(root, runs=2, variants=("base", "paraphrase_1")))


def _pairs(study: Study, variant: str, run: int) -> pd.DataFrame:
    """Judge and human scores side by side, straight from the study's tables."""
    verdicts = study.verdicts
    mine = verdicts[(verdicts["variant"] == variant) & (verdicts["run"] == run)]
    merged = mine.merge(study.labels, on=["item_id", "rubric"], suffixes=("", "_human"))
    return merged[(merged["status"] == "ok") & merged["score"].notna()]


def test_the_step_is_registered() -> None:
    assert ANALYSES["02_human_agreement"] is agreement_analysis


def test_kappas_and_rates_match_an_independent_computation(study: Study) -> None:
    result = agreement_analysis(study, variant="", run=0, ci_method="analytic")
    family = result.tables["kappa_family"]
    assert len(family) == 4 * 3  # two variants x two runs x three weightings
    for (variant, run), rows in family.groupby(["variant", "run"]):
        pairs = _pairs(study, str(variant), int(run))
        judge, human = pairs["score"].astype(int), pairs["score_human"].astype(int)
        by_weighting = rows.set_index("kappa")
        for weighting, weights in (("unweighted", None), ("linear", "linear"),
                                   ("quadratic", "quadratic")):  # fmt: skip
            expected = cohen_kappa_score(judge, human, labels=LEVELS, weights=weights)
            assert by_weighting.loc[weighting, "estimate"] == pytest.approx(expected)
            assert by_weighting.loc[weighting, "n"] == len(pairs) == 24
        rates = result.tables["agreement_rates"]
        exact = rates[(rates["variant"] == variant) & (rates["run"] == run)]
        exact = exact.set_index("statistic").loc["exact", "estimate"]
        assert exact == pytest.approx((judge == human).mean())
    assert set(family["human_labels"]) == {study.labels_source}
    confusion = result.tables["confusion"]
    assert confusion.groupby("panel")["count"].sum().tolist() == [24] * 4
    assert {"agreement_kappa_forest", "agreement_confusion"} == set(result.figures)
    assert f"compared with the human: ['{RUBRIC} · {JUDGE} · base · run 1'," in "\n".join(
        result.lines
    )


def test_defaults_compare_base_run_one_with_clusters_and_seed004(study: Study) -> None:
    result = agreement_analysis(study, n_boot=50)
    family = result.tables["kappa_family"]
    assert set(zip(family["variant"], family["run"], strict=True)) == {("base", 1)}
    clustered = result.tables["kappa_quadratic_clustered"]
    quadratic = family.set_index("kappa").loc["quadratic", "estimate"]
    assert clustered["estimate"].tolist() == [pytest.approx(quadratic)]
    assert clustered["n_clusters"].tolist() == [8]  # eight riddles, three answers each
    assert "design effect = clustered width / item-resampling width (cluster: question)" in (
        result.lines
    )
    checks = result.tables["seed004_report"].set_index("check")
    assert checks.loc["human_agreement", "estimate"] == pytest.approx(quadratic)
    assert checks.loc["human_agreement", "passed"] == (quadratic > 0.8)
    assert any("2 wording(s) (base + ['paraphrase_1'], 1 pair(s)), 2 run(s)" in line
               for line in result.lines)  # fmt: skip
    per_model = result.tables["kappa_by_answer_model"]
    assert sorted(per_model["answer_model"]) == ["model-a", "model-b", "model-c"]
    assert f"{RUBRIC}: 3 answering models with 8-8 of the 24 labelled items each" in result.lines
    assert "no calibration record yet (notebook 08 writes one)" in result.lines
    assert not result.skipped


def test_what_cannot_be_compared_is_a_skipped_line(study: Study) -> None:
    verdicts = study.verdicts.copy()
    unscored = (verdicts["variant"] == "paraphrase_1") & (verdicts["run"] == 2)
    verdicts.loc[unscored, ["status", "score"]] = ["parse_error", float("nan")]
    without_models = verdicts.drop(columns="answer_model")
    judgments = study.judgments.drop(columns="question")  # no cluster
    changed = dataclasses.replace(study, verdicts=without_models, judgments=judgments)
    result = agreement_analysis(changed, variant="", run=0, ci_method="analytic")
    assert result.skipped == [
        f"skipped {RUBRIC} · {JUDGE} · paraphrase_1 · run 2: fewer than two items scored by "
        "judge and human",
        "skipped agreement per answering model where the items file has no Model column: it "
        "names the model that wrote each answer",
    ]
    assert len(result.tables["kappa_family"]) == 3 * 3
    assert result.tables["kappa_quadratic_clustered"].empty
    assert result.tables["kappa_by_answer_model"].empty
    assert "the study's items share no question: the intervals above treat items as " \
        "independent" in result.lines  # fmt: skip


def test_two_labellers_are_compared_and_their_conflicts_listed(
    study: Study, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = make_direct_study(tmp_path_factory.mktemp("people") / "study")
    human = load_study(root).labels
    second = pd.DataFrame({"item_id": human["item_id"], "labeller": "bela",
                           "score": human["score"], "status": "ok", "note": "",
                           "labelled_at": "2026-12-01T10:00:00+00:00", "rubric": RUBRIC,
                           "rubric_version": ""})  # fmt: skip
    second.loc[:1, "score"] = second.loc[:1, "score"].map({0: 3, 3: 5, 5: 3})
    write_labels_table(second, root / "labels.csv")
    result = agreement_analysis(load_study(root), n_boot=50)
    between = result.tables[f"inter_human_{RUBRIC}"].set_index("statistic")
    expected = cohen_kappa_score(second["score"].astype(int), human["score"].astype(int),
                                 labels=LEVELS, weights="quadratic")  # fmt: skip
    assert between.loc["kappa (quadratic)", "estimate"] == pytest.approx(expected)
    assert between.loc["kappa (quadratic)", "n"] == 24
    conflicts = result.tables[f"label_conflicts_{RUBRIC}"]
    assert sorted(conflicts["item_id"].astype(str)) == sorted(human["item_id"][:2].astype(str))
    assert f"{RUBRIC}: 2 item(s) scored differently by two raters:" in result.lines
    names = list(result.tables)
    assert names.index("seed004_report") < names.index(f"inter_human_{RUBRIC}")


def test_a_study_without_labels_is_one_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = make_direct_study(tmp_path_factory.mktemp("bare") / "study", labels=False)
    with pytest.raises(UsageError, match="no rubric of the judgments table has human labels"):
        agreement_analysis(load_study(root))
