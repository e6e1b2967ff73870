"""A judge panel read from a long table: one column of usable scores per judge, side by side.

Every panel statistic starts here. A cell is a score only when the row's status is ``ok``, the
score is present and not an abstention (:func:`~judgekit.stats._prep.usable_scores`); every
other cell keeps its reason (the status, ``abstain``, ``missing`` or ``not rated``) so that a
judge that failed to score stays visible instead of silently leaving the panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.stats._prep import (
    Columns,
    IntArray,
    ScaleLike,
    check_on_scale,
    cluster_codes,
    item_clusters,
    scale_values,
    usable_scores,
)
from judgekit.types import UsageError

NOT_RATED = "not rated"


@dataclass(frozen=True)
class Panel:
    """Scores of several raters on the same items.

    Attributes:
        scores: Items x raters, the usable score or NaN.
        reasons: Items x raters, ``""`` where the score is usable, else why it is not.
        levels: The ordered scale levels.
        clusters: Item -> cluster label (None when not clustered).
    """

    scores: pd.DataFrame
    reasons: pd.DataFrame
    levels: tuple[float, ...]
    clusters: pd.Series | None

    def complete(self, raters: Sequence[object]) -> pd.Series:
        """Whether each item has a usable score from every one of ``raters``."""
        return self.scores[list(raters)].notna().all(axis=1)

    def cluster_codes(self, items: Sequence[object]) -> IntArray | None:
        """0-based cluster index of ``items`` (None when not clustered)."""
        return cluster_codes(items, self.clusters)


def panel_scores(
    df: pd.DataFrame,
    raters: Sequence[object],
    *,
    scale: ScaleLike,
    columns: Columns,
) -> Panel:
    """Pivot the usable scores of ``raters`` into items x raters, keeping each gap's reason.

    Raises:
        UsageError: when a rater has no rows or a score is off the scale.
    """
    names = list(raters)
    present = set(df[columns.rater])
    absent = [r for r in names if r not in present]
    if absent:
        raise UsageError(
            f"no rows for rater(s) {absent} in column {columns.rater!r}; "
            f"present: {sorted(map(str, present))}"
        )
    usable = usable_scores(df[df[columns.rater].isin(names)], columns, scale)
    levels = scale_values(scale, usable.scores["score"])
    check_on_scale(usable.scores["score"], levels, columns.score)
    items = list(pd.unique(df.loc[df[columns.rater].isin(names), columns.item]))
    wide = usable.scores.pivot(index="item", columns="rater", values="score")
    wide = wide.reindex(index=items, columns=names).astype(float)
    reasons = pd.DataFrame(np.where(wide.isna(), NOT_RATED, ""), index=items, columns=names)
    failed = usable.reasons.drop_duplicates(["item", "rater"], keep="last")
    gaps = failed.pivot(index="item", columns="rater", values="reason")
    gaps = gaps.reindex(index=items, columns=names).where(wide.isna())
    reasons = reasons.mask(gaps.notna(), gaps)
    wide.index.name = reasons.index.name = "item"
    return Panel(wide, reasons, levels, item_clusters(df, columns))


def nearest_level(values: np.ndarray, levels: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Map values to the nearest scale level; a value exactly midway is a tie (NaN, flagged).

    Returns:
        The level (NaN for a tie or a missing value) and a boolean "tie" mask.
    """
    grid = np.asarray(levels, dtype=float)
    gaps = np.abs(np.asarray(values, dtype=float)[:, None] - grid[None, :])
    best = np.nanmin(gaps, axis=1, initial=np.inf)
    ties = np.isfinite(best) & (np.sum(np.isclose(gaps, best[:, None], atol=1e-9), axis=1) > 1)
    chosen = grid[np.argmin(np.where(np.isnan(gaps), np.inf, gaps), axis=1)]
    out = np.where(np.isfinite(best) & ~ties, chosen, np.nan)
    return out, ties


def require_judges(judges: Sequence[object], minimum: int, what: str) -> list[object]:
    """The judges as a list; a one-line error when there are fewer than ``minimum``."""
    names = list(dict.fromkeys(judges))
    if len(names) < minimum:
        raise UsageError(f"{what} needs at least {minimum} judges, got {names}")
    return names
