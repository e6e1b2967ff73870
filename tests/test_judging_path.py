"""One judging path: notebook 01 and ``judgekit judge --study`` write the same study folder.

Both call :func:`judgekit.judging.judge_study.judge_study`; this runs the notebook (papermill)
and the command line (a ``python -m judgekit`` process) with the same settings against the
simulator and compares the two folders file by file, byte for byte.

Each starts from a copy of one store that a first command line run filled, so both replay
every reply and neither calls the judge: a reply's latency is measured when it is paid for
and is inherently per-run, and a replay gives the stored one to both. Left out of the
comparison is only what is per-run: the response store itself (``responses.sqlite``, which
each run opens and touches) and the two times ``study.json`` records (``written_at`` and
each command's ``at``). Everything else, including the command ``study.json`` records for the
notebook (the ``judgekit judge`` command that does the same), must be identical.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from judgekit import config
from judgekit.data import read_table
from judgekit.reporting.notebooks import NotebookRun, execute
from judgekit.simulator import SimulatorConfig, run_simulator

ITEMS = config.DATA_DIR / "demo" / "riddles_demo.csv"
RUBRICS = ("riddle_accuracy", "riddle_reasoning")


def _cli(cwd: Path, rubric: str, judges: list[str]) -> None:
    """``judgekit judge`` into ``cwd/study``, its flags in judge_study's order (as recorded)."""
    argv = ["judge", str(ITEMS), "--rubric", rubric, "--study", "study"]
    argv += [word for judge in judges for word in ("--judge", judge)]
    argv += ["--runs", "2", "--variant", "base", "--variant", "paraphrase_1"]
    argv += ["--max-tokens", "800"]
    env = {**os.environ, "PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", *argv], cwd=cwd, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()


def _without_times(manifest: dict[str, Any]) -> dict[str, Any]:
    manifest = {**manifest, "written_at": None}
    manifest["commands"] = [{**c, "at": None} for c in manifest["commands"]]
    return manifest


def _files(study: Path) -> dict[str, bytes]:
    return {
        p.relative_to(study).as_posix(): p.read_bytes()
        for p in sorted(study.rglob("*"))
        if p.is_file() and not p.name.startswith("responses.sqlite")
    }


def test_notebook_01_and_the_command_line_write_the_same_study(tmp_path: Path) -> None:
    frame = read_table(ITEMS).frame
    oracle = {str(i): float(v) for i, v in zip(frame["ID"], frame["Human_Accuracy"], strict=True)}
    simulator = SimulatorConfig(oracle=oracle, noise_rate=0.2, seed=5)
    with run_simulator(simulator) as sim:
        judges = [f"a=simulator:sim-a@{sim.base_url}", f"b=simulator:sim-b@{sim.base_url}"]
        filled = tmp_path / "fill"
        filled.mkdir()
        for rubric in RUBRICS:
            _cli(filled, rubric, judges)
        paid = len(sim.requests)
        assert paid > 0
        notebook, command = tmp_path / "notebook", tmp_path / "command"
        for where in (notebook, command):
            (where / "study").mkdir(parents=True)
            shutil.copyfile(filled / "study/responses.sqlite", where / "study/responses.sqlite")
        parameters = {
            "dataset_path": str(ITEMS),
            "rubrics": list(RUBRICS),
            "judges": judges,
            "variants": ["base", "paraphrase_1"],
            "runs": 2,
            "max_tokens": 800,
            "output_dir": "study",
        }
        run = NotebookRun(
            "01_run_judging", config.NOTEBOOKS_DIR / "01_run_judging.ipynb", parameters
        )
        execute(run, notebook)
        for rubric in RUBRICS:
            _cli(command, rubric, judges)
        assert len(sim.requests) == paid, "a replay called the judge: the requests differ"
    ours, theirs = _files(notebook / "study"), _files(command / "study")
    assert sorted(ours) == sorted(theirs)
    assert {"items.csv", "judgments.parquet", "human_labels.parquet"} <= set(ours)
    assert len([name for name in ours if name.startswith("scores/")]) >= 2 * 2 * 2 * 2
    manifests = [json.loads(files.pop("study.json")) for files in (ours, theirs)]
    assert _without_times(manifests[0]) == _without_times(manifests[1])
    assert manifests[0]["commands"][0]["command"].startswith("judgekit judge ")
    for name in ours:
        assert ours[name] == theirs[name], name
