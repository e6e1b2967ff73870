"""Single-item formats: rating JSON (seed 002), SCORE lines (004), direct scoring (003)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from judgekit.formats import TRUNCATION_HINT, parse_reply
from judgekit.types import Criterion, ParsedReply, Scale, Status

EXTENT = Scale(allowed=tuple(range(11)), abstain=(-1,))
FACTUAL = Scale(allowed=(1, 2, 3, 4))
OVERALL = Scale(allowed=(1, 2, 3, 4, 5))
CRITERIA = (
    Criterion("Accuracy", 0.4, "Scientific correctness"),
    Criterion("Accessibility", 0.3, "Understandable for a high school student"),
    Criterion("Engagement", 0.3, "Interesting and memorable"),
)


def rating(text: str) -> ParsedReply:
    return parse_reply(text, output_format="rating_json", scale=EXTENT, item_ids=["a"])


def score_line(text: str) -> ParsedReply:
    return parse_reply(text, output_format="score_line", scale=FACTUAL, item_ids=["a"])


def direct(text: str, criteria: tuple[Criterion, ...] = CRITERIA) -> ParsedReply:
    return parse_reply(
        text, output_format="direct_scoring_json", scale=OVERALL, item_ids=["a"], criteria=criteria
    )


# ---------------------------------------------------------------- rating_json

RATING_CASES = [
    ("plain", '{"rating": 7, "reason": "Mostly follows it."}', Status.OK, 7.0, set()),
    (
        "fenced",
        '```json\n{"rating": 7, "reason": "Mostly follows it."}\n```',
        Status.OK,
        7.0,
        {"markdown_fence"},
    ),
    (
        "prose around",
        'My answer: {"rating": 7, "reason": "Mostly follows it."} Thanks!',
        Status.OK,
        7.0,
        {"prose_around_json"},
    ),
    (
        "string rating",
        '{"rating": "7", "reason": "Mostly follows it."}',
        Status.OK,
        7.0,
        {"score_as_string"},
    ),
    (
        "float whole",
        '{"rating": 7.0, "reason": "Mostly follows it."}',
        Status.OK,
        7.0,
        {"decimal_notation"},
    ),
    ("zero", '{"rating": 0, "reason": "Does the opposite."}', Status.OK, 0.0, set()),
    ("ten", '{"rating": 10, "reason": "Fully."}', Status.OK, 10.0, set()),
    ("no reason", '{"rating": 7}', Status.OK, 7.0, {"missing_reason"}),
    (
        "reason first",
        '{"reason": "Mostly follows it.", "rating": 7}',
        Status.OK,
        7.0,
        {"reason_before_rating"},
    ),
    ("python dict", "{'rating': 7, 'reason': 'Mostly.'}", Status.OK, 7.0, {"python_dict"}),
    (
        "repeated key, same",
        '{"rating": 7, "rating": 7, "reason": "x"}',
        Status.OK,
        7.0,
        {"repeated_json"},
    ),
    (
        "repeated key, different",
        '{"rating": 0, "rating": 7, "reason": "x"}',
        Status.DUPLICATE,
        None,
        set(),
    ),
    ("trailing comma", '{"rating": 7, "reason": "Mostly.",}', Status.OK, 7.0, {"python_dict"}),
    (
        "repeated",
        '{"rating": 7, "reason": "x"}\n{"rating": 7, "reason": "x"}',
        Status.OK,
        7.0,
        {"repeated_json"},
    ),
    (
        "crlf and bom",
        '\ufeff{"rating": 7,\r\n "reason": "Mostly follows it."}',
        Status.OK,
        7.0,
        {"bom", "crlf"},
    ),
    ("abstain", '{"rating": -1, "reason": "The context is missing."}', Status.ABSTAIN, None, set()),
    ("eleven", '{"rating": 11, "reason": "x"}', Status.OUT_OF_RANGE, None, set()),
    ("seven and a half", '{"rating": 7.5, "reason": "x"}', Status.OUT_OF_RANGE, None, set()),
    (
        "two ratings",
        '{"rating": 7, "reason": "x"}\n{"rating": 8, "reason": "y"}',
        Status.DUPLICATE,
        None,
        set(),
    ),
    ("score key", '{"score": 7, "reason": "x"}', Status.OK, 7.0, {"rating_key_synonym"}),
    ("wrong key", '{"grade": 7, "reason": "x"}', Status.UNPARSEABLE, None, set()),
    (
        "not json",
        "I rate this 7 out of 10.",
        Status.OK,
        7.0,
        {"plain_rating_line", "rating_in_prose", "score_out_of_max"},
    ),
    (
        "not json, conditional",
        "If it were shorter I would rate it 7.",
        Status.UNPARSEABLE,
        None,
        set(),
    ),
    ("truncated", '{"rating": 7, "reason": "The text is mostly', Status.UNPARSEABLE, None, set()),
    ("word rating", '{"rating": "high", "reason": "x"}', Status.UNPARSEABLE, None, set()),
    ("boolean rating", '{"rating": true, "reason": "x"}', Status.UNPARSEABLE, None, set()),
    ("empty", "", Status.UNPARSEABLE, None, set()),
]


@pytest.mark.parametrize(
    ("text", "status", "score", "tolerances"),
    [c[1:] for c in RATING_CASES],
    ids=[c[0] for c in RATING_CASES],
)
def test_rating_json(text: str, status: Status, score: float | None, tolerances: set[str]) -> None:
    parsed = rating(text)
    (verdict,) = parsed.verdicts
    assert (verdict.item_id, verdict.status, verdict.score) == ("a", status, score)
    assert set(parsed.tolerances) == tolerances
    assert verdict.reason or "missing_reason" in parsed.tolerances


def test_rating_reason_becomes_the_verdict_reason() -> None:
    (verdict,) = rating('{"rating": 7, "reason": "  Mostly follows it. "}').verdicts
    assert verdict.reason == "Mostly follows it."
    (abstained,) = rating('{"rating": -1, "reason": "No context given."}').verdicts
    assert (abstained.reason, abstained.details) == ("No context given.", {"abstain_value": -1})


def test_rating_out_of_range_keeps_value_and_reason() -> None:
    (verdict,) = rating('{"rating": 11, "reason": "Beyond perfect."}').verdicts
    assert verdict.details == {"value": 11, "judge_reason": "Beyond perfect."}


def test_rating_truncation_and_missing_key_are_explained() -> None:
    (truncated,) = rating('{"rating": 7, "reason": "The text is mostly').verdicts
    assert TRUNCATION_HINT in truncated.reason
    (wrong_key,) = rating('{"points": 7}').verdicts
    assert "no 'rating' key" in wrong_key.reason


def test_single_item_formats_reject_several_ids() -> None:
    for output_format in ("rating_json", "score_line", "direct_scoring_json"):
        with pytest.raises(ValueError, match="one item per reply"):
            parse_reply(
                "{}",
                output_format=output_format,
                scale=EXTENT,
                item_ids=["a", "b"],
                criteria=CRITERIA,
            )


# ---------------------------------------------------------------- score_line

SCORE_LINE_CASES = [
    (
        "seed shape",
        "Explanation: The response correctly identifies 1989.\nSCORE: 4",
        Status.OK,
        4.0,
        set(),
    ),
    ("no label", "The response gets the unit wrong.\nSCORE: 2", Status.OK, 2.0, set()),
    ("bold label", "Correct.\n**SCORE:** 4", Status.OK, 4.0, {"markdown_emphasis"}),
    ("bold all", "Correct.\n**SCORE: 4**", Status.OK, 4.0, {"markdown_emphasis"}),
    ("title case", "Correct.\nScore: 4", Status.OK, 4.0, {"score_label_case"}),
    ("fraction of max", "Correct.\nSCORE: 4/4", Status.OK, 4.0, {"score_out_of_max"}),
    ("out of max", "Correct.\nSCORE: 4 out of 4", Status.OK, 4.0, {"score_out_of_max"}),
    ("worded comment", "Correct.\nSCORE: 4 (correct)", Status.OK, 4.0, {"score_comment"}),
    ("number in comment", "Correct.\nSCORE: 4 (or 3)", Status.UNPARSEABLE, None, set()),
    ("brackets", "Correct.\nSCORE: [3]", Status.OK, 3.0, {"score_in_brackets"}),
    ("final score", "Correct.\nFinal score: 4", Status.OK, 4.0, {"final_score_label"}),
    ("trailing period", "Correct.\nSCORE: 4.", Status.OK, 4.0, {"trailing_period"}),
    (
        "two different lines",
        "At first glance SCORE: 2 seemed right.\nSCORE: 2\nOn reflection it is better.\nSCORE: 3",
        Status.INCONSISTENT,
        None,
        set(),
    ),
    (
        "two identical lines",
        "Correct.\nSCORE: 3\nTo restate:\nSCORE: 3",
        Status.OK,
        3.0,
        {"multiple_score_lines"},
    ),
    ("text after", "Correct.\nSCORE: 4\nThanks for asking.", Status.OK, 4.0, {"text_after_score"}),
    ("crlf", "Correct.\r\nSCORE: 4\r\n", Status.OK, 4.0, {"crlf"}),
    ("fenced", "```\nCorrect.\nSCORE: 4\n```", Status.OK, 4.0, {"markdown_fence"}),
    ("evaluation label", "Evaluation: Correct.\nSCORE: 4", Status.OK, 4.0, set()),
    ("json form", '{"explanation": "Correct.", "score": 3}', Status.OK, 3.0, set()),
    (
        "json repeated key",
        '{"explanation": "x", "score": 1, "score": 3}',
        Status.INCONSISTENT,
        None,
        set(),
    ),
    (
        "two json answers",
        '{"score": 1}\n{"score": 3}',
        Status.INCONSISTENT,
        None,
        set(),
    ),
    (
        "fenced json form",
        '```json\n{"explanation": "Correct.", "score": "3"}\n```',
        Status.OK,
        3.0,
        {"markdown_fence", "score_as_string"},
    ),
    ("five on 1-4", "Too good.\nSCORE: 5", Status.OUT_OF_RANGE, None, set()),
    ("zero on 1-4", "Nothing.\nSCORE: 0", Status.OUT_OF_RANGE, None, set()),
    ("half", "Between.\nSCORE: 2.5", Status.OUT_OF_RANGE, None, set()),
    ("wrong denominator", "Correct.\nSCORE: 4/5", Status.OUT_OF_RANGE, None, set()),
    ("template echoed", "SCORE: [1/2/3/4]", Status.UNPARSEABLE, None, set()),
    ("label without number", "I am unsure.\nSCORE: N/A", Status.UNPARSEABLE, None, set()),
    ("score inside a sentence", "I would say the score: 3 fits.", Status.UNPARSEABLE, None, set()),
    ("no score", "The response is correct.", Status.UNPARSEABLE, None, set()),
    ("empty", "", Status.UNPARSEABLE, None, set()),
    ("truncated json", '{"explanation": "The answer is', Status.UNPARSEABLE, None, set()),
]


@pytest.mark.parametrize(
    ("text", "status", "score", "tolerances"),
    [c[1:] for c in SCORE_LINE_CASES],
    ids=[c[0] for c in SCORE_LINE_CASES],
)
def test_score_line(text: str, status: Status, score: float | None, tolerances: set[str]) -> None:
    parsed = score_line(text)
    (verdict,) = parsed.verdicts
    assert (verdict.status, verdict.score) == (status, score)
    assert set(parsed.tolerances) == tolerances


def test_score_line_reason_is_the_explanation() -> None:
    (verdict,) = score_line(
        "Explanation: The speed of light is in km/s, not miles.\nSCORE: 2"
    ).verdicts
    assert verdict.reason == "The speed of light is in km/s, not miles."
    assert verdict.raw == "SCORE: 2"


def test_score_lines_that_disagree_keep_every_value_and_choose_none() -> None:
    (verdict,) = score_line("SCORE: 1\nHmm, no.\nSCORE: 4").verdicts
    assert verdict.status is Status.INCONSISTENT
    assert verdict.details == {"values": [1, 4]}
    assert verdict.reason == "two ratings, 1 (`SCORE: 1`) and 4 (`SCORE: 4`); none is chosen"


def test_score_line_reasons_for_failures() -> None:
    (no_number,) = score_line("SCORE: N/A").verdicts
    assert "not just a number" in no_number.reason
    (truncated,) = score_line('{"explanation": "The answer is').verdicts
    assert TRUNCATION_HINT in truncated.reason


# ---------------------------------------------------------------- direct_scoring_json


def evaluation(scores: tuple[int, int, int] = (4, 5, 3), overall: float = 4.0) -> dict[str, Any]:
    return {
        "scores": [
            {
                "criterion": c.name,
                "evidence": ["quote"],
                "score": s,
                "maxScore": 5,
                "justification": f"why {c.name}",
                "improvement": f"fix {c.name}",
            }
            for c, s in zip(CRITERIA, scores, strict=True)
        ],
        "overallScore": overall,
        "summary": {
            "assessment": "Solid explanation.",
            "strengths": ["clear"],
            "weaknesses": ["short"],
            "priorities": ["add an example"],
        },
    }


def test_direct_scoring_consistent_reply_scores_the_overall() -> None:
    # 0.4*4 + 0.3*5 + 0.3*3 = 1.6 + 1.5 + 0.9 = 4.0
    parsed = direct("```json\n" + json.dumps(evaluation()) + "\n```")
    (verdict,) = parsed.verdicts
    assert (verdict.status, verdict.score, verdict.reason) == (Status.OK, 4.0, "Solid explanation.")
    assert verdict.details["overall_recomputed"] == pytest.approx(4.0)
    assert verdict.details["criteria"]["Accuracy"]["score"] == 4
    assert verdict.details["criteria"]["Engagement"]["justification"] == "why Engagement"
    assert verdict.details["summary"]["priorities"] == ["add an example"]
    assert parsed.tolerances == ("markdown_fence",)


def test_direct_scoring_accepts_rounding_within_tolerance() -> None:
    # 0.4*3 + 0.3*4 + 0.3*4 = 3.6; 3.65 is within 0.05, 3.66 is not
    assert direct(json.dumps(evaluation((3, 4, 4), 3.65))).verdicts[0].score == 3.65
    assert direct(json.dumps(evaluation((3, 4, 4), 3.66))).verdicts[0].status is Status.INCONSISTENT


def mutate(change: str) -> dict[str, Any]:
    reply = copy.deepcopy(evaluation())
    if change == "overall off":
        reply["overallScore"] = 4.5
    elif change == "overall missing":
        del reply["overallScore"]
    elif change == "criterion missing":
        del reply["scores"][2]
    elif change == "criterion twice":
        reply["scores"].append(copy.deepcopy(reply["scores"][0]))
    elif change == "unknown criterion":
        reply["scores"].append({"criterion": "Style", "score": 3, "maxScore": 5})
    elif change == "above max":
        reply["scores"][1]["score"] = 6
    elif change == "above reported max":
        reply["scores"][1]["maxScore"] = 4
    elif change == "below min":
        reply["scores"][1]["score"] = 0
    elif change == "fractional criterion":
        reply["scores"][1]["score"] = 4.5
    elif change == "score not a number":
        reply["scores"][1]["score"] = "good"
    return reply


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("overall off", "differs from the weighted mean"),
        ("overall missing", "overallScore is missing"),
        ("criterion missing", "'Engagement' is missing"),
        ("criterion twice", "scored more than once"),
        ("unknown criterion", "unknown criterion 'Style'"),
        ("above max", "outside its scale 1-5"),
        ("above reported max", "reports maxScore 4"),
        ("below min", "outside its scale 1-5"),
        ("fractional criterion", "not a whole number"),
        ("score not a number", "no numeric score"),
    ],
)
def test_direct_scoring_inconsistencies(change: str, problem: str) -> None:
    (verdict,) = direct(json.dumps(mutate(change))).verdicts
    assert verdict.status is Status.INCONSISTENT
    assert verdict.score is None
    assert problem in verdict.reason
    assert any(problem in p for p in verdict.details["problems"])


def test_direct_scoring_repeated_key_with_different_values() -> None:
    text = json.dumps(evaluation()).replace('"overallScore"', '"overallScore": 1, "overallScore"')
    (verdict,) = direct(text).verdicts
    assert verdict.status is Status.INCONSISTENT
    assert "'overallScore' is given more than once" in verdict.reason


def test_direct_scoring_details_carry_the_recomputed_overall() -> None:
    (verdict,) = direct(json.dumps(mutate("overall off"))).verdicts
    assert verdict.details["overall_reported"] == 4.5
    assert verdict.details["overall_recomputed"] == pytest.approx(4.0)


def test_direct_scoring_tolerances_and_unparseable() -> None:
    reply = evaluation()
    reply["scores"][0]["criterion"] = "  accuracy "
    del reply["scores"][1]["maxScore"]
    parsed = direct(json.dumps(reply))
    assert parsed.verdicts[0].status is Status.OK
    assert set(parsed.tolerances) == {"criterion_name_case", "missing_max_score"}
    (truncated,) = direct(json.dumps(evaluation())[:80]).verdicts
    assert truncated.status is Status.UNPARSEABLE
    assert TRUNCATION_HINT in truncated.reason
    (two,) = direct(json.dumps(evaluation()) + json.dumps(mutate("overall off"))).verdicts
    assert two.status is Status.DUPLICATE


def test_direct_scoring_other_scales() -> None:
    criteria = (Criterion("Depth", 2.0, "d", 0, 10), Criterion("Form", 1.0, "f", 0, 10))
    reply = {
        "scores": [
            {"criterion": "Depth", "score": 7, "maxScore": 10},
            {"criterion": "Form", "score": 4, "maxScore": 10},
        ],
        "overallScore": 6.0,  # (2*7 + 1*4) / 3
    }
    assert direct(json.dumps(reply), criteria).verdicts[0].score == 6.0
    reply["scores"][1]["maxScore"] = 5
    assert direct(json.dumps(reply), criteria).verdicts[0].status is Status.INCONSISTENT


def test_direct_scoring_needs_criteria() -> None:
    with pytest.raises(ValueError, match="criteria"):
        direct(json.dumps(evaluation()), ())


def test_a_score_revised_after_the_answer_keeps_both_values_and_says_where() -> None:
    (revised,) = score_line("Right year.\nSCORE: 4\nOn reflection, a 3 would be fairer.").verdicts
    assert revised.status is Status.INCONSISTENT and revised.score is None
    assert revised.details["values"] == [4, 3]
    assert "'On reflection, a 3 would be fairer.'" in revised.reason
    (before,) = rating('Rating: 4\n{"rating": 6, "reason": "Most points."}').verdicts
    assert before.status is Status.INCONSISTENT and before.details["values"] == [6, 4]
    (kept,) = score_line(
        "Right year.\nSCORE: 4\nI did not give it a 5: the city is vague."
    ).verdicts
    assert (kept.status, kept.score) == (Status.OK, 4.0)
