"""README's own-study walkthrough, run as written against the simulator (so it cannot drift).

The items file is made here, by hand, as a user would: it is not shipped with the project.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.simulator import SimulatorConfig, run_simulator

ROWS = [
    ("f1", "What is the capital of Australia?", "Sydney", "Canberra", "model-a", 1),
    ("f2", "How many bones does an adult human have?", "206", "206 bones", "model-b", 4),
    ("f3", "Who painted the Mona Lisa?", "Leonardo da Vinci", "Leonardo da Vinci", "model-a", 4),
    ("f4", "What is the chemical symbol of gold?", "Ag", "Au", "model-b", 1),
    ("f5", "In which year did Apollo 11 land on the Moon?", "1969", "1969", "model-a", 4),
    ("f6", "What is the freezing point of water in Fahrenheit?", "30 F", "32 F", "model-b", 2),
    ("f7", "Which is the longest river in South America?", "The Amazon", "Amazon", "model-a", 4),
    ("f8", "How many continents are there?", "Seven", "7 (by the usual count)", "model-b", 4),
    ("f9", "What is the speed of sound in air, roughly?", "343 m/s", "about 343 m/s", "model-a", 3),
    ("f10", "Who proposed general relativity?", "Newton", "Albert Einstein", "model-b", 1),
]


def walkthrough_commands() -> list[list[str]]:
    """The bash block of README's "A study in five commands", one command per line."""
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A study in five commands", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "README's own-study section has no bash block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def as_subprocess(command: list[str]) -> list[str]:
    assert command[0] == "judgekit", command
    return [sys.executable, "-m", "judgekit", *command[1:]]


def run_cli(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        as_subprocess(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    frame = pd.DataFrame(ROWS, columns=["ID", "Question", "Answer", "Ref_Answer", "Model", "human"])
    frame.to_csv(tmp_path / "my_items.csv", index=False)
    return tmp_path


def environment(base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    return {
        **env,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "test-canary-walkthrough",
        "JUDGEKIT_JUDGE_MODEL": "simulated-judge",
        "PYTHONPATH": os.pathsep.join([str(config.ROOT), env.get("PYTHONPATH", "")]),
        "TQDM_DISABLE": "1",
    }


@pytest.mark.notebooks
def test_readme_walkthrough_runs_as_written(study_dir: Path) -> None:
    commands = walkthrough_commands()
    assert [c[1] for c in commands] == ["rubrics", "judge", "judge", "judge", "report"]
    references = {row[0]: row[3] for row in ROWS}
    with run_simulator(SimulatorConfig()) as sim:
        env = environment(sim.base_url)
        for command in commands:
            before = len(list(sim.requests))
            result = run_cli(command, study_dir, env)
            assert result.returncode == 0, result.stderr
            assert "Traceback" not in result.stderr + result.stdout
            if "--dry-run" in command:
                assert len(list(sim.requests)) == before, "a dry run called the judge"
                assert "<Ref_Answer>Canberra</Ref_Answer>" in result.stdout
            if "--judge" in command:  # the second judge: only its own requests are sent
                added = list(sim.requests)[before:]
                assert len(added) == len(ROWS), result.stderr
                assert {r.body["model"] for r in added} == {"gpt-4.1-mini"}
        requests = list(sim.requests)
    # two runs of two variants by the first judge, then one by the second; one item per request
    assert len(requests) == len(ROWS) * 2 * 2 + len(ROWS)
    for request in requests:
        user = request.body["messages"][-1]["content"]
        (item_id,) = re.findall(r'<item id="([^"]+)">', user)
        assert f"<Ref_Answer>{references[item_id]}</Ref_Answer>" in user
    study = study_dir / "my_study"
    executed = sorted(p.name for p in (study / "report").glob("*.ipynb"))
    panel = sorted(p.name for p in config.NOTEBOOKS_DIR.glob("09_*.ipynb"))  # two judges: 09 too
    assert executed == [
        "02_human_agreement.ipynb",
        "03_run_consistency.ipynb",
        "04_paraphrase_sensitivity.ipynb",
        "05_distributions_and_bias.ipynb",
        *panel,
    ]
    table = pd.read_parquet(study / "judgments.parquet")
    assert table.groupby("judge")["item_id"].size().to_dict() == {
        "mini": len(ROWS),
        "openai:simulated-judge": len(ROWS) * 2 * 2,
    }
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    assert [c["judges"] for c in manifest["commands"]] == [["openai:simulated-judge"], ["mini"]]
    assert len(pd.read_parquet(study / "human_labels.parquet")) == len(ROWS)
    assert pd.read_csv(study / "items.csv")["Ref_Answer"].tolist() == [r[3] for r in ROWS]
    assert list((study / "report" / "figures").glob("*.png"))
    # no judge paired with an answering model: a table with its header, and the reason
    self_preference = pd.read_csv(
        study / "report/tables/distributions_and_bias/self_preference.csv"
    )
    assert self_preference.empty and {"judge", "method", "estimate"} <= set(self_preference.columns)


def test_unreachable_endpoint_fails_in_one_line(study_dir: Path) -> None:
    judge = next(c for c in walkthrough_commands() if c[1] == "judge" and "--dry-run" not in c)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = run_cli(judge, study_dir, environment(url))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: cannot reach the judge at " + url), result.stderr
    assert "Traceback" not in result.stderr
    assert not (study_dir / "my_study" / "judgments.parquet").exists()


def test_output_equal_to_the_items_file_is_refused_before_any_call(study_dir: Path) -> None:
    items = study_dir / "my_items.csv"
    original = items.read_bytes()
    judge = ["judgekit", "judge", "my_items.csv", "--rubric", "factual_accuracy"]
    with run_simulator(SimulatorConfig()) as sim:
        result = run_cli([*judge, "--output", "my_items.csv"], study_dir, environment(sim.base_url))
        assert not list(sim.requests)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "error: --output my_items.csv is the items file; choose another name"
    )
    assert items.read_bytes() == original
