"""``judgekit notebooks DIR`` copies the parameterised notebooks and never overwrites a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit import config
from judgekit.cli.main import main


def test_the_notebooks_are_copied_with_their_parameters_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["notebooks", str(tmp_path / "mine")]) == 0
    copied = sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb"))
    shipped = sorted(p.name for p in config.NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    assert copied == shipped and len(copied) == 10
    for name in copied:
        assert (tmp_path / "mine" / name).read_bytes() == (config.NOTEBOOKS_DIR / name).read_bytes()
    assert "10 notebooks copied" in capsys.readouterr().out


def test_a_folder_holding_a_notebook_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "02_human_agreement.ipynb"
    mine.write_text("my own edits", encoding="utf-8")
    assert main(["notebooks", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "02_human_agreement.ipynb exists" in error
    assert mine.read_text(encoding="utf-8") == "my own edits"
    assert not (tmp_path / "01_run_judging.ipynb").exists()
