"""Notebook parameters are checked before a notebook runs: one line naming the parameter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from judgekit import config
from judgekit.study.parameters import ParameterError, check_parameters

DECLARED = {"judgments_path": str, "run": int, "threshold": float, "own_models": dict}


def _namespace(*cells: str, **values: object) -> dict[str, object]:
    return {"__annotations__": DECLARED, "In": ["", *cells], "judgments_path": "", **values}


def test_an_unknown_parameter_names_the_close_match() -> None:
    injected = '# Parameters\njudgment_path = "study"\n'
    namespace = _namespace('judgments_path: str = ""\nrun: int = 1\n', injected)
    with pytest.raises(ParameterError) as caught:
        check_parameters(namespace, "02_human_agreement")
    assert str(caught.value) == (
        "02_human_agreement: unknown parameter `judgment_path` (did you mean `judgments_path`?)"
    )
    assert caught.value._render_traceback_() == [f"error: {caught.value}"]


def test_a_mistyped_value_and_what_passes() -> None:
    with pytest.raises(ParameterError, match=r"`run` must be int, got str '1'"):
        check_parameters(_namespace(run="1"))
    # an int where a float is declared, analysis cells with calls, and re-runs all pass
    check_parameters(
        _namespace("run = 2\nthreshold = 1\n", "x = 1\nprint(x)\n", run=2, threshold=1, x=1)
    )


def test_papermill_with_a_typo_stops_before_the_notebook_reads_anything(tmp_path: Path) -> None:
    notebook = config.NOTEBOOKS_DIR / "03_run_consistency.ipynb"
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(
            str(notebook),
            str(tmp_path / "out.ipynb"),
            parameters={"judgment_path": str(tmp_path)},
            cwd=str(tmp_path),
            progress_bar=False,
        )
    assert caught.value.ename == "ParameterError"
    line = (
        "error: 03_run_consistency: unknown parameter `judgment_path` "
        "(did you mean `judgments_path`?)"
    )
    assert caught.value.traceback == [line]  # one line, no traceback
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert [e.traceback for e in errors] == [[line]]


def test_judgekit_paper_with_a_typo_in_a_parameter_file_is_one_line(tmp_path: Path) -> None:
    params = tmp_path / "params"
    params.mkdir()
    (params / "02_human_agreement.yaml").write_text("judgment_path: x.parquet\n")
    env = {**os.environ, "PYTHONPATH": str(config.ROOT)}
    command = ["paper", "--params", str(params), "--out", str(tmp_path / "o")]
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", *command], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {params / '02_human_agreement.yaml'} (02_human_agreement.ipynb): unknown "
        "parameter `judgment_path` (did you mean `judgments_path`?)"
    ]


def test_a_parameter_name_carrying_code_or_of_the_wrong_type_is_refused_before_a_write(
    tmp_path: Path,
) -> None:
    from judgekit.reporting.notebooks import NotebookRun, execute

    notebook = config.NOTEBOOKS_DIR / "03_run_consistency.ipynb"
    marker = tmp_path / "pwned"
    hostile = f"x\nimport os; os.system('touch {marker}')\ny"
    for parameters, message in [
        ({hostile: 1}, "is not a Python identifier"),
        ({"judgments_path": 3}, "`judgments_path` must be str, got int 3"),
        ({"target": True}, "`target` must be float, got bool True"),
        ({"judgment_path": "x"}, "did you mean `judgments_path`?"),
    ]:
        run = NotebookRun("03_run_consistency", notebook, parameters)
        with pytest.raises(ParameterError, match=message) as caught:
            execute(run, tmp_path)
        assert "\n" not in str(caught.value)
        assert list(tmp_path.iterdir()) == []  # nothing written, nothing run
    assert not marker.exists()


def test_a_run_name_is_never_a_path() -> None:
    from judgekit.reporting.notebooks import notebook_for
    from judgekit.types import UsageError

    for name in ("../../tmp/evil", "/tmp/evil", "03_run_consistency/../x", "03_x\n"):
        with pytest.raises(UsageError, match="not a notebook run name"):
            notebook_for(name)
    assert notebook_for("03_run_consistency--again").name == "03_run_consistency.ipynb"
