"""Batched ``ID,score`` replies: a table of real-world reply shapes and their expected reading."""

from __future__ import annotations

import csv
import json

import pytest

from judgekit.formats import TRUNCATION_HINT, parse_reply
from judgekit.types import ParsedReply, Scale, Status

ACCURACY = Scale(allowed=(0, 3, 5), abstain=(-1,))
REASONING = Scale(allowed=(0, 1, 2, 3, 4, 5))
IDS = ("17", "18", "19")
OK_5_0_3 = {"17": 5.0, "18": 0.0, "19": 3.0}
JSON_OK = json.dumps({"scores": [{"id": i, "score": int(v)} for i, v in OK_5_0_3.items()]})


def parse(text: str, ids: tuple[str, ...] = IDS, scale: Scale = ACCURACY) -> ParsedReply:
    return parse_reply(text, output_format="id_score_lines", scale=scale, item_ids=ids)


# (case name, reply text, tolerances the parser must report)
CLEAN_READINGS = [
    ("canonical", "17,5\n18,0\n19,3", set()),
    ("trailing newline", "17,5\n18,0\n19,3\n", set()),
    (
        "csv fence with header",
        "```csv\nID,Accuracy\n17,5\n18,0\n19,3\n```",
        {"markdown_fence", "header_line"},
    ),
    ("plain fence", "```\n17,5\n18,0\n19,3\n```\n", {"markdown_fence"}),
    ("justification header", "ID,Justification\n17,5\n18,0\n19,3", {"header_line"}),
    ("semicolon header", "ID;score\n17;5\n18;0\n19;3", {"header_line", "separator_semicolon"}),
    ("id prefix with dash", "ID: 17 - 5\nID: 18 - 0\nID: 19 - 3", {"id_prefix", "separator_dash"}),
    (
        "id prefix, no colon",
        "ID 17: 5\nID 18: 0\nID 19: 3",
        {"id_prefix", "separator_colon", "spaced_separator"},
    ),
    ("hash prefix", "#17,5\n#18,0\n#19,3", {"id_prefix"}),
    ("dash", "17 - 5\n18 - 0\n19 - 3", {"separator_dash"}),
    ("en dash", "17 – 5\n18 – 0\n19 – 3", {"separator_dash"}),
    ("semicolon", "17;5\n18;0\n19;3", {"separator_semicolon"}),
    ("colon and space", "17: 5\n18: 0\n19: 3", {"separator_colon", "spaced_separator"}),
    ("comma and space", "17, 5\n18, 0\n19, 3", {"spaced_separator"}),
    ("equals", "17=5\n18=0\n19=3", {"separator_equals"}),
    (
        "empty csv columns",
        "17;5;;;\n18;0;;;\n19;3;;;",
        {"separator_semicolon", "trailing_separator"},
    ),
    ("arrow", "17 -> 5\n18 -> 0\n19 -> 3", {"separator_arrow"}),
    ("tab", "17\t5\n18\t0\n19\t3", {"separator_tab"}),
    ("space only", "17 5\n18 0\n19 3", {"separator_space"}),
    ("bullets", "- 17,5\n- 18,0\n- 19,3", {"list_marker"}),
    ("star bullets", "* 17,5\n* 18,0\n* 19,3", {"list_marker"}),
    ("numbered", "1. 17,5\n2. 18,0\n3. 19,3", {"list_marker"}),
    ("numbered parens", "1) 17,5\n2) 18,0\n3) 19,3", {"list_marker"}),
    ("bold id", "**17**,5\n**18**,0\n**19**,3", {"markdown_emphasis"}),
    ("backticks", "`17,5`\n`18,0`\n`19,3`", {"markdown_emphasis"}),
    (
        "prose before and after",
        "Here are the scores for this batch:\n17,5\n18,0\n19,3\nLet me know if you need more.",
        {"prose"},
    ),
    (
        "prose mentioning another score",
        "Scores below. Note that 17,5 is my call for the first row.\n17,5\n18,0\n19,3",
        {"prose"},
    ),
    ("label line is prose not an ID", "Score: 5\n17,5\n18,0\n19,3\nTotal: 3", {"prose"}),
    ("windows newlines", "17,5\r\n18,0\r\n19,3\r\n", {"crlf"}),
    ("trailing spaces", "17,5  \n18,0\t\n 19,3 ", {"line_whitespace"}),
    ("bom", "\ufeff17,5\n18,0\n19,3", {"bom"}),
    ("blank lines between", "17,5\n\n18,0\n\n19,3", {"blank_lines"}),
    ("decimal whole", "17,5.0\n18,0\n19,3", {"decimal_notation"}),
    ("out of max", "17,5/5\n18,0/5\n19,3/5", {"score_out_of_max"}),
    ("repeated identical", "17,5\n18,0\n17,5\n19,3", {"repeated_identical_line"}),
    ("leading zeros", "017,5\n018,0\n019,3", {"id_normalised"}),
    (
        "markdown table",
        "| ID | Accuracy |\n|----|----------|\n| 17 | 5 |\n| 18 | 0 |\n| 19 | 3 |",
        {"markdown_table", "header_line"},
    ),
    (
        "json form",
        JSON_OK,
        set(),
    ),
    (
        "fenced json",
        f"```json\n{JSON_OK}\n```",
        {"markdown_fence"},
    ),
    (
        "json with prose",
        f"Sure, here you go: {JSON_OK} Done.",
        {"prose_around_json"},
    ),
    (
        "json numeric ids",
        '{"scores": [{"id": 17, "score": 5}, {"id": 18, "score": 0}, {"id": 19, "score": 3}]}',
        {"id_as_number"},
    ),
    (
        "json string scores",
        JSON_OK.replace(": 5", ': "5"').replace(": 0", ': "0"').replace(": 3", ': "3"'),
        {"score_as_string"},
    ),
    (
        "bare json list",
        '[{"id": "17", "score": 5}, {"id": "18", "score": 0}, {"id": "19", "score": 3}]',
        {"bare_json_list"},
    ),
    (
        "everything at once",
        "\ufeffSure!\r\n```csv\r\nID;score\r\n- 17; 5\r\n- 18; 0\r\n- 19; 3\r\n```\r\n"
        "Hope this helps.",
        {
            "bom",
            "crlf",
            "prose",
            "markdown_fence",
            "header_line",
            "list_marker",
            "separator_semicolon",
            "spaced_separator",
        },
    ),
]


