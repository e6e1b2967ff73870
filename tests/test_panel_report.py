"""The panel's figures, `judgekit report`'s notebook 09 step and notebook 09 on a study folder."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import QuadMesh

matplotlib.use("Agg")

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.reporting.notebooks import NotebookRun, execute
from judgekit.reporting.report import plan_report, read_contents
from judgekit.study.folder import load_study
from judgekit.types import JUDGMENT_COLUMNS

LEVELS = (1.0, 2.0, 3.0, 4.0)


def panel_study(folder: Path, judges: list[str], labelled: bool = True, seed: int = 0) -> Path:
    """A study folder judged by ``judges`` (the ``judge`` column next to ``model``), with labels."""
    rng = np.random.default_rng(seed)
    n = 60
    truth = rng.choice(LEVELS, size=n)
    rows = []
    for j, judge in enumerate(judges):
        noisy = np.where(rng.random(n) < 0.25, rng.choice(LEVELS, size=n), truth)
        for i in range(n):
            failed = j == 0 and i == 5  # one judge fails one item: it must stay visible
            rows.append(
                {c: None for c in JUDGMENT_COLUMNS}
                | {"item_id": f"i{i}", "rubric": "factual_accuracy", "variant": "base",
                   "model": f"model-{judge}", "judge": judge, "run": 1, "attempt": 1,
                   "status": "error" if failed else "ok", "score": None if failed else noisy[i],
                   "request_hash": f"{judge}-{i // 10}", "prompt_tokens": 100 * (j + 1),
                   "completion_tokens": 10, "answer_model": judges[i % len(judges)],
                   "question": f"q{i // 3}"}
            )  # fmt: skip
    folder.mkdir(parents=True)
    write_table(pd.DataFrame(rows), folder / "judgments.parquet")
    if labelled:
        labels = pd.DataFrame(
            {"item_id": [f"i{i}" for i in range(n)], "rubric": "factual_accuracy",
             "answer_model": "", "score": truth}
        )  # fmt: skip
        write_table(labels, folder / "human_labels.parquet")
    return folder


def _panel_step(folder: Path) -> tuple[dict[str, object], str]:
    step = next(s for s in plan_report(read_contents(folder)) if s.notebook == "09_judge_panel")
    return step.parameters, step.skipped


def test_report_runs_the_panel_notebook_only_with_two_judges_and_labels(tmp_path: Path) -> None:
    parameters, skipped = _panel_step(panel_study(tmp_path / "two", ["a", "b"]))
    assert skipped == "" and parameters["run"] == 0 and parameters["variant"] == ""
    assert parameters["output_dir"] == "tables/judge_panel"
    _, skipped = _panel_step(panel_study(tmp_path / "one", ["a"]))
    assert skipped == "needs two or more judges (judged 1; pass --judge)"
    _, skipped = _panel_step(panel_study(tmp_path / "bare", ["a", "b"], labelled=False))
    assert skipped.startswith("no human labels")


def _pairs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rater_a": ["A", "A", "B"] * 2,
            "rater_b": ["B", "C", "C"] * 2,
            "estimate": [0.9, 0.4, -0.3, 0.2, 0.5, 0.6],
            "rubric": ["x"] * 3 + ["y"] * 3,
        }
    )


def test_pair_matrix_keeps_fixed_colour_limits_whatever_the_data() -> None:
    fig = plots.plot_pair_matrix(_pairs(), panel="rubric", limits=(0.0, 1.0))
    meshes = [c for ax in fig.axes[:2] for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(meshes) == 2 and all(m.get_clim() == (0.0, 1.0) for m in meshes)
    texts = [t.get_text() for t in fig.axes[0].texts]
    # the values kept whatever the limits, each pair twice; the trivial diagonal left blank
    assert sorted(texts) == sorted(["0.90", "0.40", "-0.30"] * 2)
    fig = plots.plot_pair_matrix(_pairs(), panel="rubric", limits=(-1.0, 1.0), cmap="PuOr_r")
    assert fig.axes[0].collections[0].get_clim() == (-1.0, 1.0)


def test_subset_costs_marks_the_front_and_hollows_low_coverage() -> None:
    subsets = pd.DataFrame(
        {
            "subset": ["A", "B", "A + B"],
            "cost": [1.0, 1.0, 2.0],
            "estimate": [0.6, 0.7, 0.8],
            "ci_low": [0.5, 0.6, 0.7],
            "ci_high": [0.7, 0.8, 0.9],
            "pareto": [False, True, False],
            "coverage": [1.0, 1.0, 0.5],
        }
    )
    fig = plots.plot_subset_costs(subsets, min_coverage=0.95)
    ax = fig.axes[0]
    assert ax.get_title("left") == "front (cost): B (1)" and list(ax.texts) == []
    filled, hollow = ax.collections[1], ax.collections[2]
    assert len(filled.get_offsets()) == 2 and len(hollow.get_offsets()) == 1


@pytest.mark.notebooks
def test_panel_notebook_runs_on_a_study_folder(tmp_path: Path) -> None:
    folder = panel_study(tmp_path / "study", ["a", "b", "c"])
    report = folder / "report"
    report.mkdir()
    write_table(load_study(folder).labels, report / "human_labels.parquet")  # as run_report does
    parameters, _ = _panel_step(folder)
    parameters = {**parameters, "figures_dir": str(report / "figures"), "n_boot": 200}
    run = NotebookRun("09_judge_panel", config.NOTEBOOKS_DIR / "09_judge_panel.ipynb", parameters)
    execute(run, report)
    tables = report / "tables" / "judge_panel"
    versus = pd.read_csv(tables / "judges_and_juries_vs_human.csv")
    assert set(versus["rater_b"]) >= {"a", "b", "c", "jury:majority", "jury:dawid_skene"}
    juries = pd.read_csv(tables / "jury_scores.csv")
    failed = juries[(juries["item"] == "i5") & (juries["rater"] == "jury:mean")].iloc[0]
    assert failed["status"] == "judge_unscored" and failed["unscored"] == "a: error"
    subsets = pd.read_csv(tables / "panel_subsets.csv")
    assert len(subsets) == 7 and subsets["pareto"].any()
    # Cost: tokens of each judge's requests, once per request, per item judged.
    assert subsets.set_index("subset").loc["a", "cost"] == pytest.approx(110 * 6 / 60)
    figures = {p.stem for p in (report / "figures").glob("*.png")}
    assert figures == {
        "panel_judge_agreement", "panel_error_correlation", "panel_forest", "panel_subsets_cost",
    }  # fmt: skip
