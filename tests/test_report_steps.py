"""``steps.json`` says of every report step whether it ran, was skipped (why) or failed (how).

The notebooks' execution is replaced here (papermill's part is covered by
tests/test_scenarios.py): what is tested is the report's bookkeeping around it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import nbformat
import pytest

from judgekit.cli.main import main
from judgekit.reporting import notebooks as paper
from judgekit.reporting.report import run_report
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.errors import RunFailed


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An own-prompt study without labels: one judge, two runs."""
    monkeypatch.setenv("TQDM_DISABLE", "1")
    prompt = tmp_path / "accuracy.txt"
    prompt.write_text('Judge accuracy on a scale of 1 to 4; end with "SCORE: N".\n')
    prompt.with_suffix(".yaml").write_text(
        "output_format: score_line\nscale: {range: [1, 4]}\ncolumns: [Question, Answer]\n"
    )
    items = tmp_path / "items.csv"
    items.write_text("ID,Question,Answer\n1,Capital of France?,Paris\n2,Largest planet?,Saturn\n")
    root = tmp_path / "study"
    with run_simulator(SimulatorConfig()) as sim:
        args = ["judge", str(items), "--rubric", str(prompt), "--provider", "simulator",
                "--base-url", sim.base_url, "--model", "m", "--no-labels", "--runs", "2",
                "--study", str(root)]  # fmt: skip
        assert main(args) == 0
    return root


def _fake_execute(failing: str) -> object:
    def execute(run: paper.NotebookRun, run_dir: Path) -> Path:
        if run.name == failing:
            raise RunFailed(f"notebook {run.name} failed in cell 4: ValueError: broken")
        notebook = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text="rubrics: x\nskipped part: why\n")
        ]
        notebook.cells.append(cell)
        target = run_dir / f"{run.name}.ipynb"
        nbformat.write(notebook, target)
        return target

    return execute


def test_steps_record_ran_skipped_and_failed_and_a_failure_still_fails(
    study: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = study / "report"
    report.mkdir()
    stale = report / "02_human_agreement.ipynb"  # from an earlier report of this study
    stale.write_text("{}")
    monkeypatch.setattr(paper, "execute", _fake_execute("05_distributions_and_bias"))
    with pytest.raises(RunFailed, match="1 report notebook"):
        run_report(study, err=io.StringIO())
    steps = {s["notebook"]: s for s in json.loads((report / "steps.json").read_text())}
    assert steps["03_run_consistency"]["status"] == "ran"
    assert steps["03_run_consistency"]["skipped_parts"] == ["skipped part: why"]
    assert steps["05_distributions_and_bias"]["status"] == "failed"
    assert "ValueError: broken" in steps["05_distributions_and_bias"]["error"]
    skipped = [s for s in steps.values() if s["status"] == "skipped"]
    assert {s["notebook"] for s in skipped} == set(steps) - {
        "03_run_consistency", "05_distributions_and_bias"
    }  # fmt: skip
    assert all(s["skipped"] for s in skipped)
    assert not stale.exists()  # a skipped step leaves no earlier output behind

    monkeypatch.setattr(paper, "execute", _fake_execute(""))
    run_report(study, err=io.StringIO())
    steps = {s["notebook"]: s for s in json.loads((report / "steps.json").read_text())}
    assert steps["05_distributions_and_bias"]["status"] == "ran"
