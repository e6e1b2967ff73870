"""Every public statistic shows a call and its output in its docstring (run by `make test`)."""

from __future__ import annotations

import doctest
import inspect

import pytest

from judgekit import config, stats

#: The statistics and the two specs they take (the result containers are described by them).
FUNCTIONS = sorted(n for n in stats.__all__ if inspect.isfunction(getattr(stats, n)))
PUBLIC = [*FUNCTIONS, "CI", "Columns"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_statistic_has_a_runnable_example(name: str) -> None:
    target = getattr(stats, name)
    examples = doctest.DocTestParser().get_examples(inspect.getdoc(target) or "")
    assert examples, f"judgekit.stats.{name} has no >>> example in its docstring"


def test_make_test_runs_the_examples() -> None:
    makefile = (config.ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-m pytest --doctest-modules judgekit/stats" in makefile
