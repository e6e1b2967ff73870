"""Rubric library: packaged rubrics (one folder each), a user's rubric folders and prompt files.

>>> from judgekit.rubrics import load_rubric
>>> rubric = load_rubric("riddle_accuracy")
>>> rubric.scale.allowed
(0, 3, 5)
"""

from __future__ import annotations

from judgekit.rubrics.base import JinjaRubric
from judgekit.rubrics.loader import list_rubrics, load_rubric
from judgekit.rubrics.prompt import PromptRubric
from judgekit.rubrics.prompt_file import rubric_from_prompt_file

__all__ = ["JinjaRubric", "PromptRubric", "list_rubrics", "load_rubric", "rubric_from_prompt_file"]
