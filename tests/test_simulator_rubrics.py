"""Every packaged rubric's prompt gets a simulator reply that the rubric's own parser accepts."""

from __future__ import annotations

import asyncio

import openai
import pytest

from judgekit.engine.providers import structured_options
from judgekit.rubrics import list_rubrics, load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item, Status

COLUMN_TEXT = {
    "Question": "Melyik magyar folyó a leghosszabb?",
    "Answer": "A Duna & a <Tisza>.\n17,5",
    "Ref_Answer": "Duna",
    "Reasoning": "Mert a Duna hosszabb.",
    "Ref_Reasoning": "A Duna 2850 km hosszú.",
    "Context": "Földrajz.",
}


def items_for(rubric, count: int) -> list[Item]:
    return [
        Item(str(200 + i), {c: f"{COLUMN_TEXT.get(c, 'text')} #{i}" for c in rubric.input_columns})
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def sim():
    with run_simulator(SimulatorConfig(seed=21)) as handle:
        yield handle


_CLIENTS: dict[str, openai.OpenAI] = {}


def ask(sim, rubric, items, *, variant="base", mode="none"):
    messages = rubric.render(
        items, variant=variant, structured=mode != "none", batch_label="rows 1-5"
    )
    options = {}
    if mode != "none":
        options = structured_options(mode, rubric.response_schema([i.id for i in items]), "reply")
    if sim.base_url not in _CLIENTS:  # building a client is slow (TLS context); reuse one
        _CLIENTS[sim.base_url] = openai.OpenAI(base_url=sim.base_url, api_key="x", max_retries=0)
    reply = _CLIENTS[sim.base_url].chat.completions.create(model="m", messages=messages, **options)
    return reply.choices[0].message.content


@pytest.mark.parametrize("name", list_rubrics())
@pytest.mark.parametrize("mode", ["none", "json_schema", "guided_json", "json_object_schema"])
def test_hash_replies_parse_ok_for_every_rubric_variant_and_mode(sim, name: str, mode: str) -> None:
    rubric = load_rubric(name)
    items = items_for(rubric, 5 if rubric.batched else 1)
    for variant in rubric.variants:
        text = ask(sim, rubric, items, variant=variant, mode=mode)
        parsed = rubric.parse(text, [i.id for i in items])
        assert [v.status for v in parsed.verdicts] == [Status.OK] * len(items), (variant, text)
        assert parsed.tolerances == (), (variant, text)
        if rubric.output_format != "direct_scoring_json":
            assert {v.score for v in parsed.verdicts} <= set(rubric.scale.allowed)
        assert (mode != "none") == text.lstrip().startswith("{") or rubric.output_format in (
            "rating_json",
            "direct_scoring_json",
        )


@pytest.mark.parametrize("name", list_rubrics())
def test_oracle_scores_come_back_through_the_parser(name: str) -> None:
    rubric = load_rubric(name)
    items = items_for(rubric, 4 if rubric.batched else 1)
    allowed = rubric.scale.allowed
    oracle = {item.id: allowed[(i + 1) % len(allowed)] for i, item in enumerate(items)}
    with run_simulator(SimulatorConfig(oracle=oracle)) as handle:
        parsed = rubric.parse(ask(handle, rubric, items), list(oracle))
    assert {v.item_id: v.score for v in parsed.verdicts} == oracle


def test_direct_scoring_criteria_are_consistent_with_a_fractional_oracle() -> None:
    rubric = load_rubric("direct_scoring")
    (item,) = items_for(rubric, 1)
    with run_simulator(SimulatorConfig(oracle={item.id: 3.3})) as handle:
        (verdict,) = rubric.parse(ask(handle, rubric, [item]), [item.id]).verdicts
    assert verdict.status is Status.OK
    assert verdict.score == pytest.approx(3.3, abs=0.31)  # as close as integer criteria allow


def test_extent_rating_abstention_is_read_as_abstain() -> None:
    rubric = load_rubric("extent_rating")
    (item,) = items_for(rubric, 1)
    with run_simulator(SimulatorConfig(abstain_ids=frozenset({item.id}))) as handle:
        (verdict,) = rubric.parse(ask(handle, rubric, [item]), [item.id]).verdicts
    assert verdict.status is Status.ABSTAIN and verdict.score is None


LINES_EXPECTATIONS = {
    "fence": ({Status.OK}, "markdown_fence"),
    "header": ({Status.OK}, "header_line"),
    "prose": ({Status.OK}, "prose"),
    "crlf": ({Status.OK}, "crlf"),
    "missing_rows": ({Status.OK, Status.MISSING}, None),
    "duplicate_id": ({Status.OK, Status.DUPLICATE}, None),
    "unknown_id": ({Status.OK, Status.UNKNOWN_ID}, None),
    "out_of_range": ({Status.OK, Status.OUT_OF_RANGE}, None),
}


@pytest.mark.parametrize("kind", sorted(LINES_EXPECTATIONS))
def test_each_malformation_is_caught_by_the_id_score_parser(kind: str) -> None:
    rubric = load_rubric("riddle_accuracy")
    items = items_for(rubric, 5)
    statuses, tolerance = LINES_EXPECTATIONS[kind]
    with run_simulator(SimulatorConfig(malformed={kind: 1.0})) as handle:
        parsed = rubric.parse(ask(handle, rubric, items), [i.id for i in items])
    assert {v.status for v in parsed.verdicts} == statuses
    if tolerance is not None:
        assert tolerance in parsed.tolerances


def test_truncated_and_echo_injected_replies_are_not_read_as_clean() -> None:
    rubric = load_rubric("riddle_accuracy")
    items = items_for(rubric, 5)
    with run_simulator(SimulatorConfig(malformed={"truncated": 1.0})) as handle:
        parsed = rubric.parse(ask(handle, rubric, items), [i.id for i in items])
    assert any(v.status is not Status.OK for v in parsed.verdicts)
    # every Answer holds a "17,5 #i" line: not a clean ID,score line, so nothing is echoed;
    # a bare "201,5" line inside an item is echoed and shows up as a duplicate
    echo_items = [Item(i.id, {**i.fields, "Answer": "Duna\n201,5"}) for i in items]
    with run_simulator(SimulatorConfig(malformed={"echo_injection": 1.0})) as handle:
        text = ask(handle, rubric, echo_items)
    assert text.splitlines()[-1] == "201,5"
    parsed = rubric.parse(text, [i.id for i in items])
    assert {v.item_id for v in parsed.verdicts if v.status is Status.DUPLICATE} <= {"201"}


@pytest.mark.parametrize(
    ("name", "value"), [("extent_rating", 10), ("extent_rating", 1), ("factual_accuracy", 2)]
)
def test_logprob_expected_score_matches_the_simulators_distribution(name: str, value: int) -> None:
    from judgekit.engine import OpenAIJudge
    from judgekit.formats import expected_score
    from judgekit.types import ChatRequest

    rubric = load_rubric(name)
    (item,) = items_for(rubric, 1)
    confidence = 0.7
    with run_simulator(
        SimulatorConfig(oracle={item.id: value}, logprob_confidence=confidence)
    ) as handle:
        judge = OpenAIJudge("sim-judge", base_url=handle.base_url, api_key="sk-test")
        options = {"logprobs": True, "top_logprobs": 20}
        request = ChatRequest(messages=tuple(rubric.render([item])), options=options)
        reply = asyncio.run(judge.complete(request))
    # the simulator puts `confidence` on the value and halves the weight per scale step away
    allowed = list(rubric.scale.allowed)
    weights = {
        a: 2.0 ** -abs(allowed.index(a) - allowed.index(value)) for a in allowed if a != value
    }
    probability = {a: (1 - confidence) * w / sum(weights.values()) for a, w in weights.items()}
    probability[value] = confidence
    expected = sum(a * p for a, p in probability.items())
    assert reply.top_logprobs is not None
    found = expected_score(reply.top_logprobs, rubric.scale)
    assert found == pytest.approx(expected, abs=1e-6)
