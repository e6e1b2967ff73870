"""``judgekit report DIR``: run the analysis notebooks on a study folder.

Parameters are derived from what the folder holds; a notebook whose inputs are absent is
skipped with a one-line reason. Executed notebooks go to ``DIR/report/``, their tables to
``DIR/report/tables/`` and figures to ``DIR/report/figures/``; each notebook's parameters
(or why it was skipped) go to ``DIR/report/steps.json``. The human labels (the items' label
column and the labelling tool's ``labels.csv``, one table) are read by each notebook from the
folder; the labelling analysis (notebook 08) runs once ``judgekit label`` has made a plan and
someone labelled. The notebooks ship with the
project checkout, not the installed package, so this command needs a checkout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from judgekit import config
from judgekit.data.atomic import atomic_write_text
from judgekit.labels.table import LABELLING_TOOL
from judgekit.types import UsageError
from judgekit.workflows.checkout import require_checkout
from judgekit.workflows.errors import RunFailed
from judgekit.workflows.html_report import REPORT_STEPS
from judgekit.workflows.study import Study, load_study, own_models_setting


@dataclass(frozen=True)
class ReportStep:
    """One notebook of the report: its parameters, or why it is skipped."""

    notebook: str
    parameters: dict[str, Any]
    skipped: str = ""


def plan_report(study: Study) -> list[ReportStep]:
    """The notebooks to run on ``study``, with parameters, in order (skips say why)."""
    verdicts = study.verdicts
    base = {"judgments_path": str(study.folder.judgments)}
    tables = "tables/"
    labelled = base  # each notebook takes the study's one table of human labels
    runs = int(verdicts["run"].nunique())
    variants = list(dict.fromkeys(verdicts["variant"]))
    first_variant, first_run = variants[0], int(verdicts["run"].min())
    batched = int(study.judgments.groupby("request_hash")["item_id"].nunique().max()) > 1
    rubric = str(verdicts["rubric"].iloc[0])
    tool_labels = (study.human["source"] == LABELLING_TOOL).any()
    judge_column = "judge" if "judge" in verdicts.columns else "model"
    judges = int(verdicts[judge_column].nunique())
    panel_skip = "" if judges >= 2 else f"needs two or more judges (judged {judges}; pass --judge)"
    if not panel_skip and not study.labels_source:
        panel_skip = "no human labels in the study (see README, labels)"
    return [
        ReportStep(
            "02_human_agreement",
            {**labelled, "variant": first_variant, "run": first_run,
             "output_dir": tables + "human_agreement"},
            "" if study.labels_source else "no human labels in the study (see README, labels)",
        ),
        ReportStep(
            "03_run_consistency",
            {**base, "variant": first_variant, "output_dir": tables + "run_consistency"},
            "" if runs >= 2 else f"needs two or more runs (judged {runs}; pass --runs 3)",
        ),
        ReportStep(
            "04_paraphrase_sensitivity",
            {**base, "run": first_run, "output_dir": tables + "paraphrase_sensitivity"},
            "" if len(variants) >= 2 else "needs two or more prompt variants (pass --variant)",
        ),
        ReportStep(
            "05_distributions_and_bias",
            {**labelled, "run": first_run, "own_models": study.settings.get("own_models", {}),
             "output_dir": tables + "distributions_and_bias"},
        ),
        ReportStep(
            "06_riddles_study_reproduced",
            {},
            "reproduces the published riddles study, not this one (see `judgekit paper`)",
        ),
        ReportStep(
            "07_batch_effects",
            {**labelled, "rubric": rubric, "variant": first_variant, "run": first_run,
             "batch_sizes": [], "output_dir": tables + "batch_effects"},
            "" if batched else "every request held one item: no position within a batch",
        ),
        ReportStep(
            "08_human_labels",
            {**base, "coverage_check": "study", "output_dir": tables + "human_labels"},
            "" if study.folder.labelling_plan.is_file() and tool_labels else
            "no labels from the labelling tool (`judgekit label STUDY --labeller NAME`)",
        ),
        ReportStep(
            "09_judge_panel",
            {**labelled, "variant": first_variant, "run": first_run,
             "output_dir": tables + "judge_panel"},
            panel_skip,
        ),
    ]  # fmt: skip


def run_report(
    folder: str | Path, err: TextIO | None = None, own_models: Sequence[str] = ()
) -> Path:
    """Execute the report notebooks on a study folder; return ``DIR/report``.

    Args:
        folder: The study folder.
        err: Where progress lines go (default stderr).
        own_models: ``JUDGE=ANSWERING_MODEL`` pairs for self-preference, saved in the
            study's ``settings.json`` (so every later report and notebook uses them).

    Raises:
        UsageError: If the folder has no judgments or the notebooks are not on disk.
        RunFailed: If a notebook failed (it is kept as ``<name>.failed.ipynb``).
    """
    from judgekit.workflows.paper import NotebookRun, execute

    err = err or sys.stderr
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{root}: no such study folder; create one with `judgekit judge --study`")
    study = load_study(root.resolve(), replies=False)  # to plan: the kernels load their own
    notebooks = require_checkout(config.NOTEBOOKS_DIR, "report")
    if own_models:
        own_models_setting(study, own_models)
        study = load_study(root.resolve())
    own = study.settings.get("own_models", {})
    print(
        "self-preference: "
        + (", ".join(f"{j} belongs to {m}" for j, m in own.items()) if own else
           "no judge is paired with an answering model (pass --own-model JUDGE=MODEL)"),
        file=err,
    )  # fmt: skip
    report = study.folder.report
    (report / "figures").mkdir(parents=True, exist_ok=True)
    if study.labels_source:
        print(f"human labels compared with the judge: {study.labels_source}", file=err)
    failures: list[str] = []
    steps = plan_report(study)
    record = [
        {"notebook": s.notebook, "parameters": s.parameters, "skipped": s.skipped} for s in steps
    ]
    atomic_write_text(report / REPORT_STEPS, json.dumps(record, indent=1) + "\n")
    for step in steps:
        if step.skipped:
            print(f"skipped {step.notebook}: {step.skipped}", file=err)
            continue
        parameters = {**step.parameters, "figures_dir": str(report / "figures")}
        run = NotebookRun(step.notebook, notebooks / f"{step.notebook}.ipynb", parameters)
        print(f"running {step.notebook} ...", file=err, flush=True)
        try:
            execute(run, report)
        except RunFailed as error:  # the failed notebook is kept; the others still run
            failures.append(str(error))
            print(f"failed {step.notebook}: {error}", file=err)
    print(f"report: notebooks in {report}, tables in {report / 'tables'}, figures in "
          f"{report / 'figures'}", file=err)  # fmt: skip
    if failures:
        raise RunFailed(f"{len(failures)} report notebook(s) failed; first: {failures[0]}")
    return report
