"""A study's report tables computed in this process: no notebook, no kernel (issue 35).

:func:`compute_report` plans the steps ``judgekit report`` would (:func:`plan_report`), loads
the study once and calls each applicable step's function
(:data:`~judgekit.reporting.analyses.ANALYSES`) with the parameters its notebook would get,
writing what the notebook writes: its tables under ``report/tables/<folder>/``, ``steps.json``
with each step's outcome, and ``calibration.json`` for step 08. In place of each executed
notebook it writes a *record* (``<step>.ipynb``, or ``<step>.failed.ipynb`` holding the error):
a notebook document built from the step's lines, tables and figures, never executed, so the
HTML page (:func:`~judgekit.reporting.html.write_html_report`) and
:func:`~judgekit.reporting.html.step_outcomes` read it as they read an executed one.

Step 01 judges and is never planned; step 06 reproduces the published riddles study from its
shipped data and is always planned as skipped for a study, so every step that can apply to a
study has a function.
"""

from __future__ import annotations

import base64
import io
import json
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from judgekit.data.atomic import atomic_write_text
from judgekit.data.tidy import REPLY_TEXT_COLUMNS
from judgekit.reporting.analysis import Analysis
from judgekit.reporting.html import REPORT_STEPS, StepOutcome
from judgekit.reporting.lock import one_report_at_a_time
from judgekit.reporting.report import ReportStep, plan_report, read_contents, step_record
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

#: Parameters a notebook reads itself (where the study is, where outputs go); the others are
#: its step function's keyword arguments, as the notebook passes them.
NOTEBOOK_ONLY = frozenset({"judgments_path", "labels_path", "output_dir", "figures_dir"})
#: The steps whose notebook loads the judge's reply texts (08 reviews disagreements with the
#: judge's reasons; 09 loads with :func:`load_study`'s default); the others load without.
WITH_REPLIES = frozenset({"08_human_labels", "09_judge_panel"})
#: The steps whose notebook keeps the pairwise rubrics (the others score single answers).
WITH_PAIRWISE = frozenset({"09_judge_panel", "10_pairwise"})


