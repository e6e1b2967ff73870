"""Notebook 08 on a panel study: every judge against the human, named by its panel label."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_panel_report import panel_study

from judgekit import config
from judgekit.reporting.notebooks import NotebookRun, execute

pytestmark = pytest.mark.notebooks


def test_notebook_08_compares_every_judge_of_the_panel_by_its_label(tmp_path: Path) -> None:
    # Three judges whose labels (a, b, c) differ from their models (model-a, ...).
    folder = panel_study(tmp_path / "study", ["a", "b", "c"])
    pd.DataFrame({"ID": [f"i{i}" for i in range(60)], "Question": "q", "Answer": "a"}).to_csv(
        folder / "items.csv", index=False
    )
    report = folder / "report"
    report.mkdir()
    parameters = {
        "judgments_path": str(folder),
        "n_labels": 20,
        "n_boot": 100,
        "coverage_check": "none",
        "figures_dir": str(report / "figures"),
        "output_dir": str(report / "tables"),
    }
    run = NotebookRun("08_human_labels", config.NOTEBOOKS_DIR / "08_human_labels.ipynb", parameters)
    execute(run, report)
    versus = pd.read_csv(report / "tables" / "judge_vs_human.csv")
    assert sorted(versus["judge"]) == sorted(versus["rater_a"]) == ["a", "b", "c"]
    assert versus["estimate"].notna().all()
    # The three judges' agreement differs (each has its own noise): no judge stands in for all.
    assert versus["estimate"].nunique() == 3
    means = pd.read_csv(report / "tables" / "corrected_means.csv")
    assert set(means["judge"]) == {"a", "b", "c"}
    assert (means["ci_high"].dropna() <= 4).all() and (means["ci_low"].dropna() >= 1).all()
