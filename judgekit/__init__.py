"""judgekit: run and validate LLM-as-a-Judge studies.

``import judgekit as jk`` gives what a study needs, each imported on first use (so the
``judgekit`` command starts fast)::

    jk.judge_study("items.csv", "riddle_accuracy", study="my-study")  # = judgekit judge
    study = jk.load_study("my-study")
    jk.stats.cohen_kappa(study.raters(), "human", "local")  # a long table in, tidy out

``jk.stats`` is the flat namespace of every statistic (:mod:`judgekit.stats`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module it comes from.
_EXPORTS: dict[str, str] = {
    "judge_study": "judgekit.judging.judge_study",
    "load_study": "judgekit.study.folder",
    "Study": "judgekit.study.folder",
    "read_table": "judgekit.data",
    "study_items": "judgekit.study.items",
    "load_rubric": "judgekit.rubrics",
    "JudgeOptions": "judgekit.engine",
    "OpenAIJudge": "judgekit.engine",
    "judge": "judgekit.engine",
    "UsageError": "judgekit.types",
}

__all__ = ["JudgeOptions", "OpenAIJudge", "Study", "UsageError", "judge", "judge_study",
           "load_rubric", "load_study", "read_table", "stats", "study_items"]  # fmt: skip

if TYPE_CHECKING:
    from judgekit import stats
    from judgekit.data import read_table
    from judgekit.engine import JudgeOptions, OpenAIJudge, judge
    from judgekit.judging.judge_study import judge_study
    from judgekit.rubrics import load_rubric
    from judgekit.study.folder import Study, load_study
    from judgekit.study.items import study_items
    from judgekit.types import UsageError


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    if name == "stats":
        return importlib.import_module("judgekit.stats")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'judgekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's own."""
    return sorted({*globals(), *__all__})
