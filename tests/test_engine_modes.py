"""A judging mode carries everything that differs by mode: its runner, its estimate, its options."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from judgekit.engine import MODES, Mode, OpenAIJudge, preview, register_mode
from judgekit.engine.independent import run_independent
from judgekit.engine.options import JudgeOptions
from judgekit.engine.plan import FirstAsks, RunPlan
from judgekit.engine.session import JudgeSession
from judgekit.rubrics import load_rubric
from judgekit.types import Item, UsageError

ITEMS = [
    Item(str(i), {"Question": f"Riddle {i}?", "Answer": "a", "Ref_Answer": "r"}) for i in "123"
]
CLIENT = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", provider="simulator")


def _two_huge_asks(session: JudgeSession, plans: Sequence[RunPlan]) -> FirstAsks:
    return [(1000, 1), (3000, 2)], 1, None


@pytest.fixture
def budgeted() -> Iterator[None]:
    register_mode("budgeted", Mode(run_independent, _two_huge_asks, context_tokens=True))
    yield
    del MODES["budgeted"]


def test_the_estimate_comes_from_the_mode(budgeted: None) -> None:
    options = JudgeOptions(mode="budgeted", context_tokens=500)
    request, estimate = preview(ITEMS, load_rubric("riddle_accuracy"), CLIENT, options)
    assert request is None and (estimate.requests, estimate.stored) == (2, 1)
    assert estimate.prompt_tokens == 2000  # half of the 4000 foreseen is still to send
    _, independent = preview(ITEMS, load_rubric("riddle_accuracy"), CLIENT, JudgeOptions())
    assert independent.requests == 1 and 0 < independent.prompt_tokens < 2000


def test_context_tokens_is_refused_by_a_mode_that_does_not_read_it(budgeted: None) -> None:
    rubric = load_rubric("riddle_accuracy")
    with pytest.raises(UsageError, match=r"\['budgeted', 'conversation'\] only, not 'independent'"):
        preview(ITEMS, rubric, CLIENT, JudgeOptions(context_tokens=500))
    preview(ITEMS, rubric, CLIENT, JudgeOptions(mode="conversation", context_tokens=5000))
