"""`judgekit judge` loads no plotting, statistics-heavy or widget library (seconds, MBs a run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from judgekit import config
from judgekit.simulator import run_simulator

HEAVY = ("seaborn", "matplotlib", "scipy", "ppi_py", "ipywidgets", "statsmodels", "sklearn")

_PROGRAM = f"""
import json, sys
from judgekit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({{"code": code, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def test_judging_imports_no_plotting_or_widget_library(tmp_path) -> None:
    items = tmp_path / "items.csv"
    items.write_text("ID,Question,Answer,Ref_Answer\n1,Q?,A,R\n2,Q2?,B,R\n", encoding="utf-8")
    with run_simulator() as sim:
        arguments = [
            "judge", str(items), "--rubric", "riddle_accuracy", "--study", str(tmp_path / "s"),
            "--model", "sim-judge", "--base-url", sim.base_url, "--provider", "simulator",
        ]  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", _PROGRAM, *arguments],
            env={**os.environ, "PYTHONPATH": str(config.ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}, done.stderr
