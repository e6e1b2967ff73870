"""A bundle is data: its steps cannot name a notebook, a parameter or a path of their own.

``judgekit verify`` re-executes an analysis bundle's ``report/steps.json`` with the checkout's
notebooks; every step below is refused in one line before any notebook runs (issue 38).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from judgekit import config
from judgekit.sharing.analysis_bundle import rerun_analysis
from judgekit.types import UsageError

BUNDLE = config.DATA_DIR / "bundles" / "riddles-study"


def steps() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((BUNDLE / "report" / "steps.json").read_text())
    return loaded


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"notebook": "../../../tmp/evil"}, "not a notebook run name"),
        ({"notebook": "99_no_such_notebook"}, "no notebook"),
        ({"parameters": {"x\nimport os; os.system('id')\ny": 1}}, "not a Python identifier"),
        ({"parameters": {"riddles_scores_path": 3}}, "`riddles_scores_path` must be str"),
        ({"parameters": {"output_dir": "../../../../outside"}}, "points outside the bundle"),
        ({"parameters": {"figures_dir": "/tmp/figures"}}, "points outside the bundle"),
        ({"parameters": {"riddles_scores_path": "/etc/passwd"}}, "points outside the bundle"),
    ],
)
def test_a_hostile_step_is_refused_before_anything_runs(
    change: dict[str, Any], message: str, tmp_path: Path
) -> None:
    root = tmp_path / "bundle"
    shutil.copytree(BUNDLE, root)
    hostile = steps()
    hostile[1] = {**hostile[1], **change}
    with pytest.raises((UsageError, FileNotFoundError), match=message) as caught:
        rerun_analysis(root, hostile, io.StringIO())
    assert "\n" not in str(caught.value)
    assert not list((root / "report").glob("*.ipynb"))  # the first, good step did not run


@pytest.mark.notebooks
def test_hostile_notebooks_in_a_bundle_are_never_run_and_change_no_verdict(
    tmp_path: Path,
) -> None:
    import nbformat

    from judgekit.sharing.export import MANIFEST, sha256_file, study_files
    from judgekit.sharing.verify import verify_bundle

    root = tmp_path / "bundle"
    shutil.copytree(BUNDLE, root)
    marker = tmp_path / "pwned"
    for step in steps():  # a notebook of the bundle's own under each step's name
        hostile = nbformat.v4.new_notebook()
        hostile.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').write('ran')"))
        nbformat.write(hostile, root / "report" / f"{step['notebook']}.ipynb")
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"] = {
        p.as_posix(): {"sha256": sha256_file(root / p), "bytes": (root / p).stat().st_size}
        for p in study_files(root)
        if p.as_posix() != MANIFEST
    }
    (root / MANIFEST).write_text(json.dumps(manifest))
    result = verify_bundle(root, io.StringIO(), html=tmp_path / "verified.html")
    assert result.problems == []
    assert not marker.exists()
    page = (tmp_path / "verified.html").read_text(encoding="utf-8")
    assert str(marker) not in page  # the page shows the checkout's notebooks, run again