def one_line(error: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(error).strip().splitlines()
    if isinstance(error, UsageError):
        return text[0] if text else type(error).__name__
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


class _Studies:
    """The study loaded once, and each step's view of it (as its notebook opens it)."""

    def __init__(self, judgments_path: str) -> None:
        self.full = load_study(judgments_path)  # with the reply texts
        drop = [c for c in REPLY_TEXT_COLUMNS if c in self.full.judgments.columns]
        self.lean = replace(
            self.full,
            judgments=self.full.judgments.drop(columns=drop),
            verdicts=self.full.verdicts.drop(columns=drop),
        )

    def for_step(self, notebook: str) -> tuple[Study, list[str]]:
        """The study the step's notebook reads, and the ``skipped`` lines its opening prints."""
        from judgekit.study.scored import scored_study

        study = self.full if notebook in WITH_REPLIES else self.lean
        return (study, []) if notebook in WITH_PAIRWISE else scored_study(study)


def _run_step(step: ReportStep, study: Study, tables: Path) -> Analysis:
    """Call the step's function as its notebook does and write what the notebook writes."""
    from judgekit.data import write_table
    from judgekit.reporting.analyses import ANALYSES

    function: Callable[..., Analysis] | None = ANALYSES.get(step.notebook)
    if function is None:
        raise UsageError(f"{step.notebook} has no analysis function; it cannot be recomputed")
    kwargs = {k: v for k, v in step.parameters.items() if k not in NOTEBOOK_ONLY}
    if step.notebook == "07_batch_effects":
        kwargs["store_dir"] = tables  # the notebook's response store for its re-judging
    result = function(study, **kwargs)
    if step.notebook == "09_judge_panel" and not result.tables:  # the notebook's assertion
        raise AssertionError("a panel needs two or more judges scoring the same items")
    is_pairwise = step.notebook == "10_pairwise"
    summary = result.tables.pop("pairwise_summary", None) if is_pairwise else None
    result.write(tables)
    if summary is not None:  # 10's summary sits beside its folder: tables/pairwise_summary.csv
        write_table(summary, tables.parent / "pairwise_summary.csv")
        result.tables = {"pairwise_summary": summary, **result.tables}  # shown first, as there
    if step.notebook == "08_human_labels":  # its notebook records the calibration next
        from judgekit.labels import describe_calibration, write_calibration
        from judgekit.reporting.analyses.human_labels import calibration

        record = calibration(study, result, rubric_name="", seed=0, endpoint="")
        written = write_calibration(record, study.folder.root / "calibration.json")
        result.lines += [*describe_calibration(record).splitlines(), f"-> {written}"]
    return result


def _figure_png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def introduction(step: str) -> str:
    """The first markdown cell of this judgekit's own notebook of ``step``: its title and scope.

    Read as text from :data:`judgekit.config.NOTEBOOKS_DIR` (the checkout's or the installed
    package's notebooks, never a bundle's); ``""`` when there is none.
    """
    import nbformat

    from judgekit import config

    path = config.NOTEBOOKS_DIR / f"{step}.ipynb"
    if not path.is_file():
        return ""
    cells = nbformat.read(path, as_version=4).cells
    return next((str(c.source) for c in cells if c.cell_type == "markdown"), "")


def _write_record(
    path: Path, step: str, lines: list[str], result: Analysis | None, figures: bool
) -> None:
    """Write a step's record: its notebook's introduction, what it said and computed; never run."""
    import nbformat

    v4 = nbformat.v4
    note = "computed in-process by judgekit.reporting.analyses; no notebook was executed"
    cells = [v4.new_markdown_cell(f"*{step}: {note}.*")]
    intro = introduction(step)
    cells += [v4.new_markdown_cell(intro)] if intro else []
    said = "\n".join(lines) + "\n"
    outputs = [v4.new_output("stream", name="stdout", text=said)] if lines else []
    for name, table in (result.tables if result else {}).items():
        html = f"<h3>{name}</h3>" + table.to_html(max_rows=60, index=False)
        outputs.append(v4.new_output("display_data", data={"text/html": html, "text/plain": name}))
    for figure in (result.figures if result and figures else {}).values():
        outputs.append(v4.new_output("display_data", data={"image/png": _figure_png(figure)}))
    cells.append(v4.new_code_cell("", outputs=outputs))
    atomic_write_text(path, nbformat.writes(v4.new_notebook(cells=cells)))


def _close(result: Analysis | None) -> None:
    if result is not None and result.figures:
        import matplotlib.pyplot as plt

        for figure in result.figures.values():
            plt.close(figure)


@one_report_at_a_time
def compute_report(folder: str | Path, err: TextIO, *, figures: bool = False) -> list[StepOutcome]:
    """Compute a study's report tables in this process; return each step's outcome.

    A step whose function raises is ``failed`` with the error's one line (its record is
    ``<step>.failed.ipynb``); the other steps still run. No notebook is read or executed.

    Args:
        folder: The study folder (its ``report/`` is written).
        err: Where progress lines go.
        figures: Draw each step's figures into its record (for the HTML page); tables are
            written either way, figure files never.

    Raises:
        UsageError: If the folder has no judgments table, or another report runs on it.
    """
    from judgekit import plots

    contents = read_contents(Path(folder).resolve())
    report = contents.folder.report
    steps = plan_report(contents)
    record = step_record(steps)
    report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(report / REPORT_STEPS, json.dumps(record, indent=1) + "\n")
    plots.apply_style()
    studies: _Studies | None = None
    outcomes = []
    for step, entry in zip(steps, record, strict=True):
        for stale in (f"{step.notebook}.ipynb", f"{step.notebook}.failed.ipynb"):
            (report / stale).unlink(missing_ok=True)  # an earlier report's: not this one's
        if step.skipped:
            outcomes.append(StepOutcome(step.notebook, "skipped", step.skipped))
            continue
        print(f"computing {step.notebook} ...", file=err, flush=True)
        result: Analysis | None = None
        lines: list[str] = []
        try:
            studies = studies or _Studies(str(step.parameters["judgments_path"]))
            study, lines = studies.for_step(step.notebook)
            with warnings.catch_warnings(record=True) as caught:  # the notebook showed them
                result = _run_step(step, study, report / str(step.parameters["output_dir"]))
            lines += [f"warning: {w.message}" for w in caught]
        except Exception as error:  # any error of a step is its failure, never a pass
            why = one_line(error)
            entry.update(status="failed", error=why)
            outcomes.append(StepOutcome(step.notebook, "failed", why))
            print(f"failed {step.notebook}: {why}", file=err)
            _write_record(report / f"{step.notebook}.failed.ipynb", step.notebook,
                         [*lines, f"failed: {why}"], None, False)  # fmt: skip
        else:
            lines += result.lines
            entry.update(status="ran", skipped_parts=[x for x in lines if x.startswith("skipped ")])
            outcomes.append(StepOutcome(step.notebook, "ran"))
            _write_record(report / f"{step.notebook}.ipynb", step.notebook, lines, result, figures)
        _close(result)
        atomic_write_text(report / REPORT_STEPS, json.dumps(record, indent=1) + "\n")
    return outcomes
