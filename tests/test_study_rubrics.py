"""The study carries its rubric: an own prompt file or folder is kept, hashed and given back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.rubrics import PromptRubric, load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.study.folder import StudyFolder, load_study
from judgekit.study.record import keep_rubric
from judgekit.study.rubrics import study_rubric
from judgekit.types import UsageError

PROMPT = (
    "You judge whether each answer is factually accurate, on a scale of 1 to 4.\n"
    'End with a line "SCORE: N".\n'
)
SETTINGS = "output_format: score_line\nscale: {range: [1, 4]}\ncolumns: [Question, Answer]\n"


def _own_prompt(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    prompt = folder / "accuracy.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    prompt.with_suffix(".yaml").write_text(SETTINGS, encoding="utf-8")
    (folder / "items.csv").write_text(
        "ID,Question,Answer\n1,Capital of France?,Paris\n2,Largest planet?,Saturn\n",
        encoding="utf-8",
    )
    return prompt


def test_a_judged_study_gives_back_its_own_prompt_checked_after_the_original_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    prompt = _own_prompt(tmp_path / "mine")
    study = tmp_path / "study"
    with run_simulator(SimulatorConfig()) as sim:
        args = ["judge", str(prompt.parent / "items.csv"), "--rubric", str(prompt),
                "--provider", "simulator", "--base-url", sim.base_url, "--model", "m",
                "--no-labels", "--study", str(study)]  # fmt: skip
        assert main(args) == 0
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    kept = manifest["judged"][0]["settings"]["rubric"]
    assert kept["source"].startswith("rubrics/accuracy-") and kept["source"].endswith(".txt")
    assert sorted(Path(p).name for p in kept["sha256"]) == ["accuracy.txt", "accuracy.yaml"]
    for relative, digest in kept["sha256"].items():
        assert hashlib.sha256((study / relative).read_bytes()).hexdigest() == digest
    prompt.write_text("edited after judging\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown rubric 'accuracy'"):
        load_rubric("accuracy")  # what the notebooks did, and failed with

    rubric = load_study(study).rubric("accuracy")
    assert isinstance(rubric, PromptRubric)
    assert rubric.template.text == PROMPT.rstrip("\n") and rubric.scale.allowed == (1, 2, 3, 4)

    copy = study / kept["source"]
    copy.write_text(PROMPT.replace("accurate", "fluent"), encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        load_study(study).rubric("accuracy")
    message = str(refused.value)
    assert "\n" not in message and f"{copy} changed since" in message and "SHA-256" in message
    assert main(["report", str(study)]) == 2  # refused before any notebook starts
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"error: {message}"
    assert not (study / "report" / "steps.json").exists()


def _manifest(root: Path, judged: list[dict[str, object]]) -> StudyFolder:
    root.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"judgekit": "0", "layout": 2, "judged": judged})
    (root / "study.json").write_text(text, encoding="utf-8")
    return StudyFolder(root)


def test_an_old_study_without_records_still_finds_a_packaged_rubric_and_names_a_missing_one(
    tmp_path: Path,
) -> None:
    old = [{"rubric": "factual_accuracy", "judge": "m", "combinations": []}]
    folder = _manifest(tmp_path / "old", old)
    assert study_rubric(folder, "factual_accuracy").name == "factual_accuracy"
    with pytest.raises(UsageError) as refused:
        study_rubric(folder, "helpfulness")
    assert "\n" not in str(refused.value) and "records no copy of it" in str(refused.value)


def test_the_latest_command_s_copy_wins_and_a_deleted_copy_is_named(tmp_path: Path) -> None:
    study = tmp_path / "study"
    study.mkdir()
    prompt = _own_prompt(tmp_path / "mine")
    first = keep_rubric(str(prompt), study)
    prompt.write_text(PROMPT.replace("1 to 4", "1 to 3"), encoding="utf-8")
    prompt.with_suffix(".yaml").write_text(SETTINGS.replace("4]", "3]"), encoding="utf-8")
    second = keep_rubric(str(prompt), study)
    assert first != second  # the copy is named by its content: both are kept
    entries = [
        {"rubric": "accuracy", "judge": j, "combinations": [{"command": c}],
         "settings": {"rubric": {"source": s}}}
        for j, c, s in (("a", 2, second), ("b", 1, first))
    ]  # fmt: skip
    folder = _manifest(study, entries)
    assert study_rubric(folder, "accuracy").scale.allowed == (1, 2, 3)
    (study / second).unlink()
    with pytest.raises(UsageError, match="the study's copy of it, is missing"):
        study_rubric(folder, "accuracy")


def test_a_prompt_is_kept_with_its_settings_and_variants_but_not_its_neighbours(
    tmp_path: Path,
) -> None:
    prompt = _own_prompt(tmp_path / "mine")
    prompt.with_name("accuracy.paraphrase_1.txt").write_text(PROMPT, encoding="utf-8")
    prompt.with_name("accuracy.csv").write_text("ID\n1\n", encoding="utf-8")
    prompt.with_name("accuracy_v2.txt").write_text(PROMPT, encoding="utf-8")
    study = tmp_path / "study"
    kept = keep_rubric(str(prompt), study)
    names = sorted(p.name for p in (study / kept).parent.iterdir())
    assert names == ["accuracy.paraphrase_1.txt", "accuracy.txt", "accuracy.yaml"]


def test_a_recorded_copy_outside_the_study_s_rubrics_folder_is_refused(tmp_path: Path) -> None:
    prompt = _own_prompt(tmp_path / "elsewhere")  # e.g. a bundle's study.json pointing out
    study = tmp_path / "study"
    outside = f"../{prompt.parent.name}/{prompt.name}"
    entries = [{"rubric": "accuracy", "judge": "a", "combinations": [{"command": 1}],
                "settings": {"rubric": {"source": outside}}}]  # fmt: skip
    with pytest.raises(UsageError, match="not in the study's rubrics/ folder"):
        study_rubric(_manifest(study, entries), "accuracy")
