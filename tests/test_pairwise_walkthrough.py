"""README's pairwise walkthrough, run as written against a position-biased simulated judge.

The pairs file is made here, as a user would write one; the simulator's judge prefers the
answer shown first, so the report must show that bias, the pairs that flip under swap and a
Bradley-Terry forest (issue 33's "done means").
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_study_walkthrough import environment, run_cli

from judgekit import config
from judgekit.simulator import SimulatorConfig, run_simulator

MODELS = ("alpha-7b", "beta-13b", "gamma-70b", "delta-8b")


def pairwise_commands() -> list[list[str]]:
    """The bash block of README's pairwise section, one command per line."""
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Two answers compared", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "README's pairwise section has no bash block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def write_pairs(folder: Path, n: int = 40) -> None:
    rng = np.random.default_rng(5)
    rows = []
    for k in range(n):
        a, b = rng.choice(MODELS, size=2, replace=False)
        rows.append({
            "ID": f"p{k}", "Question": f"Explain idea number {k} briefly.",
            "Answer_A": f"{a} explains idea {k}: " + "detail " * int(rng.integers(1, 30)),
            "Answer_B": f"{b} explains idea {k}: " + "point " * int(rng.integers(1, 30)),
            "Model_A": a, "Model_B": b, "Human_Winner": str(rng.choice(["A", "B", "tie"])),
        })  # fmt: skip
    pd.DataFrame(rows).to_csv(folder / "pairs.csv", index=False)


@pytest.mark.notebooks
def test_readme_pairwise_walkthrough_runs_as_written(tmp_path: Path) -> None:
    commands = pairwise_commands()
    assert len(commands) <= 5 and [c[1] for c in commands] == ["judge"] * 3 + ["report"]
    write_pairs(tmp_path)
    with run_simulator(SimulatorConfig(position_bias=2.0)) as sim:
        for command in commands:
            before = len(list(sim.requests))
            result = run_cli(command, tmp_path, environment(sim.base_url))
            assert result.returncode == 0, result.stderr
            assert "Traceback" not in result.stderr + result.stdout
            if "--dry-run" in command:
                assert len(list(sim.requests)) == before, "a dry run called the judge"
        requests = len(list(sim.requests))
    assert requests == 40 * 2 * 2 + 40 * 2  # both orders: two runs, then the second judge
    report = tmp_path / "P" / "report"
    assert (report / "report.html").is_file()
    assert (report / "figures" / "pairwise_bradley_terry.png").is_file()
    summary = pd.read_csv(report / "tables" / "pairwise_summary.csv")
    assert len(summary) == 3 and summary["accuracy"].notna().all()  # 2 runs + 1 judge
    bias = pd.read_csv(report / "tables" / "pairwise" / "position_bias.csv")
    first = bias[bias["method"] == "first-position win rate"]
    assert (first["ci_low"] > 0.5).all(), first  # the simulated bias, recovered
    shares = pd.read_csv(report / "tables" / "pairwise" / "outcome_shares.csv")
    assert (shares.loc[shares["outcome"] == "inconsistent", "estimate"] > 0.1).all()


def test_a_second_command_keeps_the_pairwise_verdicts(tmp_path: Path) -> None:
    from judgekit.data import write_table
    from judgekit.study.accumulate import merged_labels
    from judgekit.study.folder import StudyFolder

    labels = pd.DataFrame(
        {
            "item_id": ["p0", "p1"],
            "rubric": "mtbench_pairwise",
            "answer_model": "",
            "score": np.nan,
            "verdict": ["a", "tie"],
        }
    )
    write_table(labels, StudyFolder(tmp_path).human_labels)
    again = merged_labels(tmp_path, labels.iloc[:1].assign(verdict="b"))  # p0 relabelled
    assert again.set_index("item_id")["verdict"].to_dict() == {"p1": "tie", "p0": "b"}
