"""The parsers against replies from the project's HTTP simulator, read with the real openai client.

The simulator writes each malformation the way a real judge does; the parser must give the
status a researcher expects. Its ``top_logprobs`` follow a documented distribution
(``logprob_confidence`` on the written score, the rest halving with each step away on the
scale), so the expected scores below are computed by hand from that rule.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from judgekit.formats import expected_score, expected_scores_by_id, parse_reply
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item, ParsedReply, Status, TopLogprobs

CONFIDENCE = 0.8


def ask(config: SimulatorConfig, rubric_name: str, ids: list[str], **options: Any) -> Any:
    rubric = load_rubric(rubric_name)
    items = [
        Item(i, {c: "Melyik folyó a leghosszabb? 17,5" for c in rubric.input_columns}) for i in ids
    ]
    with run_simulator(config) as handle:
        client = openai.OpenAI(base_url=handle.base_url, api_key="not-used", max_retries=0)
        completion = client.chat.completions.create(
            model="sim", messages=rubric.render(items, batch_label="rows 1-3"), **options
        )
    return completion.choices[0]


def parse(rubric_name: str, text: str, ids: list[str]) -> ParsedReply:
    rubric = load_rubric(rubric_name)
    return parse_reply(
        text,
        output_format=rubric.output_format,
        scale=rubric.scale,
        item_ids=ids,
        criteria=getattr(rubric, "criteria", ()),
    )


# rubric -> malformation -> (status, a tolerance that must be recorded or None)
SINGLE_ITEM_EXPECTATIONS = {
    "extent_rating": {
        "fence": (Status.OK, "markdown_fence"),
        "prose": (Status.OK, "prose_around_json"),
        "missing_rows": (Status.UNPARSEABLE, None),
        "duplicate_id": (Status.DUPLICATE, None),  # {"rating": 0, "rating": 3, ...}
        "out_of_range": (Status.OUT_OF_RANGE, None),
        "truncated": (Status.UNPARSEABLE, None),
    },
    "factual_accuracy": {
        "fence": (Status.OK, "markdown_fence"),
        "prose": (Status.OK, "text_after_score"),
        "crlf": (Status.OK, "crlf"),
        "missing_rows": (Status.UNPARSEABLE, None),
        "duplicate_id": (Status.INCONSISTENT, None),  # two SCORE lines disagree: none wins
        "out_of_range": (Status.OUT_OF_RANGE, None),
    },
    "direct_scoring": {
        "fence": (Status.OK, "markdown_fence"),
        "prose": (Status.OK, "prose_around_json"),
        "missing_rows": (Status.INCONSISTENT, None),
        "duplicate_id": (Status.INCONSISTENT, None),
        "out_of_range": (Status.INCONSISTENT, None),
        "truncated": (Status.UNPARSEABLE, None),
    },
}
CASES = [(r, k, *v) for r, kinds in SINGLE_ITEM_EXPECTATIONS.items() for k, v in kinds.items()]


@pytest.mark.parametrize(("rubric_name", "kind", "status", "tolerance"), CASES)
def test_single_item_malformations(
    rubric_name: str, kind: str, status: Status, tolerance: str | None
) -> None:
    choice = ask(SimulatorConfig(malformed={kind: 1.0}, oracle={"7": 3}), rubric_name, ["7"])
    parsed = parse(rubric_name, choice.message.content, ["7"])
    (verdict,) = parsed.verdicts
    assert verdict.status is status, verdict.reason
    assert (verdict.score == 3.0) == (status is Status.OK)
    if tolerance is not None:
        assert tolerance in parsed.tolerances
    if kind == "truncated":
        assert "max_tokens" in verdict.reason


def logprobs_of(choice: Any) -> TopLogprobs:
    content = choice.logprobs.content
    return tuple(tuple((alt.token, alt.logprob) for alt in token.top_logprobs) for token in content)


def simulator_distribution(value: int, allowed: tuple[int, ...]) -> dict[int, float]:
    """The simulator's documented rule, written out independently of its code."""
    home = allowed.index(value)
    weights = {a: 2.0 ** -abs(allowed.index(a) - home) for a in allowed if a != value}
    total = sum(weights.values())
    return {value: CONFIDENCE} | {a: (1 - CONFIDENCE) * w / total for a, w in weights.items()}


def test_two_token_ten_from_the_simulator() -> None:
    choice = ask(
        SimulatorConfig(oracle={"7": 10}), "extent_rating", ["7"], logprobs=True, top_logprobs=5
    )
    p = simulator_distribution(10, tuple(range(11)))
    # first digit: "1" carries P(10) + P(1), the top-5 first digits are 1, 9, 8, 7, 6; after
    # "1" the simulator offers "0" (P(10) / P("1")) or the terminator "," (P(1) / P("1")),
    # so the split gives back P(10) and P(1) exactly
    seen = {10: p[10], 1: p[1], 9: p[9], 8: p[8], 7: p[7], 6: p[6]}
    hand = sum(v * q for v, q in seen.items()) / sum(seen.values())
    text = choice.message.content
    top = logprobs_of(choice)
    assert expected_score(
        top, load_rubric("extent_rating").scale, reply_text=text
    ) == pytest.approx(hand)
    assert hand == pytest.approx(9.6672, abs=1e-4)


def test_score_line_expected_score_from_the_simulator() -> None:
    choice = ask(
        SimulatorConfig(oracle={"7": 3}), "factual_accuracy", ["7"], logprobs=True, top_logprobs=5
    )
    p = simulator_distribution(3, (1, 2, 3, 4))
    hand = sum(v * q for v, q in p.items())
    scale = load_rubric("factual_accuracy").scale
    text = choice.message.content
    assert expected_score(
        logprobs_of(choice), scale, anchor="score", reply_text=text
    ) == pytest.approx(hand)


def test_batch_expected_scores_from_the_simulator() -> None:
    oracle = {"201": 5, "202": 3, "203": 0}
    choice = ask(
        SimulatorConfig(oracle=oracle),
        "riddle_accuracy",
        list(oracle),
        logprobs=True,
        top_logprobs=5,
    )
    scale = load_rubric("riddle_accuracy").scale
    allowed = scale.allowed
    hand = {
        i: sum(v * q for v, q in simulator_distribution(s, allowed).items())
        for i, s in oracle.items()
    }
    assert hand == pytest.approx({"201": 4.4, "202": 2.9, "203": 11 / 15})
    text = choice.message.content
    found = expected_scores_by_id(logprobs_of(choice), scale, list(oracle), reply_text=text)
    assert found == pytest.approx(hand)


def test_reply_text_that_disagrees_with_the_likely_tokens_gives_none() -> None:
    choice = ask(
        SimulatorConfig(oracle={"7": 3}), "factual_accuracy", ["7"], logprobs=True, top_logprobs=5
    )
    text = choice.message.content.replace("SCORE: 3", "SCORE: 2")
    scale = load_rubric("factual_accuracy").scale
    assert expected_score(logprobs_of(choice), scale, reply_text=text) is None
