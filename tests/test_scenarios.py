"""A researcher's own study, judge to verified bundle, whatever it holds (a covering design).

Four factors: the rubric (packaged ``factual_accuracy``, an own prompt file, an own rubric
folder), the human labels (none, the items' label column, ``labels.csv`` written by
``judgekit label``'s session), the judges (one, a panel of two) and the runs (one, two). The
full factorial (36 studies, each a papermill report and a verify) is too slow for CI; the nine
cells below are an orthogonal array L9(3^4) with the judge and run factors folded to two levels,
so every PAIR of factor levels appears in at least one cell
(:func:`test_the_cells_cover_every_pair_of_levels` checks it). Each cell runs, through the CLI
against the simulator: ``judge`` → ``report --html`` → ``export`` → ``verify`` of the bundle
copied to another folder, and requires exit 0 at each, the HTML report, every applicable
notebook ``ran`` in ``steps.json``, every other one ``skipped`` with its reason, and each part
a notebook skipped named in one line with its reason.

The own prompt has no placeholders (its items go in judgekit's ``<item>`` blocks) and answers
with ``SCORE: N``, which the simulator reads today.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

from judgekit.cli.main import main
from judgekit.simulator import SimulatorConfig, SimulatorHandle, run_simulator
from judgekit.study.folder import load_study
from judgekit.study.labelling import LabelOptions, label_session

N_ITEMS = 12
KEY = "sim-key-for-scenarios"
RUBRICS = ("packaged", "prompt_file", "rubric_folder")
LABELS = ("none", "column", "tool")
JUDGES = ("one", "panel")
RUNS = (1, 2)


class Cell(NamedTuple):
    """One study of the matrix."""

    rubric: str
    labels: str
    judges: str
    runs: int


def _l9() -> list[Cell]:
    """L9(3^4); the third level of the judge and run factors folds onto their first."""
    rows = [(a, b, (a + b) % 3, (a + 2 * b) % 3) for a in range(3) for b in range(3)]
    return [Cell(RUBRICS[a], LABELS[b], JUDGES[c % 2], RUNS[d % 2]) for a, b, c, d in rows]


CELLS = _l9()


def test_the_cells_cover_every_pair_of_levels() -> None:
    levels = (RUBRICS, LABELS, JUDGES, RUNS)
    for i, j in combinations(range(4), 2):
        seen = {(cell[i], cell[j]) for cell in CELLS}
        assert seen == {(x, y) for x in levels[i] for y in levels[j]}, (i, j)
    assert len(CELLS) == 9


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[SimulatorHandle, SimulatorHandle]]:
    """Two simulated judges that disagree now and then (two seeds, some noise)."""
    with ExitStack() as stack:
        yield tuple(  # type: ignore[misc]
            stack.enter_context(
                run_simulator(SimulatorConfig(api_key=KEY, model="m", seed=s, noise_rate=0.3))
            )
            for s in (1, 2)
        )


def _items(path: Path) -> Path:
    """Six questions with two answers each, three answering models, a 1-4 human score."""
    rng = np.random.default_rng(11)
    rows = [
        {
            "ID": f"q{i // 2}a{i % 2}",
            "Question": f"What is fact number {i // 2}?",
            "Answer": f"Fact {i // 2} is " + "quite " * int(rng.integers(0, 12)) + "so.",
            "Model": ("alpha", "beta", "gamma")[i % 3],
            "Human": int(rng.integers(1, 5)),
        }
        for i in range(N_ITEMS)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _rubric(kind: str, folder: Path) -> str:
    """The ``--rubric`` of a cell, written outside the study as a researcher keeps it."""
    if kind == "packaged":
        return "factual_accuracy"
    if kind == "prompt_file":
        prompt = folder / "accuracy.txt"
        prompt.write_text(
            "You judge whether each answer to its question is factually accurate, on a scale "
            'of 1 to 4.\nExplain in one sentence, then end with a line "SCORE: N".\n',
            encoding="utf-8",
        )
        prompt.with_suffix(".yaml").write_text(
            "output_format: score_line\nscale: {range: [1, 4]}\ncolumns: [Question, Answer]\n",
            encoding="utf-8",
        )
        return str(prompt)
    rubric = folder / "my_accuracy"
    (rubric / "variants").mkdir(parents=True)
    (rubric / "config.yaml").write_text(
        "name: my_accuracy\noutput_format: score_line\nscale: {allowed: [1, 2, 3, 4]}\n"
        "input_columns: [Question, Answer]\nvariants: [base]\n",
        encoding="utf-8",
    )
    (rubric / "variants" / "base.j2").write_text(
        '{% extends "common/system.j2" %}\n{% block role %}\n'
        "You grade the factual accuracy of answers 1-4.\n{% endblock %}\n",
        encoding="utf-8",
    )
    return str(rubric)


def _label_with_the_tool(study: Path, items: Path) -> None:
    """Label every planned item as ``judgekit label``'s page does (its session, its file)."""
    session, _ = label_session(load_study(study), LabelOptions("ann", n=N_ITEMS))
    human = pd.read_csv(items).set_index("ID")["Human"]
    for position, item_id in enumerate(session.ids):
        session.record(position, "ok", float(human[item_id]))