@pytest.mark.parametrize(
    ("text", "tolerances"), [c[1:] for c in CLEAN_READINGS], ids=[c[0] for c in CLEAN_READINGS]
)
def test_tolerated_shapes_read_the_same_scores(text: str, tolerances: set[str]) -> None:
    parsed = parse(text)
    assert [v.item_id for v in parsed.verdicts] == list(IDS)
    assert {v.item_id: v.score for v in parsed.verdicts} == OK_5_0_3
    assert all(v.status is Status.OK for v in parsed.verdicts)
    assert set(parsed.tolerances) == tolerances


# (case name, reply, {id: (status, score)} for every verdict in order)
STATUS_READINGS = [
    (
        "abstain",
        "17,-1\n18,0\n19,3",
        {"17": (Status.ABSTAIN, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "unicode minus abstain",
        "17,\u22121\n18,0\n19,3",
        {"17": (Status.ABSTAIN, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "4 is not on 0/3/5",
        "17,4\n18,0\n19,3",
        {"17": (Status.OUT_OF_RANGE, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "half point",
        "17,4.5\n18,0\n19,3",
        {"17": (Status.OUT_OF_RANGE, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "wrong denominator",
        "17,3/10\n18,0\n19,3",
        {"17": (Status.OUT_OF_RANGE, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "missing row",
        "17,5\n18,0",
        {"17": (Status.OK, 5.0), "18": (Status.OK, 0.0), "19": (Status.MISSING, None)},
    ),
    (
        "conflicting duplicate",
        "17,5\n18,0\n17,3\n19,3",
        {"17": (Status.DUPLICATE, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "foreign id",
        "17,5\n18,0\n19,3\n20,5",
        {
            "17": (Status.OK, 5.0),
            "18": (Status.OK, 0.0),
            "19": (Status.OK, 3.0),
            "20": (Status.UNKNOWN_ID, None),
        },
    ),
    (
        "foreign id instead of an expected one",
        "17,5\n18,0\n91,3",
        {
            "17": (Status.OK, 5.0),
            "18": (Status.OK, 0.0),
            "19": (Status.MISSING, None),
            "91": (Status.UNKNOWN_ID, None),
        },
    ),
    (
        "prose only mentions it",
        "I would give 17,5 here.\n18,0\n19,3",
        {"17": (Status.MISSING, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "comment with a number after score",
        "17,5 (or 3)\n18,0\n19,3",
        {"17": (Status.MISSING, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "third column",
        "17,5,3\n18,0\n19,3",
        {"17": (Status.MISSING, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "dash without spaces",
        "17-5\n18,0\n19,3",
        {"17": (Status.MISSING, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "json record without score",
        '{"scores": [{"id": "17"}, {"id": "18", "score": 0}, {"id": "19", "score": "high"}]}',
        {
            "17": (Status.UNPARSEABLE, None),
            "18": (Status.OK, 0.0),
            "19": (Status.UNPARSEABLE, None),
        },
    ),
    (
        "json record repeats its score",
        JSON_OK.replace('"score": 5', '"score": 5, "score": 3'),
        {"17": (Status.DUPLICATE, None), "18": (Status.OK, 0.0), "19": (Status.OK, 3.0)},
    ),
    (
        "json foreign id",
        JSON_OK.replace("]}", ', {"id": "x", "score": 5}]}'),
        {
            "17": (Status.OK, 5.0),
            "18": (Status.OK, 0.0),
            "19": (Status.OK, 3.0),
            "x": (Status.UNKNOWN_ID, None),
        },
    ),
    ("empty", "", dict.fromkeys(IDS, (Status.UNPARSEABLE, None))),
    ("whitespace", "  \n\n ", dict.fromkeys(IDS, (Status.UNPARSEABLE, None))),
    (
        "refusal",
        "I'm sorry, but I can't evaluate these answers.",
        dict.fromkeys(IDS, (Status.UNPARSEABLE, None)),
    ),
    ("header only", "ID,Accuracy\n", dict.fromkeys(IDS, (Status.UNPARSEABLE, None))),
    (
        "truncated json",
        '{"scores": [{"id": "17", "score": 5}, {"id": "18", "sc',
        dict.fromkeys(IDS, (Status.UNPARSEABLE, None)),
    ),
    (
        "truncated fence",
        "```csv\n17,5\n18,",
        {"17": (Status.OK, 5.0), "18": (Status.MISSING, None), "19": (Status.MISSING, None)},
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in STATUS_READINGS], ids=[c[0] for c in STATUS_READINGS]
)
def test_statuses(text: str, expected: dict[str, tuple[Status, float | None]]) -> None:
    parsed = parse(text)
    assert {v.item_id: (v.status, v.score) for v in parsed.verdicts} == expected
    assert [v.item_id for v in parsed.verdicts] == list(expected)
    for verdict in parsed.verdicts:
        if verdict.status is not Status.OK:
            assert verdict.reason, f"{verdict.item_id} has no reason"


def test_abstain_details_and_raw_line() -> None:
    verdict = parse("17,-1\n18,0\n19,3").verdicts[0]
    assert verdict.details == {"abstain_value": -1}
    assert verdict.raw == "17,-1"


def test_abstain_is_out_of_range_when_the_scale_has_no_abstention() -> None:
    verdict = parse("17,-1\n18,0\n19,3", scale=REASONING).verdicts[0]
    assert verdict.status is Status.OUT_OF_RANGE
    assert verdict.details == {"value": -1}


@pytest.mark.parametrize(("written", "value"), [("4", 4), ("7", 7), ("4.5", 4.5)])
def test_out_of_range_keeps_the_rejected_number(written: str, value: float) -> None:
    verdict = parse(f"17,{written}\n18,0\n19,3").verdicts[0]
    assert verdict.status is Status.OUT_OF_RANGE
    assert verdict.details == {"value": value}
    assert "not on the rubric's scale" in verdict.reason
    assert verdict.raw == f"17,{written}"


def test_seven_on_a_zero_to_five_scale_is_out_of_range() -> None:
    verdict = parse("17,7\n18,0\n19,3", scale=REASONING).verdicts[0]
    assert (verdict.status, verdict.details) == (Status.OUT_OF_RANGE, {"value": 7})


def test_duplicate_keeps_both_lines_and_values() -> None:
    verdict = parse("17,5\n18,0\n17,3\n19,3").verdicts[0]
    assert verdict.details == {"values": [5, 3]}
    assert verdict.raw == "17,5\n17,3"


def test_unknown_id_is_never_scored_and_keeps_the_judges_number() -> None:
    verdict = parse("17,5\n18,0\n19,3\n20,5").verdicts[-1]
    assert (verdict.item_id, verdict.score) == ("20", None)
    assert verdict.details == {"values": [5]}
    assert "not in this batch" in verdict.reason


def test_missing_points_at_the_near_miss_line() -> None:
    verdict = parse("17,5 (or 3)\n18,0\n19,3").verdicts[0]
    assert verdict.raw == "17,5 (or 3)"
    assert "not just an ID and a number" in verdict.reason


def test_truncation_is_named_in_the_reason() -> None:
    for text in ('{"scores": [{"id": "17", "score": 5}, {"id": "18"', "```csv\n17,5\n18,"):
        reasons = [v.reason for v in parse(text).verdicts if v.status is not Status.OK]
        assert reasons
        assert all(TRUNCATION_HINT in r and "max_tokens" in r for r in reasons)


def test_unparseable_keeps_the_whole_reply() -> None:
    text = "I'm sorry, but I can't evaluate these answers."
    verdicts = parse(text).verdicts
    assert all(v.raw == text for v in verdicts)
    assert "begins" in verdicts[0].reason
    assert parse("").verdicts[0].reason == "the reply is empty"


def test_numeric_id_match_must_be_unambiguous() -> None:
    parsed = parse("17,5\n18,0", ids=("017", "0017", "18"))
    by_id = {v.item_id: v for v in parsed.verdicts}
    assert by_id["017"].status is Status.MISSING
    assert by_id["0017"].status is Status.MISSING
    assert by_id["17"].status is Status.UNKNOWN_ID
    assert "several expected IDs" in by_id["17"].reason
    assert by_id["18"].score == 0.0
    assert "id_normalised" not in parsed.tolerances


def test_exact_id_wins_over_numeric_match() -> None:
    parsed = parse("17,5\n017,3", ids=("17", "017"))
    assert [(v.item_id, v.score) for v in parsed.verdicts] == [("17", 5.0), ("017", 3.0)]
    assert parsed.tolerances == ()


def test_label_words_are_never_foreign_ids() -> None:
    parsed = parse("Score: 5\nTotal: 2\nab,5\ncd,3", ids=("ab", "cd"))
    assert [(v.item_id, v.score) for v in parsed.verdicts] == [("ab", 5.0), ("cd", 3.0)]
    assert "prose" in parsed.tolerances


def test_text_ids_case_and_shape() -> None:
    parsed = parse("Q1,5\nq2: 3\nq9,0\nScore: 5", ids=("q1", "q2"))
    verdicts = [(v.item_id, v.status, v.score) for v in parsed.verdicts]
    assert verdicts == [
        ("q1", Status.OK, 5.0),
        ("q2", Status.OK, 3.0),
        ("q9", Status.UNKNOWN_ID, None),
    ]
    assert "id_case" in parsed.tolerances


def test_ids_with_dashes() -> None:
    parsed = parse("row-1,5\nrow-2 - 3", ids=("row-1", "row-2"))
    assert [v.score for v in parsed.verdicts] == [5.0, 3.0]


def test_id_starting_with_id_is_not_taken_for_a_prefix() -> None:
    parsed = parse("id3,5\nid4,0", ids=("id3", "id4"))
    assert [v.score for v in parsed.verdicts] == [5.0, 0.0]
    assert "id_prefix" not in parsed.tolerances


@pytest.mark.parametrize("ids", [(), ("17", "17")])
def test_bad_expected_ids_are_a_caller_error(ids: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="item_ids"):
        parse("17,5", ids=ids)


def test_unknown_format_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="unknown output format"):
        parse_reply("17,5", output_format="csv", scale=ACCURACY, item_ids=IDS)  # type: ignore[arg-type]


@pytest.mark.shared
def test_riddle_judge_scores_round_trip(shared_datasets) -> None:  # type: ignore[no-untyped-def]
    """The GPT judge's real accuracy scores for rows 1-60, written the ways judges write them."""
    with (shared_datasets / "hungarian-riddles" / "scores.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))[:60]
    truth = {row["ID"]: float(row["Acc_GPT"]) for row in rows}
    ids = tuple(truth)
    canonical = "\n".join(f"{i},{int(s)}" for i, s in truth.items())
    messy = (
        "Here you go:\r\n```csv\r\nID,Accuracy\r\n" + canonical.replace("\n", "\r\n") + "\r\n```"
    )
    for text in (canonical, messy):
        parsed = parse(text, ids=ids)
        assert {v.item_id: v.score for v in parsed.verdicts} == truth
    assert parse(canonical, ids=ids).tolerances == ()
