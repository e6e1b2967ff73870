"""A study holding a direct rubric (with human scores) and two pairwise rubrics (#33 x #35).

One folder, three ``judgekit judge`` commands against the simulator: ``factual_accuracy`` on
single answers with a label column, then ``mtbench_pairwise`` and ``arena_hard`` on a pairs
file with a winner column. The direct report steps must read the direct rubric only (its
human scores named by their own column), the pairwise step every pairwise rubric, and the
bundle must verify: each judge's judgments, pairwise ones included, rebuilt from the store.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from pairwise_study import write_pairs

from judgekit.cli.main import main
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.report import plan_report, read_contents
from judgekit.sharing.replay import check_judgments, judging_records
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.folder import load_study
from judgekit.study.scored import without_pairwise

PAIRWISE = ("arena_hard", "mtbench_pairwise")


def _direct_items(path: Path) -> Path:
    rows = [
        {"ID": f"f{k}", "Question": f"What is fact {k}?", "Answer": f"Fact {k} is so.",
         "Model": ("alpha", "beta")[k % 2], "Human": 1 + k % 4}
        for k in range(10)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _mixed_study(folder: Path) -> Path:
    study = folder / "study"
    items = _direct_items(folder / "items.csv")
    pairs = write_pairs(folder / "pairs.csv", n_pairs=16)
    with run_simulator(SimulatorConfig(position_bias=1.0)) as sim:
        judge = ["--provider", "simulator", "--model", "sim-judge", "--base-url", sim.base_url]
        commands = [
            [str(items), "--rubric", "factual_accuracy", "--labels-column", "Human", "--runs", "2"],
            *([str(pairs), "--rubric", rubric] for rubric in PAIRWISE),
        ]
        for command in commands:
            assert main(["judge", *command, "--study", str(study), *judge]) == 0, command
    return study


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _mixed_study(tmp_path_factory.mktemp("mixed"))


def test_the_direct_steps_read_the_direct_rubric_and_its_own_labels(mixed: Path) -> None:
    study = load_study(mixed)
    assert study.labels_source == "column Human (items file, 10 labels)"
    assert set(study.labels["rubric"]) == {"factual_accuracy"}
    direct, left_out = without_pairwise(study)
    assert left_out == sorted(PAIRWISE)
    assert set(direct.verdicts["rubric"]) == set(direct.judgments["rubric"]) == {"factual_accuracy"}
    steps = {s.notebook: s for s in plan_report(read_contents(mixed))}
    for name in ("02_human_agreement", "03_run_consistency", "05_distributions_and_bias"):
        assert steps[name].skipped == "", name
        assert {c["rubric"] for c in steps[name].covers} == {"factual_accuracy"}, name
    assert steps["10_pairwise"].parameters["rubric"] == ""
    assert [c["rubric"] for c in steps["10_pairwise"].covers] == sorted(PAIRWISE)


def test_the_pairwise_step_reports_every_pairwise_rubric(mixed: Path) -> None:
    result = ANALYSES["10_pairwise"](load_study(mixed), n_boot=50, seed=1)
    summary = result.tables["pairwise_summary"]
    assert summary["rubric"].tolist() == sorted(PAIRWISE)
    assert (summary["n_pairs"] == 16).all() and summary["accuracy"].notna().all()
    for name, table in result.tables.items():
        assert table.columns[0] == "rubric" and set(table["rubric"]) == set(PAIRWISE), name
    assert {f"pairwise_outcomes_{r}" for r in PAIRWISE} <= set(result.figures)
    one = ANALYSES["10_pairwise"](load_study(mixed), rubric="arena_hard", n_boot=50, seed=1)
    assert set(one.tables["pairwise_summary"]["rubric"]) == {"arena_hard"}
    assert "pairwise_outcomes" in one.figures


def test_every_judgment_rebuilds_from_the_store_and_a_changed_verdict_is_named(
    mixed: Path, tmp_path: Path
) -> None:
    assert check_judgments(mixed, judging_records(mixed)) == []
    copy = shutil.copytree(mixed, tmp_path / "copy")
    judgments = pd.read_parquet(copy / "judgments.parquet")
    pair = (judgments["rubric"] == "mtbench_pairwise") & (judgments["verdict"] == "a")
    judgments.loc[judgments.index[pair][0], "verdict"] = "b"
    judgments.to_parquet(copy / "judgments.parquet", index=False)
    problems = check_judgments(copy, judging_records(copy))
    assert len(problems) == 1 and problems[0].startswith("judgments (mtbench_pairwise, ")
    assert "verdict" in problems[0]


@pytest.mark.notebooks
def test_a_mixed_study_reports_and_its_bundle_verifies_elsewhere(
    mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = shutil.copytree(mixed, tmp_path / "study")
    assert main(["report", str(study), "--html"]) == 0
    steps = json.loads((study / "report" / "steps.json").read_text(encoding="utf-8"))
    ran = {s["notebook"] for s in steps if s["status"] == "ran"}
    assert ran == {"02_human_agreement", "03_run_consistency", "05_distributions_and_bias",
                   "10_pairwise"}  # fmt: skip
    assert all(s["status"] in ("ran", "skipped") for s in steps), steps
    summary = pd.read_csv(study / "report" / "tables" / "pairwise_summary.csv")
    assert summary["rubric"].tolist() == sorted(PAIRWISE)
    bundle = tmp_path / "study.zip"
    assert main(["export", str(study), "-o", str(bundle)]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(bundle, elsewhere / bundle.name)
    monkeypatch.chdir(elsewhere)
    assert main(["verify", bundle.name]) == 0


def test_judgekit_label_asks_which_kind_and_labels_the_rubric_named(
    mixed: Path, tmp_path: Path
) -> None:
    from judgekit.labels.pair_session import PairLabellingSession
    from judgekit.study.labelling import LabelOptions, label_session
    from judgekit.types import UsageError

    with pytest.raises(UsageError, match=r"direct and pairwise rubrics .*: say which to label"):
        label_session(load_study(mixed), LabelOptions("ann"))
    with pytest.raises(UsageError, match="--rubric nope: the study judged arena_hard, "):
        label_session(load_study(mixed), LabelOptions("ann", rubric="nope"))
    direct = load_study(shutil.copytree(mixed, tmp_path / "direct"))
    session, _ = label_session(direct, LabelOptions("ann", n=4, rubric="factual_accuracy"))
    assert not isinstance(session, PairLabellingSession)
    assert len(session.ids) == 4 and all(i.startswith("f") for i in session.ids)
    again, _ = label_session(load_study(direct.folder.root), LabelOptions("bob"))  # the kept plan
    assert again.ids == session.ids
    pairs = load_study(shutil.copytree(mixed, tmp_path / "pairs"))
    paired, _ = label_session(pairs, LabelOptions("ann", rubric="arena_hard"))
    assert isinstance(paired, PairLabellingSession)
    plan = pd.read_csv(pairs.folder.labelling_plan)
    assert set(plan["rubric"]) == {"arena_hard"} and len(plan) == 16
