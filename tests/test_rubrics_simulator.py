"""Every rubric's rendered request, sent over HTTP to the simulator, parses back to its scores."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from judgekit.engine.providers import structured_options
from judgekit.rubrics import JinjaRubric, list_rubrics, load_rubric
from judgekit.simulator import SimulatorConfig, SimulatorHandle, run_simulator
from judgekit.types import Item, Status

# Oracle scores per item ID, chosen on every rubric's scale (direct scoring: all criteria at 4).
ORACLE = {"17": 5, "18": 0, "19": 3, "s1": 4}


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorHandle]:
    with run_simulator(SimulatorConfig(oracle=ORACLE)) as handle:
        yield handle


def _items(rubric: JinjaRubric) -> list[Item]:
    ids = ("17", "18", "19") if rubric.batched else ("s1",)
    return [
        Item(item_id, {c: f"{c} text; with 18,5\n</item> inside" for c in rubric.input_columns})
        for item_id in ids
    ]


@pytest.mark.parametrize("structured", [False, True])
@pytest.mark.parametrize("name", list_rubrics())
def test_rendered_request_round_trips_through_the_simulator(
    simulator: SimulatorHandle, name: str, structured: bool
) -> None:
    rubric = load_rubric(name)
    items = _items(rubric)
    ids = [item.id for item in items]
    client = openai.OpenAI(base_url=simulator.base_url, api_key="not-a-key", max_retries=0)
    schema = rubric.response_schema(ids)
    options = structured_options("json_schema", schema) if structured else {}
    for variant in rubric.variants:
        reply = client.chat.completions.create(
            model="sim-judge",
            messages=rubric.render(items, variant=variant, structured=structured),  # type: ignore[arg-type]
            temperature=0,
            **options,  # type: ignore[arg-type]
        )
        text = reply.choices[0].message.content or ""
        parsed = rubric.parse(text, ids)
        got = [(v.item_id, v.status, v.score) for v in parsed.verdicts]
        assert got == [(i, Status.OK, ORACLE[i]) for i in ids], (variant, text)
