"""``import judgekit as jk``: a lazy, curated, documented namespace; it judges and loads a study."""

from __future__ import annotations

import inspect
import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
from judgekit import config, stats
from judgekit.simulator import SimulatorConfig, run_simulator


@pytest.mark.parametrize("name", jk.__all__)
def test_every_public_name_resolves_and_is_documented(name: str) -> None:
    value = getattr(jk, name)
    assert inspect.getdoc(value), f"jk.{name} has no docstring"


@pytest.mark.parametrize("name", stats.__all__)
def test_every_statistic_resolves_and_is_documented(name: str) -> None:
    assert inspect.getdoc(getattr(jk.stats, name)), f"jk.stats.{name} has no docstring"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'judge_studdy'"):
        _ = jk.judge_studdy  # type: ignore[attr-defined]


def test_every_public_statistic_of_the_stats_modules_is_exported() -> None:
    # A statistic (a function taking a long table, a pandas object or arrays) defined in a
    # public stats module and used by the notebooks is in jk.stats.
    for name in ("adjust_p", "permutation_within_clusters", "effective_judges", "pareto_front"):
        assert name in stats.__all__


def test_import_judgekit_imports_nothing_else_of_judgekit_or_pandas() -> None:
    code = (
        "import sys, judgekit\n"
        "print(sorted(m for m in sys.modules if m.startswith(('judgekit', 'pandas', 'numpy'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['judgekit']"


def test_judge_study_is_the_judge_command_and_load_study_gives_a_long_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        (f"q{i}", f"Question {i}?", f"Answer {i}", f"Answer {i}", (0, 3, 5)[i % 3])
        for i in range(1, 7)
    ]
    items = tmp_path / "items.csv"
    pd.DataFrame(rows, columns=["ID", "Question", "Answer", "Ref_Answer", "human"]).to_csv(
        items, index=False
    )
    with run_simulator(SimulatorConfig()) as sim:
        monkeypatch.setenv("OPENAI_BASE_URL", sim.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-canary-api")
        monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "simulated-judge")
        monkeypatch.setenv("TQDM_DISABLE", "1")
        err = io.StringIO()
        folder = jk.judge_study(
            items, "riddle_accuracy", study=tmp_path / "study", labels_column="human", err=err
        )
        assert list(sim.requests), "the judge was never called"
    assert folder == tmp_path / "study" and (folder / "study.json").is_file()
    study = jk.load_study(folder)
    long = study.raters()
    assert set(long["rater"]) == {"openai:simulated-judge", "human"}
    assert len(long) == 2 * len(rows)
    kappa = jk.stats.cohen_kappa(long, "human", "openai:simulated-judge")
    assert kappa["n"].iloc[0] == len(rows)


def test_judge_study_names_an_unknown_setting(tmp_path: Path) -> None:
    with pytest.raises(jk.UsageError, match=r"unknown setting\(s\) \['rns'\]"):
        jk.judge_study(tmp_path / "items.csv", "riddle_accuracy", study=tmp_path, rns=2)


def test_raters_asks_which_rubric_only_when_it_must(tmp_path: Path) -> None:
    with pytest.raises(jk.UsageError, match="was not judged"):
        study = jk.Study.__new__(jk.Study)
        object.__setattr__(study, "verdicts", pd.DataFrame({"rubric": ["a"]}))
        study.raters("b")


def test_the_readme_python_walkthrough_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The same from Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, "README's Python section has no python block"
    assert len(block.group(1).strip().splitlines()) <= 8
    rows = [(f"f{i}", f"Question {i}?", f"Answer {i}", f"Answer {i}", 1 + i % 4) for i in range(12)]
    frame = pd.DataFrame(rows, columns=["ID", "Question", "Answer", "Ref_Answer", "human"])
    frame.to_csv(tmp_path / "my_items.csv", index=False)
    monkeypatch.chdir(tmp_path)
    with run_simulator(SimulatorConfig()) as sim:
        monkeypatch.setenv("OPENAI_BASE_URL", sim.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-canary-readme-python")
        monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "simulated-judge")
        monkeypatch.setenv("TQDM_DISABLE", "1")
        exec(compile(block.group(1), "README.md", "exec"), {})
        assert list(sim.requests)
    shown = capsys.readouterr().out
    assert shown.count("estimate") == 2 and "human" in shown  # the two tidy tables printed
    assert (tmp_path / "py_study" / "study.json").is_file()
