"""A request is rendered once (the estimate does not render every request, the reader never
does), and its rubric's format is never looked up by name on the way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from judgekit.engine import OpenAIJudge, judge, preview
from judgekit.engine.options import JudgeOptions
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item


def _items(n: int) -> list[Item]:
    return [
        Item(str(i), {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": "R"})
        for i in range(1, n + 1)
    ]


def _counting(monkeypatch: pytest.MonkeyPatch, rubric: Any) -> list[int]:
    calls: list[int] = []
    render: Callable[..., Any] = rubric.render

    def counted(items: Any, **kwargs: Any) -> Any:
        calls.append(len(items))
        return render(items, **kwargs)

    monkeypatch.setattr(rubric, "render", counted)
    return calls


@pytest.mark.parametrize("variants", [("base",), ("base", "paraphrase_1")])
def test_each_request_is_rendered_once_online_and_on_replay(
    monkeypatch: pytest.MonkeyPatch, tmp_path, variants: tuple[str, ...]
) -> None:
    rubric = load_rubric("riddle_accuracy")
    renders = _counting(monkeypatch, rubric)
    requests = 3 * 2 * len(variants)  # 6 items in batches of 2, two runs, per variant
    with run_simulator(SimulatorConfig()) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        options = JudgeOptions(
            batch_size=2, runs=2, variants=variants, store=tmp_path / "s.sqlite", progress=False
        )
        first = judge(_items(6), rubric, client, options)
        assert first.attrs["api_calls"] == requests and len(renders) == requests
        renders.clear()
        again = judge(_items(6), rubric, client, options)
    assert again.attrs["replayed"] == requests and len(renders) == requests
    assert again.attrs["estimate"]["stored"] == requests
    assert first.drop(columns="latency_s").equals(again.drop(columns="latency_s"))


def test_the_preview_renders_one_request_per_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    rubric = load_rubric("riddle_accuracy")
    renders = _counting(monkeypatch, rubric)
    client = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", provider="simulator")
    options = JudgeOptions(batch_size=1, runs=3, variants=("base", "paraphrase_1"))
    request, estimate = preview(_items(50), rubric, client, options)
    assert len(renders) == 2 and estimate.requests == 300 and estimate.stored == 0
    assert request is not None and "Riddle 1?" in request.messages[-1]["content"]
    assert request.shown == ("Riddle 1?\nAnswer 1\nR",)


class _CountingRegistry(dict):
    """The formats registry, counting every look-up by name."""

    def __init__(self, registered: dict[str, Any]) -> None:
        super().__init__(registered)
        self.lookups = 0

    def __getitem__(self, name: str) -> Any:
        self.lookups += 1
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(name, default)


@pytest.mark.parametrize("mode", ["independent", "conversation"])
def test_the_request_path_never_looks_a_format_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path, mode: str
) -> None:
    from judgekit.formats import spec

    options = JudgeOptions(batch_size=2, store=tmp_path / "s.sqlite", progress=False, mode=mode)
    with run_simulator(SimulatorConfig()) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        online = judge(_items(6), load_rubric("riddle_accuracy"), client, options)
    rubric = load_rubric("riddle_accuracy")  # the format is found here, once
    registry = _CountingRegistry(spec._REGISTRY)
    monkeypatch.setattr(spec, "_REGISTRY", registry)
    offline = judge(_items(6), rubric, client, options, offline=True)  # estimate, render, parse
    assert registry.lookups == 0
    assert offline.attrs["replayed"] == online.attrs["api_calls"] > 0
    load_rubric("riddle_accuracy")
    assert registry.lookups == 1  # the counter sees the loader's look-up: it is not blind
