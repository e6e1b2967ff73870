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
from judgekit.types import UsageError
from judgekit.workflows.analysis_bundle import rerun_analysis

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
