"""What the report steps that score single answers analyse (02-05, 07-09).

Every rubric of the study but the pairwise ones (10_pairwise reports them) and those it knows no
scale of (an import that stated none): each left out is one ``skipped`` line, so a study that
mixes them reports the rest.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from judgekit.study.rubrics import NoScale
from judgekit.types import UsageError

if TYPE_CHECKING:
    from judgekit.study.folder import Study

#: Why a rubric is left out: an import stated no scale (or an old study kept no copy of it).
NO_SCALE = (
    "has no known scale (imported without one, or judged before copies were kept); import "
    "again with --scale MIN-MAX, or judge again with --rubric FILE_OR_FOLDER"
)


def without_rubrics(study: Study, names: Collection[str]) -> Study:
    """The study without the judgments, verdicts and labels of the rubrics ``names``."""

    def kept(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[~frame["rubric"].astype(str).isin(names)].reset_index(drop=True)

    return replace(
        study, judgments=kept(study.judgments), verdicts=kept(study.verdicts),
        labels=kept(study.labels),
    )  # fmt: skip


def without_pairwise(study: Study) -> tuple[Study, list[str]]:
    """The study without its pairwise rubrics, and their names (the direct steps score answers).

    Raises:
        UsageError: For a study whose every judged rubric is pairwise.
    """
    names = study.pairwise_rubrics()
    if not names:
        return study, []
    if set(study.judgments["rubric"].astype(str)) <= set(names):
        raise UsageError(
            f"the study's rubrics are pairwise ({', '.join(names)}): open 10_pairwise, which "
            "reports them"
        )
    return without_rubrics(study, names), names


def unscaled_rubrics(study: Study) -> list[str]:
    """The judged rubrics whose scale the study does not know, sorted."""
    missing = []
    for name in sorted(set(study.judgments["rubric"].astype(str))):
        try:
            study.rubric(name)
        except NoScale:
            missing.append(name)
    return missing


def scored_study(study: Study) -> tuple[Study, list[str]]:
    """The study a direct step analyses, and a ``skipped rubric ...: why`` line for each left out.

    Raises:
        UsageError: When no rubric is left (every one pairwise or without a scale).
    """
    direct, pairwise = without_pairwise(study)
    lines = [f"skipped pairwise rubric {name}: this step scores single answers (see 10_pairwise)"
             for name in pairwise]  # fmt: skip
    unscaled = unscaled_rubrics(direct)
    if not unscaled:
        return direct, lines
    if set(direct.judgments["rubric"].astype(str)) <= set(unscaled):
        raise UsageError(f"rubric {', '.join(unscaled)} {NO_SCALE}")
    lines += [f"skipped rubric {name}: it {NO_SCALE}" for name in unscaled]
    return without_rubrics(direct, unscaled), lines
