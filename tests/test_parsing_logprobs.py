"""Logprob-weighted expected scores, checked against hand-computed numbers."""

from __future__ import annotations

import math

import pytest

from judgekit.formats import expected_score, expected_scores_by_id
from judgekit.types import Scale, TopLogprobs

EXTENT = Scale(allowed=tuple(range(11)), abstain=(-1,))
FACTUAL = Scale(allowed=(1, 2, 3, 4))
ACCURACY = Scale(allowed=(0, 3, 5), abstain=(-1,))

Position = tuple[tuple[str, float], ...]


def fixed(text: str) -> Position:
    """A position where the endpoint was certain (one alternative, probability 1)."""
    return ((text, 0.0),)


def choice(*alternatives: tuple[str, float]) -> Position:
    """A position with the emitted token first; probabilities are given, not logprobs."""
    return tuple((token, math.log(p)) for token, p in alternatives)


def reply(*positions: Position) -> TopLogprobs:
    return tuple(positions)


def test_single_token_score_line() -> None:
    top = reply(
        fixed("Correct."),
        fixed("\n"),
        fixed("SCORE"),
        fixed(":"),
        choice((" 3", 0.7), (" 4", 0.2), (" 2", 0.1)),
    )
    # 0.7*3 + 0.2*4 + 0.1*2 = 3.1
    assert expected_score(top, FACTUAL) == pytest.approx(3.1)
    assert expected_score(top, FACTUAL, anchor="score") == pytest.approx(3.1)


def test_ten_split_into_two_tokens() -> None:
    top = reply(
        fixed('{"rating": '),
        choice(("1", 0.6), ("8", 0.3), ("9", 0.1)),
        choice(("0", 0.9), (",", 0.1)),
        fixed(', "reason": "Fully."}'),
    )
    # P(10) = 0.6*0.9 = 0.54, P(1) = 0.6*0.1 = 0.06, P(8) = 0.3, P(9) = 0.1
    # E = (0.54*10 + 0.06*1 + 0.3*8 + 0.1*9) / 1.0 = 8.76
    assert expected_score(top, EXTENT) == pytest.approx(8.76)
    assert expected_score(top, EXTENT, anchor="rating") == pytest.approx(8.76)


def test_sampled_score_that_is_not_the_most_likely_gives_none() -> None:
    top = reply(
        fixed('{"rating": '),
        choice(("1", 0.6), ("8", 0.4)),
        choice((",", 0.9), ("0", 0.1)),  # what followed the sampled "8", not a "1"
        fixed("}"),
    )
    # without the reply text, the first alternatives spell "1" and the continuation is misread
    assert expected_score(top, EXTENT, reply_text='{"rating": 8,}') is None
    assert expected_score(top, EXTENT, reply_text='{"rating": 1,}') == pytest.approx(
        (0.6 * 0.9 * 1 + 0.6 * 0.1 * 10 + 0.4 * 8) / 1.0
    )


def test_ten_continuations_off_the_scale_are_dropped() -> None:
    top = reply(fixed("SCORE: "), choice(("1", 1.0)), choice(("0", 0.8), ("5", 0.1), ("\n", 0.1)))
    # P(10) = 0.8, P(1) = 0.1, "15" is off the scale: E = (8 + 0.1) / 0.9 = 9.0
    assert expected_score(top, EXTENT) == pytest.approx(9.0)


def test_ten_as_one_token() -> None:
    top = reply(fixed('{"rating":'), choice((" 10", 0.5), (" 9", 0.3), (" 8", 0.2)), fixed("}"))
    # 0.5*10 + 0.3*9 + 0.2*8 = 9.3
    assert expected_score(top, EXTENT) == pytest.approx(9.3)


def test_unemitted_prefix_is_unresolved() -> None:
    top = reply(fixed('{"rating": '), choice(("8", 0.9), ("9", 0.05), ("1", 0.05)), fixed("}"))
    # "1" could be 1 or 10 and its continuation was never reported: 5 % unresolved
    assert expected_score(top, EXTENT) is None
    # with 10 % allowed: E over {8: 0.9, 9: 0.05} = (7.2 + 0.45) / 0.95
    assert expected_score(top, EXTENT, max_unresolved_share=0.1) == pytest.approx(7.65 / 0.95)


def test_non_numeric_alternatives_are_left_out() -> None:
    top = reply(fixed("SCORE: "), choice(("3", 0.6), ("three", 0.3), ("4", 0.1)))
    # (0.6*3 + 0.1*4) / 0.7
    assert expected_score(top, FACTUAL) == pytest.approx(2.2 / 0.7)


