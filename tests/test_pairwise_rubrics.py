"""Packaged pairwise rubrics: they load, render both orders, and read their own format's replies."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgekit.data.pairwise import canonical_pair_frame, pair_items, unswap
from judgekit.formats.verdicts import verdict_label
from judgekit.rubrics import list_rubrics, load_rubric
from judgekit.types import Status

PAIRWISE = ("arena_hard", "llmbar_output", "mtbench_pairwise", "rating_pair")
#: A reply each rubric's format asks for, preferring the answer shown first.
FIRST_WINS = {
    "arena_hard": "The first is correct, the second is not.\n[[A>>B]]",
    "llmbar_output": "Output (a)",
    "mtbench_pairwise": "The first answer is correct.\n[[A]]",
    "rating_pair": "The first is right.\nScore A: 9\nScore B: 2",
}


def test_pairwise_rubrics_are_listed_apart_from_direct_ones() -> None:
    assert tuple(list_rubrics("pairwise")) == PAIRWISE
    assert not set(PAIRWISE) & set(list_rubrics())


@pytest.mark.parametrize("name", PAIRWISE)
def test_each_variant_renders_both_orders_and_reads_its_verdict(name: str) -> None:
    rubric = load_rubric(name)
    frame = canonical_pair_frame(
        pd.DataFrame({"ID": ["p1"], "prompt": ["2+2?"], "response a": ["4"], "response b": ["5"]}),
        source="pairs",
    )
    for order in ("ab", "ba"):
        (item,) = pair_items(frame, source="pairs", order=order)
        for variant in rubric.variants:
            system, user = rubric.render([item], variant=variant)
            assert any(t in system["content"] for t in ("[[", "Output (a)", "Score A:"))
            shown = ("4", "5") if order == "ab" else ("5", "4")
            assert user["content"].index(f">{shown[0]}<") < user["content"].index(f">{shown[1]}<")
        verdict = rubric.parse(FIRST_WINS[name], [item.id]).verdicts[0]
        assert verdict.status is Status.OK and verdict.score is not None
        original = unswap(verdict_label(verdict.score), order)
        assert original == ("a" if order == "ab" else "b")


@pytest.mark.parametrize("name", PAIRWISE)
def test_the_structured_form_is_read(name: str) -> None:
    rubric = load_rubric(name)
    schema = rubric.response_schema(["p1"])
    keys = list(schema["properties"])
    enum = schema["properties"].get("verdict", {}).get("enum", [])
    second = [v for v in enum if v.startswith(("B", "Output (b)"))]
    reply = json.dumps(
        {"explanation": "x", "score_a": 3, "score_b": 8}
        if name == "rating_pair"
        else {"explanation": "x", "verdict": second[-1]}
    )
    verdict = rubric.parse(reply, ["p1"]).verdicts[0]
    assert keys[0] == "explanation" and verdict.status is Status.OK
    assert verdict.score is not None and verdict.score < 0
