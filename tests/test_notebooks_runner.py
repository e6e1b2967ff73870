"""The notebook runner's guards: secrets never recorded, parameter files resolved, kernel found."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from judgekit import config
from judgekit.reporting import notebooks as paper


def test_scrub_withholds_secret_names_and_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef123456")
    clean = paper.scrub(
        {"api_key": "visible?", "base_url": "http://x/?t=tok-abcdef123456", "runs": 3}
    )
    assert clean == {"api_key": "<withheld>", "base_url": "http://x/?t=<withheld>", "runs": 3}


def test_provenance_records_versions_and_withholds_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "provenance-canary-key-0001")
    monkeypatch.setenv("JUDGEKIT_RUNS", "/tmp/runs")
    record = paper.provenance({"judge_model": "gpt-x"})
    assert record["environment"]["OPENAI_API_KEY"] == "<withheld>"
    assert record["environment"]["JUDGEKIT_RUNS"] == "/tmp/runs"
    assert record["parameters"] == {"judge_model": "gpt-x"}
    assert record["packages"]["numpy"] and record["python"]
    assert "provenance-canary-key-0001" not in repr(record)


def test_redact_replaces_every_secret_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-redact-me-42")
    assert paper.redact("error: key sk-ant-redact-me-42 refused") == "error: key <withheld> refused"


def test_placeholders_and_run_names(tmp_path: Path) -> None:
    params = tmp_path / "params"
    params.mkdir()
    (params / "01_run_judging--small.yaml").write_text(
        'dataset_path: "{data_dir}/demo/riddles_demo.csv"\nruns: 2\n'
    )
    (run,) = paper.load_parameter_set(params, tmp_path / "run", tmp_path / "figs")
    assert run.name == "01_run_judging--small"
    assert run.notebook == config.NOTEBOOKS_DIR / "01_run_judging.ipynb"
    assert run.parameters == {
        "dataset_path": str(config.DATA_DIR / "demo/riddles_demo.csv"),
        "runs": 2,
    }


def test_unknown_notebook_and_empty_folder_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no parameter files"):
        paper.load_parameter_set(tmp_path, tmp_path, tmp_path)
    (tmp_path / "09_missing.yaml").write_text("x: 1\n")
    with pytest.raises(FileNotFoundError, match="no notebook"):
        paper.load_parameter_set(tmp_path, tmp_path, tmp_path)


def test_python3_kernel_is_available() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    paper.ensure_kernel()
    assert KernelSpecManager().get_kernel_spec("python3").language == "python"


def test_nbstripout_leaves_committed_notebooks_unchanged(tmp_path: Path) -> None:
    for notebook in sorted(config.NOTEBOOKS_DIR.glob("*.ipynb")):
        copy = tmp_path / notebook.name
        shutil.copyfile(notebook, copy)
        subprocess.run([sys.executable, "-m", "nbstripout", str(copy)], check=True)
        assert copy.read_bytes() == notebook.read_bytes(), notebook.name


@pytest.mark.notebooks
def test_kernel_starts_quietly_and_real_warnings_stay_visible(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import os, warnings\nwarnings.warn('a real warning')\n"
            "print(6 * 7, [name for name in os.listdir('.') if 'ipc' in name])"
        )
    ]
    source = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, source)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    executed = paper.execute(paper.NotebookRun("tiny", source, {}), run_dir)
    printed = capfd.readouterr()
    # The kernel's stderr is inherited, so its log would land here (fd-level capture).
    assert "without encryption" not in printed.err + printed.out
    outputs = nbformat.read(executed, as_version=4).cells[-1].outputs
    texts = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    assert any("UserWarning: a real warning" in text for text in texts)
    # The kernel's sockets live in the Jupyter runtime folder, not in the run folder.
    assert any("42 []" in text for text in texts)
    assert sorted(p.name for p in run_dir.iterdir()) == ["tiny.ipynb"]
