"""Build a direct-scoring study in a test: the demo riddles judged in-process by the simulator.

``make_direct_study(root)`` judges ``data/demo/riddles_demo.csv`` (24 answers to 8 riddles,
each labelled by a human in ``Human_Accuracy``) with ``riddle_accuracy`` against a simulator
that scores from those labels with some noise, so runs and variants disagree a little. The
study's ``question`` column groups the answers to one riddle. No process is started.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgekit import config
from judgekit.cli.main import main
from judgekit.data import read_table
from judgekit.simulator import SimulatorConfig, run_simulator

ITEMS = config.DATA_DIR / "demo" / "riddles_demo.csv"
RUBRIC = "riddle_accuracy"


def make_direct_study(
    root: Path, *, runs: int = 1, variants: Sequence[str] = ("base",), labels: bool = True
) -> Path:
    """Judge the demo riddles into the study folder ``root`` and return it."""
    frame = read_table(ITEMS).frame
    oracle = {str(i): float(v) for i, v in zip(frame["ID"], frame["Human_Accuracy"], strict=True)}
    simulator = SimulatorConfig(oracle=oracle, noise_rate=0.15, seed=11, model="sim-judge")
    with run_simulator(simulator) as sim:
        args = ["judge", str(ITEMS), "--rubric", RUBRIC, "--provider", "simulator",
                "--base-url", sim.base_url, "--model", "sim-judge", "--study", str(root),
                "--runs", str(runs), *(a for v in variants for a in ("--variant", v)),
                *([] if labels else ["--no-labels"])]  # fmt: skip
        assert main(args) == 0
    return root
