"""``judgekit report DIR``: run the analysis notebooks on a study folder.

Parameters are derived from what the folder holds; a notebook whose inputs are absent is
skipped with a one-line reason. Executed notebooks go to ``DIR/report/``, their tables to
``DIR/report/tables/`` and figures to ``DIR/report/figures/``. ``DIR/report/steps.json``
holds each notebook's parameters and ``status``: ``skipped`` (with the reason in
``skipped``), ``ran`` (with ``skipped_parts``, the one line the notebook printed for each part
that did not apply to the study) or ``failed`` (with the ``error``). The human labels (the
items' label column and the labelling tool's ``labels.csv``, one table) are read by each
notebook from the folder; the labelling analysis (notebook 08) runs once ``judgekit label``
has made a plan and someone labelled. The notebooks are the checkout's, or the copy an
installed wheel carries (:func:`judgekit.config.shipped`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from judgekit import config
from judgekit.data.atomic import atomic_write_text
from judgekit.data.tidy import JUDGE
from judgekit.labels.table import LABELLING_TOOL
from judgekit.reporting.combinations import KEYS, label
from judgekit.reporting.html import REPORT_STEPS
from judgekit.reporting.lock import one_report_at_a_time
from judgekit.study.errors import RunFailed
from judgekit.study.folder import (
    StudyFolder,
    own_models_setting,
    read_settings,
    reference_labels,
    study_human_labels,
)
from judgekit.study.rubrics import NoScale, study_rubric
from judgekit.study.scored import NO_SCALE
from judgekit.types import Status, UsageError


@dataclass(frozen=True)
class ReportStep:
    """One notebook of the report: its parameters and what it covers, or why it is skipped.

    ``covers`` lists what the notebook's tables and figures are computed for: one entry per
    combination it compares within (e.g. notebook 03's ``rubric, judge, variant`` with the
    ``runs`` compared), so ``steps.json`` and the HTML page say which table is which.
    """

    notebook: str
    parameters: dict[str, Any]
    skipped: str = ""
    covers: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class StudyContents:
    """What the report is planned from, read without loading the study.

    Attributes:
        folder: The study folder.
        judged: One row per (rubric, variant, judge, run) judged, in the order judged.
        batched: Whether some request held two or more items (a row at position 1 or later).
        labelled: The rubrics with a human label to compare the judges with.
        labels_source: Which rater the judges are compared with, and how many labels
            (:func:`~judgekit.study.folder.reference_labels`; ``""``: none).
        tool_labels: Whether the labelling tool's ``labels.csv`` holds labels.
        settings: The study's ``settings.json``.
        pairwise: The rubrics judged in pairs (their judgments name the ``order`` shown).
    """

    folder: StudyFolder
    judged: pd.DataFrame
    batched: bool
    labelled: frozenset[str]
    labels_source: str
    tool_labels: bool
    settings: dict[str, Any]
    pairwise: frozenset[str] = frozenset()

    def combinations(self, keys: Sequence[str] = KEYS) -> pd.DataFrame:
        """The distinct combinations of ``keys`` judged, in the order judged."""
        return self.judged[list(keys)].drop_duplicates().reset_index(drop=True)


def _columns(source: Path, wanted: Sequence[str]) -> pa.Table:
    """The ``wanted`` columns the judgments table has, text dictionary-encoded (bytes a row)."""
    if source.suffix == ".parquet":
        names = pq.read_schema(source).names
        columns = [c for c in wanted if c in names]
        text = [c for c in columns if c not in ("run", "position")]
        return pq.read_table(source, columns=columns, read_dictionary=text)
    frame = pd.read_csv(source, usecols=lambda c: c in wanted, encoding="utf-8-sig")
    return pa.Table.from_pandas(frame, preserve_index=False)


def judgments_file(folder: StudyFolder) -> Path:
    """The study's judgments table (Parquet, else CSV).

    Raises:
        UsageError: If the folder holds neither.
    """
    source = next((p for p in (folder.judgments, folder.judgments_csv) if p.is_file()), None)
    if source is None:
        raise UsageError(
            f"{folder.root}: no judgments.parquet or judgments.csv; run `judgekit judge`"
        )
    return source


def answer_models(folder: StudyFolder) -> set[str]:
    """The models whose answers the study judged (its ``answer_model`` column; one column read)."""
    table = _columns(judgments_file(folder), ["answer_model"])
    if "answer_model" not in table.column_names:
        return set()
    return {str(m) for m in table["answer_model"].unique().to_pylist() if m is not None}


def read_contents(root: Path) -> StudyContents:
    """Read what :func:`plan_report` needs without loading the study.

    Six columns of the judgments table, none of them a reply or an ID (what was judged, and
    ``position``: whether a request held several items), and the human labels' tables.

    Raises:
        UsageError: If the folder holds no judgments table.
    """
    folder = StudyFolder(root)
    table = _columns(judgments_file(folder), [*KEYS, "model", "status", "position", "order"])
    table = table.filter(pc.not_equal(table["status"].cast(pa.string()), Status.UNKNOWN_ID.value))
    if JUDGE not in table.column_names:  # judged before panels: the model names the judge
        table = table.append_column(JUDGE, table["model"])
    keys = table.select(list(KEYS)).to_pandas().drop_duplicates()  # still dictionary-encoded
    combos = keys.astype({k: int if k == "run" else str for k in KEYS}).drop_duplicates()
    positions = pc.max(table["position"]).as_py() if "position" in table.column_names else None
    human = study_human_labels(folder)
    scored = human[human["status"].astype(str) == Status.OK.value]
    _, labels_source = reference_labels(human, pd.DataFrame(columns=["item_id"]))
    pairwise: frozenset[str] = frozenset()
    if "order" in table.column_names:  # the pairwise contract: each order its own row
        ordered = table.select(["rubric", "order"]).to_pandas().astype(str)
        pairwise = frozenset(ordered.loc[ordered["order"].isin(["ab", "ba"]), "rubric"])
    return StudyContents(
        folder,
        combos.reset_index(drop=True),
        bool(positions is not None and positions > 0),
        frozenset(scored["rubric"].astype(str)),
        labels_source,
        bool((scored["source"] == LABELLING_TOOL).any()),
        read_settings(folder),
        pairwise,
    )


def _records(frame: pd.DataFrame) -> tuple[dict[str, Any], ...]:
    return tuple(
        {str(k): int(v) if k == "run" else v for k, v in row.items()}
        for row in frame.to_dict("records")
    )


def _compared(combos: pd.DataFrame, keys: list[str], over: str) -> tuple[dict[str, Any], ...]:
    """Each combination of ``keys`` with two or more values of ``over`` (and those)."""
    grouped = combos.groupby(keys, sort=False)[over].agg(lambda v: sorted(set(v)))
    wide = grouped[grouped.map(len) >= 2]
    plural = f"{over}s" if over != "run" else "runs"
    return tuple(
        {**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
         plural: [int(v) if over == "run" else str(v) for v in values]}
        for key, values in wide.items()
    )  # fmt: skip


#: The steps that read the rubric's scale (its levels).
NEEDS_SCALE = frozenset(
    {
        "02_human_agreement",
        "03_run_consistency",
        "04_paraphrase_sensitivity",
        "05_distributions_and_bias",
        "07_batch_effects",
        "09_judge_panel",
    }
)


def _without_scale(contents: StudyContents) -> list[str]:
    """The judged rubrics whose scale the study does not know (an import that stated none)."""
    missing = []
    for name in sorted(set(contents.combinations()["rubric"].astype(str))):
        try:
            study_rubric(contents.folder, name)
        except NoScale:
            missing.append(name)
    return missing


def plan_report(contents: StudyContents) -> list[ReportStep]:
    """The notebooks to run on the study, with parameters, in order (skips say why).

    Every notebook covers every (rubric, variant, judge, run) judged into the study that it can
    analyse (``variant=""``, ``run=0``: all of them); ``covers`` lists them. The steps that read
    a scale leave out the rubrics whose scale the study does not know (an inspect_ai import
    without ``--scale``): planned without them, or skipped with one line when none is left.
    """
    steps = _planned(contents)
    unscaled = _without_scale(contents)
    if not unscaled:
        return steps
    judged = contents.judged[~contents.judged["rubric"].isin(unscaled)].reset_index(drop=True)
    scaled = replace(contents, judged=judged, labelled=contents.labelled - set(unscaled))
    if judged["rubric"].isin(contents.pairwise).all():
        why = f"rubric {', '.join(unscaled)} {NO_SCALE}"
        return [replace(s, skipped=why) if s.notebook in NEEDS_SCALE and not s.skipped else s
                for s in steps]  # fmt: skip
    planned = {s.notebook: s for s in _planned(scaled)}
    return [planned[s.notebook] if s.notebook in NEEDS_SCALE else s for s in steps]


def _planned(contents: StudyContents) -> list[ReportStep]:
    base = {"judgments_path": str(contents.folder.judgments)}
    tables = "tables/"
    every_combo = contents.combinations()
    # the direct steps score single answers: the pairwise rubrics are 10_pairwise's
    combos = every_combo[~every_combo["rubric"].isin(contents.pairwise)].reset_index(drop=True)
    labelled = combos[combos["rubric"].isin(contents.labelled)]
    runs = _compared(combos, ["rubric", JUDGE, "variant"], "run")
    variants = _compared(combos, ["rubric", JUDGE, "run"], "variant")
    panels = tuple(
        c for c in _compared(combos, ["rubric", "variant", "run"], JUDGE)
        if c["rubric"] in contents.labelled
    )  # fmt: skip
    no_labels = "no human labels in the study (see README, labels)"
    judges = int(combos[JUDGE].nunique())
    panel_skip = "" if judges >= 2 else f"needs two or more judges (judged {judges}; pass --judge)"
    if not panel_skip and not panels:
        panel_skip = no_labels if labelled.empty else "no rubric was judged by two judges"
    most_runs = (
        int(combos.groupby(["rubric", JUDGE, "variant"])["run"].nunique().max())
        if len(combos)
        else 0
    )
    tool = contents.folder.labelling_plan.is_file() and contents.tool_labels
    every = {"variant": "", "run": 0}
    pairwise = sorted(contents.pairwise)
    steps = [
        ReportStep(
            "02_human_agreement",
            {**base, **every, "output_dir": tables + "human_agreement"},
            "" if len(labelled) else no_labels, _records(labelled),
        ),
        ReportStep(
            "03_run_consistency",
            {**base, "variant": "", "output_dir": tables + "run_consistency"},
            "" if runs else f"needs two or more runs (judged {most_runs}; pass --runs 3)", runs,
        ),
        ReportStep(
            "04_paraphrase_sensitivity",
            {**base, "run": 0, "output_dir": tables + "paraphrase_sensitivity"},
            "" if variants else "needs two or more prompt variants (pass --variant)", variants,
        ),
        ReportStep(
            "05_distributions_and_bias",
            {**base, "run": 0, "own_models": contents.settings.get("own_models", {}),
             "output_dir": tables + "distributions_and_bias"},
            "", _records(combos),
        ),
        ReportStep(
            "06_riddles_study_reproduced",
            {},
            "reproduces the published riddles study, not this one (see `judgekit paper`)",
        ),
        ReportStep(
            "07_batch_effects",
            {**base, "rubric": "", **every, "batch_sizes": [],
             "output_dir": tables + "batch_effects"},
            "" if contents.batched else "every request held one item: no position within a batch",
            _records(combos[["rubric", "variant", "run", JUDGE]].drop_duplicates()),
        ),
        ReportStep(
            "08_human_labels",
            {**base, "coverage_check": "study", "output_dir": tables + "human_labels"},
            "" if tool else
            "no labels from the labelling tool (`judgekit label STUDY --labeller NAME`)",
        ),
        ReportStep(
            "09_judge_panel",
            {**base, **every, "output_dir": tables + "judge_panel"},
            panel_skip, panels,
        ),
        ReportStep(
            "10_pairwise",
            {**base, "rubric": "", "output_dir": tables + "pairwise"},
            "" if pairwise else "no pairwise rubric in the study",
            tuple({"rubric": name} for name in pairwise),
        ),
    ]  # fmt: skip
    if combos.empty:  # the direct steps score answers
        why = "the study's rubrics are pairwise (see 10_pairwise)"
        direct = {"02", "03", "04", "05", "07", "08", "09"}
        steps = [replace(s, skipped=why) if s.notebook[:2] in direct else s for s in steps]
    return steps


def step_record(steps: Sequence[ReportStep]) -> list[dict[str, Any]]:
    """``steps.json`` before any step runs (each entry's ``status`` is updated as it runs)."""
    return [{"notebook": s.notebook, "parameters": s.parameters, "skipped": s.skipped,
             "covers": list(s.covers), "status": "skipped" if s.skipped else "planned"}
            for s in steps]  # fmt: skip


@one_report_at_a_time
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
        UsageError: If the folder has no judgments, or another
            report runs on the study (:mod:`judgekit.reporting.lock`).
        RunFailed: If a notebook failed (it is kept as ``<name>.failed.ipynb``).
    """
    from judgekit.reporting.notebooks import NotebookRun, execute, skipped_parts

    err = err or sys.stderr
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{root}: no such study folder; create one with `judgekit judge --study`")
    contents = read_contents(root.resolve())  # to plan: only the kernels load the study
    notebooks = config.NOTEBOOKS_DIR  # the checkout's, or the copy shipped in the wheel
    _without_scale(contents)  # a changed copy: one line, not a kernel's (no scale: planned skips)
    if own_models:
        judges = set(contents.judged[JUDGE])
        own_models_setting(contents.folder, judges, answer_models(contents.folder), own_models)
        contents = replace(contents, settings=read_settings(contents.folder))
    own = contents.settings.get("own_models", {})
    print(
        "self-preference: "
        + (", ".join(f"{j} belongs to {m}" for j, m in own.items()) if own else
           "no judge is paired with an answering model (pass --own-model JUDGE=MODEL)"),
        file=err,
    )  # fmt: skip
    report = contents.folder.report
    (report / "figures").mkdir(parents=True, exist_ok=True)
    combos = contents.combinations()
    print(
        f"judged: {len(combos)} combination(s) of rubric, variant, judge and run "
        f"({', '.join(label(c) for c in combos.to_dict('records'))})",
        file=err,
    )
    if contents.labels_source:
        print(f"human labels compared with the judges: {contents.labels_source}", file=err)
    failures: list[str] = []
    steps = plan_report(contents)
    record = step_record(steps)
    atomic_write_text(report / REPORT_STEPS, json.dumps(record, indent=1) + "\n")
    for step, entry in zip(steps, record, strict=True):
        for stale in (f"{step.notebook}.ipynb", f"{step.notebook}.failed.ipynb"):
            (report / stale).unlink(missing_ok=True)  # an earlier report's: not this one's
        if step.skipped:
            print(f"skipped {step.notebook}: {step.skipped}", file=err)
            continue
        parameters = {**step.parameters, "figures_dir": str(report / "figures")}
        run = NotebookRun(step.notebook, notebooks / f"{step.notebook}.ipynb", parameters)
        print(f"running {step.notebook} ...", file=err, flush=True)
        try:
            executed = execute(run, report)
        except RunFailed as error:  # the failed notebook is kept; the others still run
            failures.append(str(error))
            entry.update(status="failed", error=str(error))
            print(f"failed {step.notebook}: {error}", file=err)
        else:
            entry.update(status="ran", skipped_parts=skipped_parts(executed))
        atomic_write_text(report / REPORT_STEPS, json.dumps(record, indent=1) + "\n")
    print(f"report: notebooks in {report}, tables in {report / 'tables'}, figures in "
          f"{report / 'figures'}", file=err)  # fmt: skip
    if failures:
        raise RunFailed(f"{len(failures)} report notebook(s) failed; first: {failures[0]}")
    return report
