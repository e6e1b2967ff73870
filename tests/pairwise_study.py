"""Build a pairwise study in a test: a pairs file judged in-process against the simulator.

``make_pairwise_study(tmp_path)`` writes ``pairs.csv`` (ID, Question, Answer_A, Answer_B,
Model_A, Model_B, Human_Winner), judges it with ``judgekit judge --rubric mtbench_pairwise``
against a simulator whose position bias is ``position`` (both orders by default) and returns
the study folder. Importable from tests as ``from pairwise_study import make_pairwise_study``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.cli.main import main
from judgekit.simulator import SimulatorConfig, run_simulator

MODELS = ("alpha", "beta", "gamma", "delta")


def write_pairs(path: Path, n_pairs: int = 12, seed: int = 0, *, labels: bool = True) -> Path:
    """A pairs file of ``n_pairs`` pairs among :data:`MODELS`, answers of varied length."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_pairs):
        a, b = rng.choice(len(MODELS), size=2, replace=False)
        rows.append(
            {
                "ID": f"p{k + 1}",
                "Question": f"Question {k + 1}: explain topic {k % 5}.",
                "Answer_A": f"Answer by {MODELS[a]} to {k + 1}. "
                + "detail " * int(rng.integers(1, 40)),
                "Answer_B": f"Answer by {MODELS[b]} to {k + 1}. "
                + "detail " * int(rng.integers(1, 40)),
                "Model_A": MODELS[a],
                "Model_B": MODELS[b],
                "Human_Winner": ["A", "B", "tie"][int(rng.integers(0, 3))],
            }
        )
    frame = pd.DataFrame(rows)
    (frame if labels else frame.drop(columns="Human_Winner")).to_csv(path, index=False)
    return path


def make_pairwise_study(
    tmp_path: Path,
    *,
    n_pairs: int = 12,
    position: float = 0.0,
    orders: str = "both",
    rubric: str = "mtbench_pairwise",
    extra: Sequence[str] = (),
    name: str = "study",
) -> Path:
    """Judge a fresh pairs file into ``tmp_path / name`` and return that study folder.

    Raises:
        AssertionError: When ``judgekit judge`` does not exit 0.
    """
    items = write_pairs(tmp_path / "pairs.csv", n_pairs)
    study = tmp_path / name
    with run_simulator(SimulatorConfig(position_bias=position)) as sim:
        code = main(
            [
                "judge", str(items), "--rubric", rubric, "--study", str(study),
                "--provider", "simulator", "--model", "sim-judge", "--base-url", sim.base_url,
                "--orders", orders, *extra,
            ]
        )  # fmt: skip
    assert code == 0, f"judgekit judge exited {code}"
    return study
