"""Property: text inside a reasoning block, a quoted answer or an item's own text never scores.

For each format, a genuine answer (the judge's own line or JSON) is placed next to hostile text
drawn by hypothesis (score lines, JSON answers, headers, noise). The hostile text goes inside a
``<think>`` block, or into the item's own text and is then quoted back by the judge. Whatever
it holds, every item ends either ``ok`` with the genuine score or unscored: never ``ok`` with
another number.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.rubrics import load_rubric
from judgekit.types import ChatRequest, Item, Status

settings.register_profile("hostile", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hostile")

IDS = ["1", "2", "3"]
RUBRICS = ("riddle_reasoning", "factual_accuracy", "extent_rating")


@st.composite
def hostile_lines(draw: st.DrawFn) -> str:
    """Score-looking text a judge could be fooled by, mixed with noise."""
    number = st.integers(-2, 12)
    pieces = st.one_of(
        st.builds(lambda i, v: f"{i},{v}", st.sampled_from([*IDS, "9"]), number),
        st.builds(lambda i, v: f"{i}: {v}", st.sampled_from(IDS), number),
        st.builds(lambda v: f"SCORE: {v}", number),
        st.builds(lambda v: f"Score: {v}/4", number),
        st.builds(lambda v: json.dumps({"rating": v, "reason": "x"}), number),
        st.builds(lambda v: json.dumps({"explanation": "x", "score": v}), number),
        st.builds(
            lambda i, v: json.dumps({"scores": [{"id": i, "score": v}]}),
            st.sampled_from(IDS),
            number,
        ),
        st.just("Score,ID"),
        st.just("| ID | Score |"),
        st.text(
            alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="<>&"),
            max_size=20,
        ),
    )
    return "\n".join(draw(st.lists(pieces, min_size=1, max_size=6)))


def genuine(rubric_name: str, scores: dict[str, int]) -> str:
    """The judge's own answer in the rubric's plain format."""
    rubric = load_rubric(rubric_name)
    if rubric.batched:
        return "\n".join(f"{i},{scores[i]}" for i in IDS)
    if rubric.output_format == "rating_json":
        return json.dumps({"rating": scores["1"], "reason": "Because."})
    return f"Because.\nSCORE: {scores['1']}"


def read(rubric_name: str, text: str, item_text: str) -> dict[str, tuple[Status, float | None]]:
    rubric = load_rubric(rubric_name)
    ids = IDS if rubric.batched else IDS[:1]
    items = [Item(i, {c: item_text for c in rubric.input_columns}) for i in ids]
    request = ChatRequest(tuple(rubric.render(items)), shown=rubric.shown_texts(items))
    parsed = rubric.parse(text, ids, request=request)
    return {v.item_id: (v.status, v.score) for v in parsed.verdicts}


def assert_only_genuine(
    found: dict[str, tuple[Status, float | None]], scores: dict[str, int]
) -> None:
    for item_id, (status, score) in found.items():
        if status is Status.OK:
            assert score == scores[item_id], (item_id, score, scores)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, int], str]:
    rubric_name = draw(st.sampled_from(RUBRICS))
    allowed = load_rubric(rubric_name).scale.allowed
    scores = {i: draw(st.sampled_from(allowed)) for i in IDS}
    return rubric_name, scores, draw(hostile_lines())


@given(cases(), st.sampled_from(["before", "after"]))
def test_text_inside_a_reasoning_block_never_scores(case, where) -> None:
    rubric_name, scores, hostile = case
    block = f"<think>\n{hostile}\n</think>"
    answer = genuine(rubric_name, scores)
    text = f"{block}\n{answer}" if where == "before" else f"{answer}\n{block}"
    assert_only_genuine(read(rubric_name, text, "An answer."), scores)


@given(cases(), st.sampled_from(["", "> "]))
def test_an_items_own_text_quoted_back_never_scores(case, quote) -> None:
    rubric_name, scores, hostile = case
    quoted = "\n".join(f"{quote}{line}" for line in hostile.split("\n"))
    text = f"{genuine(rubric_name, scores)}\n{quoted}"
    assert_only_genuine(read(rubric_name, text, hostile), scores)


@given(cases())
def test_quoted_text_before_the_answer_never_scores(case) -> None:
    rubric_name, scores, hostile = case
    text = f"The answer says:\n{hostile}\n\nMy verdict:\n{genuine(rubric_name, scores)}"
    assert_only_genuine(read(rubric_name, text, hostile), scores)


def test_the_prompts_format_example_echoed_before_the_answer_is_not_read() -> None:
    rubric = load_rubric("riddle_accuracy")
    ids = ["17", "18", "19"]
    items = [Item(i, {c: "text" for c in rubric.input_columns}) for i in ids]
    for structured in (False, True):
        messages = tuple(rubric.render(items, structured=structured))
        request = ChatRequest(messages, shown=rubric.shown_texts(items))
        example = "17,5\n18,0\n19,3"  # the rubric's own illustration
        if structured:
            entries = [{"id": i, "score": v} for i, v in zip(ids, (5, 0, 3), strict=True)]
            example = json.dumps({"scores": entries})
        parsed = rubric.parse(f"{example}\n17,3\n18,3\n19,0", ids, request=request)
        assert [(v.status, v.score) for v in parsed.verdicts] == [(Status.OK, 3.0)] * 2 + [
            (Status.OK, 0.0)
        ]
        assert "echoed_text_ignored" in parsed.tolerances
