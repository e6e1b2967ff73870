"""Counts and rates of every verdict status, per judge and variant (abstentions kept apart)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, require_columns
from judgekit.types import Status


def status_summary(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = ("model", "variant"),
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Count and rate of each status per group; every known status appears, zero counts included.

    An ``ok`` row whose score is an abstention value (e.g. -1 in a table that was not parsed by
    judgekit) is counted as ``abstain``. Rates are shares of the group's rows.

    Args:
        df: Long judgments table (e.g. the engine's, columns ``model``, ``variant``, ``status``).
        by: Grouping columns (judge, variant, ...); those absent from ``df`` are skipped.
        columns: The status column, and the score column and abstention values used to spot
            an ``ok`` row that abstains (scores ignored when the score column is absent).

    Returns:
        Columns: the ``by`` columns, status, count, n (rows in the group), rate.

    Examples:
        >>> import pandas as pd
        >>> statuses = ["ok", "ok", "missing", "ok"]
        >>> judged = pd.DataFrame({"model": "m", "variant": "base", "status": statuses})
        >>> summary = status_summary(judged)
        >>> print(summary[summary["count"] > 0][["status", "count", "rate"]].to_string(index=False))
         status  count  rate
             ok      3  0.75
        missing      1  0.25
    """
    status_col = columns.status or "status"
    require_columns(df, [status_col])
    groups = [c for c in by if c in df.columns]
    status = df[status_col].astype(str)
    if columns.score in df.columns:
        is_abstain = (status == Status.OK.value) & df[columns.score].isin(list(columns.abstain))
        status = status.mask(is_abstain, Status.ABSTAIN.value)
    known = [s.value for s in Status]
    levels = known + sorted(set(status) - set(known))
    frame = df[groups].copy()
    frame["status"] = pd.Categorical(status, categories=levels)
    counts = frame.groupby([*groups, "status"], observed=False).size().rename("count")
    tidy = counts.reset_index()
    totals = tidy.groupby(groups, observed=True)["count"].transform("sum") if groups else None
    tidy["n"] = totals if totals is not None else tidy["count"].sum()
    tidy["rate"] = tidy["count"] / tidy["n"].where(tidy["n"] > 0)
    tidy["status"] = tidy["status"].astype(str)
    return tidy
