"""Input checks shared by the statistics: column lookup, status filtering, scales, pairing.

Every statistic starts from a long table (one row per item, rater and score). A row is usable
when its status (if the table has a status column) is ``ok``, its score is present and it is not
an abstention value. Unusable rows are never turned into numbers: they are counted by reason and
reported next to the estimate as ``n_dropped`` / ``dropped_reason``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgekit.data import require_columns
from judgekit.types import Scale, Status, UsageError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
ScaleLike = Scale | Sequence[float] | None

#: An estimate with its standard error and confidence bounds, in the order every table uses.
INTERVAL_COLUMNS: tuple[str, ...] = ("estimate", "se", "ci_low", "ci_high")
#: Output columns every estimate row carries, in order.
RESULT_COLUMNS: tuple[str, ...] = (
    *INTERVAL_COLUMNS,
    "n",
    "method",
    "ci_method",
    "n_dropped",
    "dropped_reason",
    "note",
)

#: Fewer units (items, or clusters when clustered) than this and an interval is not reported.
MIN_INTERVAL_UNITS = 10


@dataclass(frozen=True)
class Columns:
    """How to read a long table: which column holds what, and which scores mean "abstain".

    Attributes:
        item: Item column (one rated thing).
        rater: Rater column (or run / prompt variant, for self-agreement).
        score: Score column.
        status: Status column; ignored when absent from the table.
        cluster: Column grouping items that are not independent (e.g. the question several
            answers respond to). When set, bootstrap intervals resample whole clusters and the
            result carries the design effect; an item must sit in one cluster.
        abstain: Score values meaning "abstain" (merged with a :class:`Scale`'s own).

    Examples:
        >>> by_question = Columns(item="item_id", rater="model", cluster="question")
        >>> by_question.item, by_question.score, by_question.cluster
        ('item_id', 'score', 'question')
    """

    item: str = "item"
    rater: str = "rater"
    score: str = "score"
    status: str | None = "status"
    cluster: str | None = None
    abstain: tuple[float, ...] = (-1,)


DEFAULT_COLUMNS = Columns()


def scale_values(scale: ScaleLike, observed: Iterable[float]) -> tuple[float, ...]:
    """Return the ordered score levels: the given scale, or the sorted observed values."""
    if isinstance(scale, Scale):
        return tuple(float(v) for v in scale.allowed)
    if scale is not None:
        levels = tuple(float(v) for v in scale)
        if list(levels) != sorted(set(levels)):
            raise ValueError(f"scale values must be strictly increasing, got {tuple(scale)}")
        return levels
    return tuple(float(v) for v in np.unique(np.fromiter(observed, dtype=float)))


def abstain_values(scale: ScaleLike, abstain: Sequence[float]) -> tuple[float, ...]:
    """Merge explicit abstention values with those a :class:`Scale` declares."""
    extra = tuple(float(v) for v in scale.abstain) if isinstance(scale, Scale) else ()
    return tuple(float(v) for v in abstain) + extra


@dataclass(frozen=True)
class Usable:
    """A long table split into usable scores and the reason each other row was set aside.

    Attributes:
        scores: Rows with a usable score (columns ``item``, ``rater``, ``score``), one per
            (item, rater).
        reasons: Per input row that is not usable: ``item``, ``rater`` and ``reason``.
    """

    scores: pd.DataFrame
    reasons: pd.DataFrame


def usable_scores(df: pd.DataFrame, columns: Columns, scale: ScaleLike = None) -> Usable:
    """Split ``df`` into usable scores and dropped rows (reason = status, "abstain", "missing").

    Raises:
        ValueError: on a missing column or on two usable scores for the same item and rater.
    """
    item_col, rater_col, score_col = columns.item, columns.rater, columns.score
    status_col = columns.status
    abstain = abstain_values(scale, columns.abstain)
    require_columns(df, [item_col, rater_col, score_col])
    use_status = status_col is not None and status_col in df.columns
    score = pd.to_numeric(df[score_col], errors="coerce").astype(float)
    bad_text = df[score_col].notna() & score.isna()
    if bad_text.any():
        row = bad_text.to_numpy().nonzero()[0][0]
        raise ValueError(
            f"input table row {row}, column {score_col!r}: "
            f"not a number: {df[score_col].iloc[row]!r}"
        )
    not_ok = (
        (df[status_col].astype(str) != Status.OK.value).to_numpy()
        if use_status
        else np.zeros(len(df), dtype=bool)
    )
    is_abstain = ~not_ok & score.isin(list(abstain)).to_numpy()
    is_missing = ~not_ok & ~is_abstain & score.isna().to_numpy()
    keep = ~(not_ok | is_abstain | is_missing)
    reason = np.where(is_abstain, Status.ABSTAIN.value, Status.MISSING.value).astype(object)
    if use_status:
        reason[not_ok] = df[status_col].astype(str).to_numpy()[not_ok]
    scores = pd.DataFrame(
        {"item": df[item_col][keep], "rater": df[rater_col][keep], "score": score[keep]}
    )
    dup = scores.duplicated(["item", "rater"], keep=False)
    if dup.any():
        first = scores[dup].iloc[0]
        raise ValueError(
            f"input table: item {first['item']!r} has several usable scores from "
            f"{rater_col} {first['rater']!r} (columns {item_col!r}, {rater_col!r}); "
            "keep one row per item and rater (e.g. the last attempt)"
        )
    reasons = pd.DataFrame(
        {"item": df[item_col][~keep], "rater": df[rater_col][~keep], "reason": reason[~keep]},
        index=df.index[~keep],
    )
    return Usable(scores=scores, reasons=reasons)


def describe_drops(reasons: Iterable[str]) -> tuple[int, str]:
    """Return the number of dropped units and a ``"reason: count; ..."`` summary."""
    counts = Counter(reasons)
    text = "; ".join(f"{r}: {c}" for r, c in sorted(counts.items()))
    return sum(counts.values()), text


def check_on_scale(scores: pd.Series, levels: Sequence[float], column: str) -> None:
    """Raise a one-line ``ValueError`` for the first score that is not a scale level."""
    off = ~scores.isin(list(levels))
    if off.any():
        where = off.to_numpy().nonzero()[0][0]
        raise ValueError(
            f"input table row {scores.index[where]}, column {column!r}: score "
            f"{float(scores.iloc[where]):g} is not on the scale {tuple(float(v) for v in levels)}"
        )


def level_codes(scores: pd.Series | FloatArray, levels: Sequence[float]) -> IntArray:
    """Map scores (already checked to be on the scale) to 0-based level indices."""
    return np.searchsorted(np.asarray(levels, dtype=float), np.asarray(scores, dtype=float))


@dataclass(frozen=True)
class Pairs:
    """Two raters' scores joined on item, plus what was dropped and why."""

    a: FloatArray
    b: FloatArray
    items: npt.NDArray[np.object_]
    n_dropped: int
    dropped_reason: str


def pair_scores(usable: Usable, rater_a: object, rater_b: object) -> Pairs:
    """Join two raters on item first, then drop each pair with an unusable side.

    A pair is dropped with the reason of its first unusable side, named by its rater
    (``abstain (judge)``, ``missing (judge)``, ``not rated (human)`` for an item the other
    rater never saw).
    """
    sides = []
    for rater in (rater_a, rater_b):
        ok = usable.scores[usable.scores["rater"] == rater].set_index("item")["score"]
        bad = usable.reasons[usable.reasons["rater"] == rater]
        if ok.empty and bad.empty:
            raise ValueError(f"no rows for rater {rater!r}")
        bad = bad[~bad["item"].isin(ok.index)].drop_duplicates("item").set_index("item")
        named = bad["reason"] + f" ({rater})"
        status = pd.concat([pd.Series("", index=ok.index, dtype=object), named])
        sides.append((ok, status))
    joined = pd.concat(
        {"sa": sides[0][0], "ra": sides[0][1], "sb": sides[1][0], "rb": sides[1][1]}, axis=1
    )
    joined["ra"] = joined["ra"].fillna(f"not rated ({rater_a})")
    joined["rb"] = joined["rb"].fillna(f"not rated ({rater_b})")
    why = joined["ra"].where(joined["ra"] != "", joined["rb"])
    keep = why == ""
    n_dropped, text = describe_drops(why[~keep])
    kept = joined[keep]
    return Pairs(
        a=kept["sa"].to_numpy(float),
        b=kept["sb"].to_numpy(float),
        items=kept.index.to_numpy(object),
        n_dropped=n_dropped,
        dropped_reason=text,
    )


def item_clusters(df: pd.DataFrame, columns: Columns) -> pd.Series | None:
    """Map each item to its cluster label (None when the columns name no cluster).

    Rows without a cluster value are ignored here; :func:`cluster_codes` refuses an item that
    is used but has no cluster.

    Raises:
        ValueError: when the cluster column is missing or differs within an item.
    """
    if columns.cluster is None:
        return None
    require_columns(df, [columns.item, columns.cluster])
    pairs = df[[columns.item, columns.cluster]].dropna()
    spread = pairs.groupby(columns.item, sort=False)[columns.cluster].nunique()
    if (spread > 1).any():
        raise UsageError(
            f"item {spread[spread > 1].index[0]!r} sits in several clusters of column "
            f"{columns.cluster!r}; an item must belong to one cluster"
        )
    mapping = pairs.drop_duplicates(columns.item).set_index(columns.item)[columns.cluster]
    mapping.name = columns.cluster
    return mapping


def cluster_codes(items: Iterable[object], clusters: pd.Series | None) -> IntArray | None:
    """0-based cluster index of each item, clusters numbered in sorted label order.

    Raises:
        ValueError: when a used item has no cluster value.
    """
    if clusters is None:
        return None
    labels = clusters.reindex(list(items))
    if labels.isna().any():
        raise UsageError(
            f"item {labels.index[labels.isna()][0]!r} has no value in cluster column "
            f"{clusters.name!r}"
        )
    _, codes = np.unique(labels.to_numpy(object).astype(str), return_inverse=True)
    return codes.ravel().astype(np.int64)


def interval_note(
    low: float, high: float, units: int, what: str = "n", small_ok: bool = False
) -> str:
    """Why an interval is not reported (empty when it is fine): too few units or zero width.

    ``small_ok`` exempts intervals built for small samples (Wilson's) from the unit count.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"interval undefined: {what} < 2" if units < 2 else ""
    if units < MIN_INTERVAL_UNITS and not small_ok:
        return f"interval degenerate: {what} < {MIN_INTERVAL_UNITS}"
    if high - low <= 0:
        return "interval degenerate: zero width (every resample gives the same value)"
    return ""


def result_row(**values: object) -> dict[str, object]:
    """Return an estimate row with the standard columns first (missing ones as NaN/empty).

    An interval flagged by :func:`interval_note` is blanked (NaN) and the reason goes to
    ``note``: a zero-width or tiny-sample interval is never shown as precision.
    """
    row: dict[str, object] = {c: np.nan for c in RESULT_COLUMNS}
    row["n_dropped"] = 0
    row["dropped_reason"] = ""
    row["note"] = ""
    row.update(values)
    units = float(row.get("n_clusters", row["n"]))  # type: ignore[arg-type]
    low, high = float(row["ci_low"]), float(row["ci_high"])  # type: ignore[arg-type]
    what = "clusters" if "n_clusters" in row else "n"
    small_ok = str(row["ci_method"]) == "wilson"
    count = int(units) if np.isfinite(units) else 0
    degenerate = interval_note(low, high, count, what, small_ok)
    if degenerate:
        row["ci_low"] = row["ci_high"] = np.nan
        row["note"] = "; ".join(t for t in (str(row["note"]), degenerate) if t)
    return row


def order_columns(frame: pd.DataFrame, leading: Sequence[str]) -> pd.DataFrame:
    """Put ``leading`` columns first, then the standard result columns, then the rest."""
    first = [c for c in leading if c in frame.columns]
    std = [c for c in RESULT_COLUMNS if c in frame.columns and c not in first]
    rest = [c for c in frame.columns if c not in first and c not in std]
    return frame[first + std + rest]


@dataclass(frozen=True)
class PairedScores:
    """Two raters' usable scores joined on item, the scale levels, and each item's cluster."""

    pairs: Pairs
    levels: tuple[float, ...]
    clusters: IntArray | None


def paired_scores(
    df: pd.DataFrame, rater_a: object, rater_b: object, scale: ScaleLike, columns: Columns
) -> PairedScores:
    """Join two raters on item, check the scale, and number each kept item's cluster."""
    usable = usable_scores(df, columns, scale)
    if scale is not None:
        chosen = usable.scores[usable.scores["rater"].isin([rater_a, rater_b])]
        check_on_scale(chosen["score"], scale_values(scale, []), columns.score)
    pairs = pair_scores(usable, rater_a, rater_b)
    levels = scale_values(scale, np.concatenate([pairs.a, pairs.b]))
    clusters = cluster_codes(pairs.items, item_clusters(df, columns))
    return PairedScores(pairs=pairs, levels=levels, clusters=clusters)


def two_rater_table(
    row: dict[str, object], rater_a: object, rater_b: object, pairs: Pairs
) -> pd.DataFrame:
    """One two-rater result row as a table: the raters first, what was set aside kept."""
    named = {**row, "rater_a": rater_a, "rater_b": rater_b, "n_dropped": pairs.n_dropped}
    named["dropped_reason"] = pairs.dropped_reason
    return order_columns(pd.DataFrame([named]), ["rater_a", "rater_b"])
