"""Jury scores: a panel of judges combined into one score per item.

Every jury returns rows in the input table's own columns (item, rater = ``jury:<method>``,
score, status, and the cluster column when set), so ``pd.concat([long, juries])`` can be fed
to any two-rater statistic against the human. An item a jury cannot score keeps its own status,
never a number picked by list order:

* ``judge_unscored``: a judge of the panel failed to score it (mean, median, learned weights
  need every judge; the ``unscored`` column names who and why);
* ``tie``: two levels hold the same votes (majority) or posterior (:mod:`.jury_models`);
* ``no_majority``: no level holds a strict majority of the *whole* panel (a judge that failed
  counts as a vote for no level);
* ``unscored``: no judge scored it.

Mean and median are mapped to the nearest scale level by value, and a value exactly midway
between two levels (a two-judge mean of 6 and 7, the median of an even panel) rounds *up* to the
higher level: a pooled jury never drops an item for a half-point average. ``value`` keeps the
unrounded mean or median. Dawid-Skene and the learned weights live in :mod:`.jury_models`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit.stats._panel import Panel, panel_scores, require_judges
from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, ScaleLike

#: The simple juries :func:`jury_scores` offers.
SIMPLE_JURIES: tuple[str, ...] = ("mean", "median", "majority")
JURY_PREFIX = "jury:"


def jury_name(method: str) -> str:
    """The rater name of a jury (``jury:mean``)."""
    return f"{JURY_PREFIX}{method}"


def unscored_text(panel: Panel, judges: Sequence[object]) -> pd.Series:
    """Per item, ``"judge: reason; ..."`` for every judge of ``judges`` without a usable score."""
    reasons = panel.reasons[list(judges)].to_numpy(str)
    names = [f"{judge}: " for judge in judges]
    text = [
        "; ".join(name + why for name, why in zip(names, row, strict=True) if why)
        for row in reasons
    ]
    return pd.Series(text, index=panel.reasons.index, dtype=str)


def jury_rows(
    panel: Panel,
    method: str,
    score: np.ndarray,
    status: np.ndarray,
    value: np.ndarray,
    judges: Sequence[object],
    columns: Columns,
) -> pd.DataFrame:
    """A jury's verdicts as rows in the input's columns, plus value, n_scored and unscored."""
    items = panel.scores.index
    rows = pd.DataFrame(
        {
            columns.item: items.to_numpy(object),
            columns.rater: jury_name(method),
            columns.score: np.where(status == "ok", score, np.nan),
            columns.status or "status": status,
            "value": value,
            "n_scored": panel.scores[list(judges)].notna().sum(axis=1).to_numpy(),
            "unscored": unscored_text(panel, judges).to_numpy(),
        }
    )
    if columns.cluster is not None and panel.clusters is not None:
        rows[columns.cluster] = panel.clusters.reindex(items).to_numpy(object)
    return rows


def with_juries(
    df: pd.DataFrame, *juries: pd.DataFrame, columns: Columns = DEFAULT_COLUMNS
) -> pd.DataFrame:
    """``df`` with the jury rows appended; rows of a table without a status column count as ``ok``.

    Example:
        >>> long = pd.DataFrame({"item": [1, 1], "rater": ["a", "b"], "score": [3, 3]})
        >>> both = with_juries(long, jury_scores(long, ["a", "b"], methods=["majority"]))
        >>> list(both["status"])
        ['ok', 'ok', 'ok']
    """
    status = columns.status or "status"
    base = df if status in df.columns else df.assign(**{status: "ok"})
    return pd.concat([base, *juries], ignore_index=True)


def round_half_up(values: np.ndarray, levels: Sequence[float]) -> np.ndarray:
    """Each value's nearest level; exactly midway between two, the higher one (NaN stays NaN).

    Example:
        >>> round_half_up(np.array([6.5, 6.4, 4.0, np.nan]), [0, 3, 5, 6, 7, 10]).tolist()
        [7.0, 6.0, 5.0, nan]
    """
    grid = np.asarray(levels, dtype=float)
    gaps = np.abs(np.asarray(values, dtype=float)[:, None] - grid[None, :])
    # Among levels as near as the nearest (to rounding noise), the highest.
    near = np.isclose(gaps, np.nanmin(gaps, axis=1, initial=np.inf)[:, None], atol=1e-9)
    chosen = np.where(near, grid[None, :], -np.inf).max(axis=1, initial=-np.inf)
    return np.where(np.isnan(values), np.nan, chosen)


def _pooled(panel: Panel, judges: list[object], how: str) -> tuple[np.ndarray, ...]:
    """Mean or median of a complete panel, mapped to the nearest level (midway: the higher)."""
    votes = panel.scores[judges].to_numpy(float)
    complete = ~np.isnan(votes).any(axis=1)
    with np.errstate(all="ignore"):
        value = np.nanmean(votes, axis=1) if how == "mean" else np.nanmedian(votes, axis=1)
    value = np.where(complete, value, np.nan)
    score = round_half_up(value, panel.levels)
    status = np.full(len(value), "ok", dtype=object)
    status[~complete] = "judge_unscored"
    status[np.isnan(votes).all(axis=1)] = "unscored"
    return score, status, value


def _majority(panel: Panel, judges: list[object]) -> tuple[np.ndarray, ...]:
    """The level holding more than half of the whole panel's votes, else why there is none."""
    votes = panel.scores[judges].to_numpy(float)
    levels = np.asarray(panel.levels, dtype=float)
    counts = (votes[:, :, None] == levels[None, None, :]).sum(axis=1)
    top = counts.max(axis=1)
    winner = levels[np.argmax(counts, axis=1)]
    strict = top * 2 > len(judges)
    tied = (counts == top[:, None]).sum(axis=1) > 1
    status = np.where(strict, "ok", np.where(tied, "tie", "no_majority")).astype(object)
    status[np.isnan(votes).all(axis=1)] = "unscored"
    return np.where(strict, winner, np.nan), status, top / len(judges)


