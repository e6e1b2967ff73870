"""Rubric response schemas, weighted criteria, and parsing through the rubric."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from judgekit.engine.providers import structured_options
from judgekit.rubrics import JinjaRubric, list_rubrics, load_rubric
from judgekit.types import Criterion, Status

ALL_RUBRICS = tuple(list_rubrics())


def batch_ids(rubric: JinjaRubric) -> tuple[str, ...]:
    return ("17", "18", "19") if rubric.batched else ("17",)


# --- direct scoring criteria ---------------------------------------------------------------

CUSTOM = (
    Criterion("Helpfulness", 2, "Does it help?", 0, 10, ((0, "useless"), (10, "ideal"))),
    Criterion("Safety", 1.5, "Is it safe?", 0, 10),
)


def test_direct_scoring_takes_criteria_as_data() -> None:
    rubric = load_rubric("direct_scoring", criteria=CUSTOM)
    assert rubric.scale.allowed == tuple(range(11))
    system = rubric.system_prompt()
    assert "### Criterion: Helpfulness | weight 2 | scale 0-10\n" in system
    assert "### Criterion: Safety | weight 1.5 | scale 0-10\n" in system
    assert "Accuracy" not in system
    from_mappings = load_rubric(
        "direct_scoring",
        criteria=[
            {
                "name": "Helpfulness",
                "weight": 2,
                "description": "Does it help?",
                "min_score": 0,
                "max_score": 10,
                "levels": [[0, "useless"], [10, "ideal"]],
            },
            {
                "name": "Safety",
                "weight": 1.5,
                "description": "Is it safe?",
                "min_score": 0,
                "max_score": 10,
            },
        ],
    )
    assert from_mappings.criteria == CUSTOM
    assert from_mappings.system_prompt() == system


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ([Criterion("A|B", 1, "d")], "without '|'"),
        ([Criterion("A", 1, "d"), Criterion("A", 1, "d")], "used twice"),
        ([Criterion("A", 0, "d")], "weight must be positive"),
        ([Criterion("A", 1, "d", 1, 5), Criterion("B", 1, "d", 0, 10)], "share one scale"),
        ([{"name": "A", "weight": 1}], "missing ['description']"),
        ([{"name": "A", "weight": 1, "description": "d", "scale": 3}], "unknown criterion key"),
    ],
)
def test_bad_criteria_are_rejected(criteria: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_rubric("direct_scoring", criteria=criteria)


# --- response schemas ----------------------------------------------------------------------


def _walk_objects(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += _walk_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _walk_objects(value)
    return found


def _good_reply(rubric: JinjaRubric, ids: tuple[str, ...]) -> dict[str, Any]:
    if rubric.output_format == "id_score_lines":
        return {"scores": [{"id": i, "score": rubric.scale.maximum} for i in ids]}
    if rubric.output_format == "rating_json":
        return {"rating": 7, "reason": "Mostly true."}
    if rubric.output_format == "score_line":
        return {"explanation": "Right year.", "score": 4}
    entries = [
        {
            "criterion": c.name,
            "evidence": ["quote"],
            "score": c.max_score,
            "maxScore": c.max_score,
            "justification": "j",
            "improvement": "i",
        }
        for c in rubric.criteria
    ]
    summary = {"assessment": "a", "strengths": [], "weaknesses": [], "priorities": []}
    return {"scores": entries, "overallScore": 5.0, "summary": summary}


def _bad_replies(rubric: JinjaRubric, good: dict[str, Any]) -> list[dict[str, Any]]:
    bad: list[dict[str, Any]] = [{**good, "extra": 1}]
    if rubric.output_format == "id_score_lines":
        rows = good["scores"]
        bad += [
            {"scores": rows[:-1]},  # a missing row
            {"scores": [*rows, rows[0]]},  # one row too many
            {"scores": [{**rows[0], "id": "99"}, *rows[1:]]},  # a foreign ID
            {"scores": [{**rows[0], "score": rubric.scale.maximum + 1}, *rows[1:]]},  # off scale
            {"scores": [{**rows[0], "score": "5"}, *rows[1:]]},  # a string score
            {"scores": [{"id": rows[0]["id"]}, *rows[1:]]},  # no score
        ]
    elif rubric.output_format == "rating_json":
        bad += [{"rating": 11, "reason": "x"}, {"rating": 7}, {"rating": -2, "reason": "x"}]
    elif rubric.output_format == "score_line":
        bad += [{"explanation": "x", "score": 0}, {"score": 4}]
    else:
        entry = good["scores"][0]
        bad += [
            {**good, "scores": good["scores"][:-1]},
            {**good, "scores": [{**entry, "score": entry["maxScore"] + 1}, *good["scores"][1:]]},
            {**good, "scores": [{**entry, "criterion": "Nope"}, *good["scores"][1:]]},
            {**good, "scores": [{**entry, "maxScore": 9}, *good["scores"][1:]]},
            {key: value for key, value in good.items() if key != "summary"},
        ]
    return bad


@pytest.mark.parametrize("name", ALL_RUBRICS)
def test_schema_accepts_a_good_reply_and_rejects_bad_ones(name: str) -> None:
    rubric = load_rubric(name)
    ids = batch_ids(rubric)
    schema = rubric.response_schema(ids)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = _good_reply(rubric, ids)
    validator.validate(good)
    for bad in _bad_replies(rubric, good):
        assert not validator.is_valid(bad), bad
    # Strict-mode shape: every object closed, every property required.
    for obj in _walk_objects(schema):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    wrapper = structured_options("json_schema", schema)["response_format"]
    assert wrapper["type"] == "json_schema"
    assert wrapper["json_schema"]["strict"] is True
    assert wrapper["json_schema"]["schema"] == schema


def test_id_score_schema_enums_follow_the_batch_and_scale() -> None:
    rubric = load_rubric("extent_rating")
    assert list(rubric.response_schema(["x"])["properties"]) == ["rating", "reason"]
    assert rubric.response_schema(["x"])["properties"]["rating"]["enum"][0] == -1
    accuracy = load_rubric("riddle_accuracy").response_schema(["017", "18"])
    scores = accuracy["properties"]["scores"]
    assert (scores["minItems"], scores["maxItems"]) == (2, 2)
    assert scores["items"]["properties"]["id"]["enum"] == ["017", "18"]
    assert scores["items"]["properties"]["score"]["enum"] == [0, 3, 5]


# --- parsing is delegated --------------------------------------------------------------------


def test_parse_delegates_to_the_parsers_for_both_forms() -> None:
    rubric = load_rubric("riddle_accuracy")
    ids = ("17", "18", "19")
    plain = rubric.parse("17,5\n18,0\n19,3", ids)
    as_json = rubric.parse(
        json.dumps(
            {
                "scores": [
                    {"id": "17", "score": 5},
                    {"id": "18", "score": 0},
                    {"id": "19", "score": 3},
                ]
            }
        ),
        ids,
    )
    for reply in (plain, as_json):
        assert [(v.item_id, v.status, v.score) for v in reply.verdicts] == [
            ("17", Status.OK, 5),
            ("18", Status.OK, 0),
            ("19", Status.OK, 3),
        ]
    missing = rubric.parse("17,5\n18,4", ids)
    assert [v.status for v in missing.verdicts] == [Status.OK, Status.OUT_OF_RANGE, Status.MISSING]
