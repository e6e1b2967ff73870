"""Which (rubric, variant, judge, run) a report notebook covers, and how each is named.

A study accumulates every combination judged into it; the report notebooks compute their
tables for every one of them (rows keyed by ``rubric``, ``judge``, ``variant``, ``run``) unless
a parameter picks one variant or run. These helpers are the one way to select them, to list
them in order and to name one in a figure or a printed line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.data.tidy import HUMAN
from judgekit.types import UsageError

#: What identifies one judged combination (the judgments' columns).
KEYS = ("rubric", "variant", "judge", "run")


def selected(verdicts: pd.DataFrame, variant: str = "", run: int = 0) -> pd.DataFrame:
    """The verdicts of one prompt variant and one run; ``""`` or ``0``: every one judged.

    Raises:
        UsageError: When the study holds no verdicts of that variant or run: a notebook
            parameter to fix, named in one line with what was judged.
    """
    chosen = verdicts
    if variant:
        chosen = chosen[chosen["variant"] == variant]
    if run:
        chosen = chosen[chosen["run"] == run]
    if chosen.empty:
        judged = ", ".join(
            f"{v} run {r}" for v, r in verdicts[["variant", "run"]].drop_duplicates().values
        )
        raise UsageError(
            f"parameters variant={variant!r}, run={run}: no verdicts; judged: {judged}"
            ' (variant="" and run=0 take every one)'
        )
    return chosen


def combinations(
    frame: pd.DataFrame, keys: Sequence[str]
) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """Each distinct combination of ``keys`` in ``frame`` (in the order judged), with its rows."""
    for values, rows in frame.groupby(list(keys), sort=False):
        yield dict(zip(keys, values, strict=True)), rows


def label(combination: Mapping[Any, Any]) -> str:
    """``riddle_accuracy · base · run 1``: one combination, as figures and lines name it."""
    return " · ".join(f"run {v}" if k == "run" else str(v) for k, v in combination.items())


def each_with_human(
    long: pd.DataFrame, keys: Sequence[str] = ("variant", "run"), **known: Any
) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """A :func:`~judgekit.data.tidy.rater_table`'s judges one combination of ``keys`` at a time.

    Yields each combination (with ``known``, e.g. ``rubric=...``, in front) and its judges'
    rows with every human row of the table (the human has no variant or run).
    """
    judged, human = long[long["rater"] != HUMAN], long[long["rater"] == HUMAN]
    for combination, rows in combinations(judged, keys):
        yield {**known, **combination}, pd.concat([human, rows], ignore_index=True)
