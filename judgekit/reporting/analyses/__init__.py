"""The report's steps as functions: ``ANALYSES[notebook](study, **parameters) -> Analysis``."""

from __future__ import annotations

from collections.abc import Callable

from judgekit.reporting.analysis import Analysis

#: Each report step's function by its notebook's name (each module registers its own).
ANALYSES: dict[str, Callable[..., Analysis]] = {}


def step(notebook: str) -> Callable[[Callable[..., Analysis]], Callable[..., Analysis]]:
    """Register the decorated function as the analysis of ``notebook``."""

    def register(function: Callable[..., Analysis]) -> Callable[..., Analysis]:
        ANALYSES[notebook] = function
        return function

    return register


# each step module registers itself on import (after `step` exists)
from judgekit.reporting.analyses import agreement as _agreement  # noqa: E402, F401
from judgekit.reporting.analyses import batch_effects as _batch_effects  # noqa: E402, F401
from judgekit.reporting.analyses import consistency as _consistency  # noqa: E402, F401
from judgekit.reporting.analyses import distributions as _distributions  # noqa: E402, F401
from judgekit.reporting.analyses import human_labels as _human_labels  # noqa: E402, F401
from judgekit.reporting.analyses import pairwise as _pairwise  # noqa: E402, F401
from judgekit.reporting.analyses import panel as _panel  # noqa: E402, F401
from judgekit.reporting.analyses import paraphrase as _paraphrase  # noqa: E402, F401

__all__ = ["ANALYSES", "Analysis", "step"]