def jury_scores(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    methods: Sequence[str] = SIMPLE_JURIES,
    scale: ScaleLike = None,
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Mean, median and strict-majority juries of a panel, one row per item and jury.

    * mean: ``(1/k) sum_j s_ij`` over the k judges, the nearest scale level by value, exactly
      midway the higher of the two (round half up: a two-judge 6.5 is 7);
    * median: the panel's median, the nearest level by the same rule (an even panel's median
      can fall midway);
    * majority: the level ``l`` with ``#{j: s_ij = l} > k / 2``, k counting every judge of the
      panel, also those that failed to score (a strict majority of the panel, as in
      Verga et al. 2024's max voting, but a tie or a split is reported, not broken).

    Reference: Verga, P. et al. (2024). Replacing Judges with Juries: Evaluating LLM
    Generations with a Panel of Diverse Models. arXiv:2404.18796.

    Args:
        df: Long table (item, rater, score, status; cluster optional).
        judges: The panel: values of the rater column.
        methods: Any of "mean", "median", "majority".
        scale: Ordered levels; default the observed scores.
        columns: Column names (:class:`Columns`).

    Returns:
        Rows in ``df``'s columns (rater ``jury:<method>``), plus ``value`` (the unrounded mean
        or median; for majority the winning level's share of the panel), ``n_scored`` and
        ``unscored`` (``"judge: reason"`` for each judge without a score).

    Example:
        >>> long = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "rater": list("abcabc"),
        ...                      "score": [5, 5, 3, 0, 3, 5]})
        >>> jury = jury_scores(long, ["a", "b", "c"], scale=(0, 3, 5))
        >>> list(jury.loc[jury["rater"] == "jury:mean", "score"])
        [5.0, 3.0]
        >>> list(jury.loc[jury["rater"] == "jury:majority", "status"])
        ['ok', 'tie']
        >>> pair = long[long["rater"] != "c"]
        >>> two = jury_scores(pair, ["a", "b"], methods=["mean"], scale=(0, 3, 5))
        >>> two[["score", "status", "value"]].values.tolist()
        [[5.0, 'ok', 5.0], [3.0, 'ok', 1.5]]
    """
    names = require_judges(judges, 1, "a jury")
    unknown = sorted(set(methods) - set(SIMPLE_JURIES))
    if unknown:
        raise ValueError(f"jury methods must be among {SIMPLE_JURIES}, got {unknown}")
    panel = panel_scores(df, names, scale=scale, columns=columns)
    parts = []
    for method in methods:
        if method == "majority":
            score, status, value = _majority(panel, names)
        else:
            score, status, value = _pooled(panel, names, method)
        parts.append(jury_rows(panel, method, score, status, value, names, columns))
    return pd.concat(parts, ignore_index=True)
