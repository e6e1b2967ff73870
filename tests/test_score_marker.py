"""The ``score_marker`` rubric key and the scale's ``step``: parsing, loading, passing on."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.formats import get_format, parse_marker, parse_reply
from judgekit.rubrics import load_rubric, rubric_from_prompt_file
from judgekit.rubrics.settings import scale_from_config
from judgekit.types import Scale, Status


@pytest.mark.parametrize(
    ("text", "label", "brackets", "key"),
    [
        ("SCORE: N", "SCORE", 0, None),
        ("Rating: [[N]]", "Rating", 2, None),
        ("[[N]]", "", 2, None),
        ("[RESULT] N", "[RESULT]", 0, None),
        ("FINAL SCORE: N", "FINAL SCORE", 0, None),
        ("総合点: [[N]]", "総合点", 2, None),
        ('{"score": N}', "", 0, "score"),
    ],
)
def test_markers_are_read_as_the_prompt_writes_them(
    text: str, label: str, brackets: int, key: str | None
) -> None:
    marker = parse_marker(text)
    assert (marker.label, marker.brackets, marker.json_key) == (label, brackets, key)


@pytest.mark.parametrize("text", ["N", "Rating: [[N]", "score", "N and N", "x N y"])
def test_a_marker_that_cannot_be_read_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match="score_marker") as error:
        parse_marker(text)
    assert "\n" not in str(error.value)


def test_a_marker_is_only_for_score_line(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Rate the answer.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="score_marker is read by output_format score_line"):
        rubric_from_prompt_file(
            prompt,
            name="x",
            output_format="rating_json",
            scale=Scale((1, 2)),
            input_columns=["Answer"],
            score_marker="[[N]]",
        )


def test_the_default_marker_renders_the_packaged_prompt_unchanged() -> None:
    rubric = load_rubric("factual_accuracy")
    assert rubric.score_marker is None
    assert "on a line by itself: SCORE: [1/2/3/4]" in rubric.system_prompt()


def test_a_prompt_files_marker_reaches_the_reader(tmp_path: Path) -> None:
    prompt = tmp_path / "mt_bench.txt"
    prompt.write_text('Rate the answer 1-10 by writing "[[rating]]".\n', encoding="utf-8")
    rubric = rubric_from_prompt_file(
        prompt,
        name="mt",
        output_format="score_line",
        scale=Scale(tuple(range(1, 11))),
        input_columns=["Answer"],
        score_marker='{"rating": N}',
    )
    parsed = rubric.parse('{"explanation": "fine", "rating": 7}', ["1"])
    assert (parsed.verdicts[0].status, parsed.verdicts[0].score) == (Status.OK, 7.0)


def test_scale_steps_and_ranges() -> None:
    halves = scale_from_config({"scale": {"range": [1, 10], "step": 0.5}}, Path("c.yaml"))
    assert halves.allowed == tuple(range(1, 11))
    assert halves.accepts(8.5) and not halves.accepts(8.25) and not halves.accepts(10.5)
    assert halves.describe() == "1-10 in steps of 0.5"
    continuous = scale_from_config({"scale": {"range": [0, 1], "step": "continuous"}}, Path("c"))
    assert continuous.accepts(0.37) and not continuous.accepts(1.2)
    with pytest.raises(ValueError, match="bad 'scale' entry"):
        scale_from_config({"scale": {"range": [1, 10], "step": 2}}, Path("c.yaml"))


def test_half_points_are_read_only_when_the_scale_has_them() -> None:
    def read(scale: Scale) -> tuple[Status, str]:
        verdict = parse_reply(
            "Good.\nSCORE: 3.5", output_format="score_line", scale=scale, item_ids=["1"]
        ).verdicts[0]
        return verdict.status, verdict.reason

    assert read(Scale((1, 2, 3, 4), step=0.5))[0] is Status.OK
    status, reason = read(Scale((1, 2, 3, 4)))
    assert status is Status.OUT_OF_RANGE and "(1, 2, 3, 4)" in reason


def test_the_json_form_of_a_stepped_scale_takes_any_number() -> None:
    schema = get_format("score_line").schema(Scale((1, 2, 3), step=0.5), ["1"], ())
    assert schema["properties"]["score"] == {"type": "number"}
    whole = get_format("score_line").schema(Scale((1, 2, 3)), ["1"], ())
    assert whole["properties"]["score"]["enum"] == [1, 2, 3]
