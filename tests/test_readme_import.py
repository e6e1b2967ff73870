"""README's "Judgments made elsewhere" block, run as written on tables made here by hand."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.cli.main import main


def readme_import_commands() -> list[list[str]]:
    """The bash block of README's "Judgments made elsewhere", one command per line."""
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Judgments made elsewhere", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


@pytest.mark.notebooks
def test_the_readme_import_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two judges scored twelve answers on factual_accuracy's 1-4 scale; two people rated them.
    items = [f"q{i}" for i in range(12)]
    judged = [
        {"item": item, "judge": judge, "score": 1 + (i + shift) % 4}
        for i, item in enumerate(items)
        for judge, shift in (("gpt", 0), ("claude", i % 2))
    ]
    rated = [
        {"item": item, "rater": rater, "score": 1 + (i + shift) % 4}
        for i, item in enumerate(items)
        for rater, shift in (("ann", 0), ("ben", int(i % 3 == 0)))
    ]
    pd.DataFrame(judged).to_csv(tmp_path / "judgments.csv", index=False)
    pd.DataFrame(rated).to_csv(tmp_path / "ratings.csv", index=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "environ", {**os.environ, "JUDGEKIT_RUNS": str(tmp_path / "runs")})
    commands = readme_import_commands()
    assert [c[:2] for c in commands] == [["judgekit", "import"], ["judgekit", "report"]]
    for command in commands:
        assert main(command[1:]) == 0, shlex.join(command)
    study = tmp_path / "S"
    assert (study / "report" / "report.html").is_file()
    steps = json.loads((study / "report" / "steps.json").read_text(encoding="utf-8"))
    entries = steps if isinstance(steps, list) else list(steps.values())
    assert not [s for s in entries if isinstance(s, dict) and s.get("status") == "failed"]
