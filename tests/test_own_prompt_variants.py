"""Own prompts have variants (``NAME.VARIANT.txt`` or ``variants:``); a rubric folder says what
judgekit adds and appends the format's reminder only when asked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgekit.cli.main import main
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item

SETTINGS = "output_format: score_line\nscale: {range: [1, 5]}\nscore_marker: 'Rating: [[N]]'\n"
ITEM = Item("1", {"Question": "Q?", "Answer": "A."})


def _prompt(folder: Path, settings: str = SETTINGS) -> Path:
    prompt = folder / "mine.txt"
    prompt.write_text("Judge {answer} to {question}. End with Rating: [[N]].", encoding="utf-8")
    prompt.with_suffix(".yaml").write_text(settings, encoding="utf-8")
    return prompt


def _user(rubric: object, variant: str) -> str:
    return rubric.render([ITEM], variant=variant)[-1]["content"]  # type: ignore[attr-defined]


def test_a_file_beside_the_prompt_is_its_variant(tmp_path: Path) -> None:
    prompt = _prompt(tmp_path)
    (tmp_path / "mine.paraphrase_1.txt").write_text(
        "Grade the answer {answer} given to {question}; close with Rating: [[N]].",
        encoding="utf-8",
    )
    rubric = load_rubric(prompt)
    assert rubric.variants == ("base", "paraphrase_1")
    assert _user(rubric, "base") == "Judge A. to Q?. End with Rating: [[N]]."
    assert (
        _user(rubric, "paraphrase_1")
        == "Grade the answer A. given to Q?; close with Rating: [[N]]."
    )
    with pytest.raises(ValueError, match="has no variant 'paraphrase_2'"):
        _user(rubric, "paraphrase_2")


def test_the_sidecar_lists_or_maps_the_variants(tmp_path: Path) -> None:
    (tmp_path / "other.txt").write_text("Rate {question} / {answer}: Rating: [[N]]", "utf-8")
    (tmp_path / "mine.short.txt").write_text("{question} {answer} Rating: [[N]]", "utf-8")
    (tmp_path / "mine.unlisted.txt").write_text("{question} {answer}", "utf-8")
    listed = load_rubric(_prompt(tmp_path, SETTINGS + "variants: [short]\n"))
    assert listed.variants == ("base", "short")
    mapped = load_rubric(_prompt(tmp_path, SETTINGS + "variants: {reworded: other.txt}\n"))
    assert _user(mapped, "reworded") == "Rate Q? / A.: Rating: [[N]]"
    with pytest.raises(ValueError, match=r"variant 'gone' has no file .*mine\.gone\.txt"):
        load_rubric(_prompt(tmp_path, SETTINGS + "variants: [gone]\n"))


def test_a_variant_with_other_placeholders_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.paraphrase_1.txt").write_text("Judge {answer} only.", "utf-8")
    with pytest.raises(
        ValueError,
        match=r"mine\.paraphrase_1\.txt: a variant rephrases .* with "
        r"the same placeholders \(answer, question\); it has answer",
    ):
        load_rubric(_prompt(tmp_path))


def test_variants_of_an_own_prompt_run_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    prompt = _prompt(tmp_path)
    (tmp_path / "mine.paraphrase_1.txt").write_text(
        "Grade {answer} (asked: {question}). Rating: [[N]]", encoding="utf-8"
    )
    items = tmp_path / "items.csv"
    items.write_text("ID,Question,Answer\n1,Q1?,A1\n2,Q2?,A2\n", encoding="utf-8")
    out = tmp_path / "o.csv"
    with run_simulator(SimulatorConfig(seed=2)) as sim:
        args = [
            "judge", str(items), "--rubric", str(prompt), "--provider", "simulator",
            "--base-url", sim.base_url, "--model", "sim", "--output", str(out), "--no-labels",
            "--variant", "base", "--variant", "paraphrase_1",
        ]  # fmt: skip
        assert main(args) == 0
        sent = {r.body["messages"][-1]["content"].split(" ")[0] for r in sim.requests}
    table = pd.read_csv(out)
    assert sorted(set(table["variant"])) == ["base", "paraphrase_1"]
    assert set(table["status"]) == {"ok"} and len(table) == 4
    assert sent == {"Judge", "Grade"}


def _folder(tmp_path: Path, extra: str = "") -> Path:
    folder = tmp_path / "my_rubric"
    (folder / "variants").mkdir(parents=True)
    (folder / "config.yaml").write_text(
        "name: my_rubric\noutput_format: score_line\nscale: {allowed: [1, 2, 3]}\n"
        f"input_columns: [Question, Answer]\nvariants: [base]\n{extra}",
        encoding="utf-8",
    )
    (folder / "variants" / "base.j2").write_text(
        "You grade answers 1-3. Write a paragraph, then Score: N.\n", encoding="utf-8"
    )
    return folder


def test_a_rubric_folder_gets_the_items_and_no_reminder_unless_asked(tmp_path: Path) -> None:
    rubric = load_rubric(_folder(tmp_path))
    system, user = (m["content"] for m in rubric.render([ITEM]))
    assert system == "You grade answers 1-3. Write a paragraph, then Score: N."
    assert user.endswith("</item>") and "one-sentence explanation" not in user
    assert rubric.additions(structured=False) == (
        "a user message holding the items (a header line, one <item> block each)",
    )
    reminded = load_rubric(_folder(tmp_path / "b", "format_reminder: true\n"))
    user = reminded.render([ITEM])[-1]["content"]
    assert user.endswith("then the line SCORE: N on its own line.")
    assert any("reminder" in added for added in reminded.additions(structured=False))