def test_spacing_variants_of_a_value_add_up() -> None:
    top = reply(fixed("SCORE:"), choice((" 3", 0.5), ("3", 0.2), (" 4", 0.3)))
    # 0.7*3 + 0.3*4 = 3.3
    assert expected_score(top, FACTUAL) == pytest.approx(3.3)


def test_rating_anchor_beats_numbers_in_the_reason() -> None:
    top = reply(
        fixed('{"rating": '),
        choice(("7", 0.5), ("6", 0.5)),
        fixed(', "reason": "Only '),
        choice(("3", 0.9), ("2", 0.1)),
        fixed(' of 4 parts."}'),
    )
    assert expected_score(top, EXTENT) == pytest.approx(6.5)


def test_last_score_line_is_used() -> None:
    top = reply(
        fixed("SCORE: "),
        choice(("2", 1.0)),
        fixed("\nOn reflection, better.\nSCORE: "),
        choice(("3", 0.75), ("4", 0.25)),
    )
    assert expected_score(top, FACTUAL) == pytest.approx(3.25)


@pytest.mark.parametrize(
    "top",
    [
        (),
        reply(fixed("The answer is correct.")),
        reply(fixed('{"rating": '), choice(("-", 0.7), ("0", 0.3)), fixed("1}")),  # abstained
        reply(fixed("SCORE: "), choice(("5", 0.9), ("4", 0.1))),  # emitted value off the scale
        reply(fixed("SCORE: "), choice(("4", 0.9), ("3", 0.1)), fixed(".5")),  # 4.5
    ],
    ids=["empty", "no anchor", "abstain", "off scale", "decimal"],
)
def test_none_when_it_cannot_be_computed(top: TopLogprobs) -> None:
    assert expected_score(top, FACTUAL) is None


def test_formats_without_a_single_emitted_score() -> None:
    top = reply(fixed("SCORE: "), choice(("3", 1.0)))
    assert expected_score(top, FACTUAL, anchor="none") is None
    assert expected_score(top, FACTUAL, anchor="id") is None
    assert expected_score(top, FACTUAL, anchor="rating") is None


def test_unknown_format_with_a_scores_list_gives_none() -> None:
    top = reply(fixed('{"scores": [{"criterion": "A", "score": '), choice(("3", 1.0)), fixed("}]}"))
    assert expected_score(top, FACTUAL) is None


def test_expected_scores_of_a_batch_reply_by_id() -> None:
    top = reply(
        fixed("17"),
        fixed(","),
        choice(("5", 0.8), ("3", 0.15), ("4", 0.05)),
        fixed("\n"),
        fixed("18"),
        choice((",0", 0.5), (",3", 0.5)),
        fixed("\n"),
    )
    result = expected_scores_by_id(top, ACCURACY, ["17", "18", "19"])
    # 17: (0.8*5 + 0.15*3) / 0.95 (4 is off the 0/3/5 scale); 18: token ",0" vs ",3" -> 1.5
    assert result == {"17": pytest.approx(4.45 / 0.95), "18": pytest.approx(1.5), "19": None}


def test_batch_ids_that_start_with_id_and_id_prefixes() -> None:
    top = reply(
        fixed("id3,"), choice(("5", 0.5), ("3", 0.5)), fixed("\nID: 17,"), choice(("0", 1.0))
    )
    assert expected_scores_by_id(top, ACCURACY, ["id3", "17"]) == {"id3": 4.0, "17": 0.0}


def test_batch_duplicate_line_gives_none() -> None:
    top = reply(
        fixed("17,"),
        choice(("5", 1.0)),
        fixed("\n17,"),
        choice(("3", 1.0)),
        fixed("\n18,"),
        choice(("0", 1.0)),
    )
    assert expected_scores_by_id(top, ACCURACY, ["17", "18"]) == {"17": None, "18": 0.0}


def test_batch_json_form() -> None:
    top = reply(
        fixed('{"scores": [{"id": "17", "score": '),
        choice(("5", 0.6), ("3", 0.4)),
        fixed('}, {"id": "18", "score": '),
        choice(("0", 0.9), ("3", 0.1)),
        fixed("}]}"),
    )
    result = expected_scores_by_id(top, ACCURACY, ["17", "18"])
    assert result == {"17": pytest.approx(4.2), "18": pytest.approx(0.3)}


def test_batch_reply_text_must_agree_per_id() -> None:
    top = reply(fixed("17,"), choice(("5", 0.7), ("3", 0.3)), fixed("\n18,"), choice(("0", 1.0)))
    result = expected_scores_by_id(top, ACCURACY, ["17", "18"], reply_text="17,3\n18,0")
    assert result == {"17": None, "18": 0.0}


def test_batch_without_logprobs() -> None:
    assert expected_scores_by_id((), ACCURACY, ["17"]) == {"17": None}