def _expected(cell: Cell) -> set[str]:
    """The report notebooks that apply to the cell's study (all others must be skipped)."""
    labelled = cell.labels != "none"
    ran = {"05_distributions_and_bias"}
    ran |= {"02_human_agreement"} if labelled else set()
    ran |= {"03_run_consistency"} if cell.runs == 2 else set()
    ran |= {"08_human_labels"} if cell.labels == "tool" else set()
    ran |= {"09_judge_panel"} if cell.judges == "panel" and labelled else set()
    return ran


@pytest.mark.notebooks
@pytest.mark.timeout(1800)  # one cell: a judge, up to five notebooks and their re-run by verify
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: "-".join(map(str, c)))
def test_an_own_study_goes_from_judge_to_a_verified_bundle(
    cell: Cell,
    tmp_path: Path,
    servers: tuple[SimulatorHandle, SimulatorHandle],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGEKIT_JUDGE_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("JUDGEKIT_SIMULATOR_API_KEY", KEY)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    mine = tmp_path / "researcher"
    mine.mkdir()
    items, study = _items(mine / "items.csv"), tmp_path / "study"
    count = 2 if cell.judges == "panel" else 1
    judges = [f"--judge=j{n}=simulator:judge-{n}@{servers[n].base_url}" for n in range(count)]
    labels = ["--labels-column", "Human"] if cell.labels == "column" else ["--no-labels"]
    args = ["judge", str(items), "--rubric", _rubric(cell.rubric, mine), "--study", str(study)]
    args += [*labels, *judges, "--runs", str(cell.runs), "--max-unscored", str(N_ITEMS)]
    assert main(args) == 0
    if cell.labels == "tool":
        _label_with_the_tool(study, items)
    shutil.rmtree(mine)  # the study carries its rubric: nothing later reads the original

    assert main(["report", str(study), "--html"]) == 0
    assert (study / "report" / "report.html").is_file()
    steps = json.loads((study / "report" / "steps.json").read_text(encoding="utf-8"))
    status = {step["notebook"]: step["status"] for step in steps}
    assert {name for name, s in status.items() if s == "ran"} == _expected(cell), status
    for step in steps:
        assert step["status"] in ("ran", "skipped"), step
        assert (step["status"] == "skipped") == bool(step["skipped"]), step
        for line in step.get("skipped_parts", []):
            assert line.startswith("skipped ") and ": " in line and "\n" not in line, line

    bundle = tmp_path / "study.zip"
    assert main(["export", str(study), "-o", str(bundle)]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(bundle, elsewhere / bundle.name)
    monkeypatch.chdir(elsewhere)
    assert main(["verify", bundle.name]) == 0
