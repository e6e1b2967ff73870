"""The study folder: one table-to-items path, item context, and loading a study back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.data import read_table, write_table
from judgekit.labels.table import describe_human_labels, label_conflicts, read_labels_table
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.folder import load_study, own_models_setting
from judgekit.study.items import item_context, study_items
from judgekit.types import JUDGMENT_COLUMNS, UsageError

ITEMS = (
    "ID,Question,Answer,Reference answer,Model,Topic,Human_Factual\n"
    "1,Capital of Peru?,Lima,Lima,m1,geo,4\n"
    "2,Largest desert?,Sahara,Antarctica,m2,geo,\n"
)


def test_every_column_the_rubric_reads_is_sent_and_the_rest_listed(tmp_path: Path) -> None:
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    rubric = load_rubric("factual_accuracy")
    items, unused = study_items(read_table(tmp_path / "items.csv"), rubric)
    assert [dict(item.fields) for item in items][1] == {
        "Question": "Largest desert?",
        "Answer": "Sahara",
        "Ref_Answer": "Antarctica",
    }
    assert unused == ["Topic"]
    assert "Antarctica" in rubric.render(items[1:])[1]["content"]
    context = item_context(items)
    assert context.loc["2"].to_dict() == {
        "answer_model": "m2",
        "question": "Largest desert?",
        "answer_chars": 6,
    }


def judgments_frame(ids: list[str]) -> pd.DataFrame:
    rows = [
        {c: None for c in JUDGMENT_COLUMNS}
        | {"item_id": i, "rubric": "factual_accuracy", "variant": "base", "model": "j", "run": 1,
           "attempt": 1, "status": "ok", "score": 4.0}
        for i in ids
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_load_study_takes_labels_from_the_labelling_tools_long_file(tmp_path: Path) -> None:
    write_table(judgments_frame(["1", "2", "3"]), tmp_path / "judgments.csv")
    long = pd.DataFrame(
        {
            "item_id": ["1", "2", "3", "1"],
            "labeller": ["ann", "ann", "ann", "bob"],
            "score": [4, 2, None, 1],
            "status": ["ok", "ok", "skip", "ok"],
            "note": ["", "", "", ""],
            "labelled_at": ["2026-11-30T10:00:00Z"] * 4,
            "rubric": ["factual_accuracy"] * 4,
            "rubric_version": ["1"] * 4,
        }
    )
    write_table(long, tmp_path / "labels.csv")
    study = load_study(tmp_path)
    assert study.labels_source == "ann (labelling tool, 2 labels)"
    assert study.labels[["item_id", "score"]].values.tolist() == [["1", 4.0], ["2", 2.0]]
    assert len(study.verdicts) == 3
    assert set(study.human["labeller"]) == {"ann", "bob"}  # every rater stays in the one table
    # the items file's column comes first, and the tool's labels stay beside it
    column = pd.DataFrame(
        {"item_id": ["1", "2", "3"], "rubric": "factual_accuracy", "answer_model": "", "score": 3.0}
    )
    write_table(column, tmp_path / "human_labels.parquet")
    study = load_study(tmp_path)
    assert study.labels_source == "column label (items file, 3 labels)"
    assert describe_human_labels(study.human) == (
        "2 by ann (labelling tool); 1 by bob (labelling tool); 3 by column label (items file)"
    )
    conflicts = label_conflicts(study.human)
    assert conflicts[["item_id", "ann", "bob", "column label", "spread"]].fillna(
        -1
    ).values.tolist() == [
        ["1", 4.0, 1.0, 3.0, 3.0],
        ["2", 2.0, -1, 3.0, 1.0],
    ]


def test_labels_saved_again_by_a_spreadsheet_in_a_semicolon_locale(tmp_path: Path) -> None:
    header = "item_id;labeller;score;status;note;labelled_at;rubric;rubric_version\r\n"
    row = "1;Éva;4,0;ok;jó;2026-11-30T10:00:00Z;factual_accuracy;1\r\n"
    (tmp_path / "labels.csv").write_bytes((header + row).encode("cp1250"))
    labels = read_labels_table(tmp_path / "labels.csv")
    assert labels[["labeller", "score", "note"]].values.tolist() == [["Éva", 4.0, "jó"]]


def test_load_study_without_labels_or_judgments(tmp_path: Path) -> None:
    write_table(judgments_frame(["1"]), tmp_path / "judgments.parquet")
    assert load_study(tmp_path).labels.empty and load_study(tmp_path).labels_source == ""
    with pytest.raises(ValueError, match="run `judgekit judge` first"):
        load_study(tmp_path / "nothing-here")


@pytest.mark.notebooks
def test_report_runs_without_model_column_and_with_a_long_labels_file(tmp_path: Path) -> None:
    items = pd.DataFrame(
        {
            "ID": [f"i{n}" for n in range(8)],
            "Question": [f"What is {n} + {n}?" for n in range(8)],
            "Answer": [str(n + n + n % 2) for n in range(8)],
        }
    )
    items.to_csv(tmp_path / "items.csv", index=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env["PYTHONPATH"] = str(config.ROOT)
    with run_simulator(SimulatorConfig()) as sim:
        judge = [sys.executable, "-m", "judgekit", "judge", "items.csv", "--rubric"]
        judge += ["factual_accuracy", "--study", "s", "--base-url", sim.base_url, "--model", "j"]
        done = subprocess.run(
            judge, cwd=tmp_path, env={**env, "OPENAI_API_KEY": "test-canary"},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no human labels: no column 'Human_Factual'" in done.stderr
    labels = pd.DataFrame(
        {"item_id": items["ID"], "labeller": "ann", "score": [4, 1] * 4, "status": "ok",
         "note": "", "labelled_at": "", "rubric": "factual_accuracy", "rubric_version": "1"}
    )  # fmt: skip
    write_table(labels, tmp_path / "s" / "labels.csv")
    report = subprocess.run(
        [sys.executable, "-m", "judgekit", "report", "s"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert sorted(p.name for p in (tmp_path / "s" / "report").glob("*.ipynb")) == [
        "02_human_agreement.ipynb",
        "05_distributions_and_bias.ipynb",
    ]
    assert "skipped 03_run_consistency: needs two or more runs" in report.stderr


def test_own_models_is_a_study_setting_checked_against_the_study(tmp_path: Path) -> None:
    judgments = judgments_frame(["1", "2"]).assign(answer_model=["model-a", "model-b"])
    write_table(judgments, tmp_path / "judgments.parquet")
    study = load_study(tmp_path)
    assert study.settings == {}
    judged = study.folder, set(study.verdicts["judge"]), set(study.verdicts["answer_model"])
    with pytest.raises(UsageError, match=r"no judge 'jj' in the study \(did you mean `j`\?\)"):
        own_models_setting(*judged, ["jj=model-a"])
    with pytest.raises(UsageError, match=r"no answering model 'model-c'.*did you mean `model-"):
        own_models_setting(*judged, ["j=model-c"])
    with pytest.raises(UsageError, match="write JUDGE=ANSWERING_MODEL"):
        own_models_setting(*judged, ["j"])
    assert own_models_setting(*judged, ["j=model-a"]) == {"j": "model-a"}
    assert load_study(tmp_path).settings == {"own_models": {"j": "model-a"}}
