"""Does the judge's leniency move with where an item sits? Position and batch-number effects.

Seeds 000 and 001 tell the judge not to adjust leniency by batch position (000: nor by batch
number). :func:`position_effects` measures it: an OLS of the judge's score on the item's
0-based ``position`` in its batch and on ``batch_index``, with item-clustered standard errors
and one of three adjustments for how good the item really is:

* ``adjust="item"``: item fixed effects (absorbed by demeaning within items, as Stata's
  ``xtreg, fe``; the small-sample factor counts only the slope terms). Identified only from
  items judged at several positions, i.e. runs with ``shuffle_seed``; needs no human labels.
* ``adjust="human"``: the human score as a covariate.
* ``adjust="difference"``: the outcome is judge minus human.

Only rows settled at the first ask are used by default: a re-asked row's ``position`` is its
place in the re-ask request, not in the batch it was first shown in.
:func:`leniency_drift_verdict` turns a slope into a pass/fail statement (rule in
:data:`VERDICT_RULE`); :func:`position_profile` gives the mean per position with a CI band.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal, cast

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from judgekit.stats._prep import INTERVAL_COLUMNS, Columns
from judgekit.stats.regression import clustered_ols, ols_term

Adjust = Literal["item", "human", "difference"]
Human = Mapping[str, float] | pd.Series
#: How ``judge()`` tables are read: items in ``item_id``, no cluster unless one is named.
JUDGMENT_ITEMS = Columns(item="item_id")

#: The instruction each term is checked against (seed 001 names position; 000 adds the number).
INSTRUCTIONS: Mapping[str, str] = {
    "position": "Do not adjust leniency based on batch position (seeds 000, 001)",
    "batch_index": "Do not adjust leniency based on batch number (seed 000)",
    "turn": "Apply the same strictness across all batches of the conversation (seed 000)",
}

#: How :func:`leniency_drift_verdict` decides; repeated next to every verdict.
VERDICT_RULE = (
    "drift = slope x span (score points between the first and the last position observed); "
    "pass if the whole CI of the drift lies within +/-tolerance; fail if the CI excludes 0 "
    "and |drift| >= tolerance; otherwise inconclusive"
)

EFFECT_COLUMNS: tuple[str, ...] = (
    "group",
    "term",
    *INTERVAL_COLUMNS,
    "p_value",
    "span",
    "n",
    "n_items",
    "adjust",
    "method",
    "n_dropped",
    "dropped_reason",
    "note",
)

#: Columns of the judgments table every measurement here reads.
NEEDED_COLUMNS: tuple[str, ...] = (
    "item_id",
    "status",
    "score",
    "attempt",
    "position",
    "batch_index",
)

PROFILE_COLUMNS: tuple[str, ...] = ("group", "value", "mean", "ci_low", "ci_high", "n", "outcome")


def human_series(human: Human) -> pd.Series:
    """Human scores as a float Series indexed by item ID text (IDs must be unique)."""
    series = human if isinstance(human, pd.Series) else pd.Series(dict(human), dtype="float64")
    series = series.astype("float64")
    series.index = series.index.map(str)
    if series.index.has_duplicates:
        raise ValueError("human: item IDs must be unique")
    return series


def usable_rows(
    judgments: pd.DataFrame, human: Human | None = None, *, first_ask_only: bool = True
) -> tuple[pd.DataFrame, Counter[str]]:
    """The ok rows with a position (and a human score when given), and why others were set aside.

    Foreign-ID rows (``unknown_id``) have no position and are not counted as dropped.
    """
    missing = [column for column in NEEDED_COLUMNS if column not in judgments.columns]
    if missing:
        raise ValueError(f"judgments: missing column(s) {missing}")
    dropped: Counter[str] = Counter()
    rows = judgments[judgments["status"] != "unknown_id"]
    not_ok = rows["status"] != "ok"
    dropped.update(f"status {status}" for status in rows.loc[not_ok, "status"])
    rows = rows[~not_ok]
    if first_ask_only:
        dropped["settled by a re-ask"] += int((rows["attempt"] > 1).sum())
        rows = rows[rows["attempt"] == 1]
    rows = rows.assign(
        item_id=rows["item_id"].astype(str),
        score=rows["score"].astype("float64"),
        position=rows["position"].astype("float64"),
        batch_index=rows["batch_index"].astype("float64"),
    )
    if human is not None:
        rows = rows.assign(human=rows["item_id"].map(human_series(human)))
        dropped["no human score"] += int(rows["human"].isna().sum())
        rows = rows[rows["human"].notna()]
    return rows, +dropped


def _snap_zero(estimate: float, se: float) -> float:
    """``estimate``, or +0.0 when it is round-off next to its SE (its sign is noise, not data).

    A slope that is zero in exact arithmetic comes out as +-1e-17 depending on BLAS paths;
    below 1e-9 standard errors it is reported as 0.0 so that tables and drifts print alike.

    Examples:
        >>> _snap_zero(-1e-17, 0.8), _snap_zero(-0.25, 0.8)
        (0.0, -0.25)
    """
    return 0.0 if abs(estimate) <= 1e-9 * abs(se) else estimate


def _describe(dropped: Counter[str]) -> tuple[int, str]:
    return sum(dropped.values()), "; ".join(f"{k}: {v}" for k, v in sorted(dropped.items()))


def _group_effects(
    data: pd.DataFrame, terms: Sequence[str], adjust: Adjust, level: float, cluster_col: str
) -> dict[str, dict[str, object]]:
    """Fit one group; one result per term (NaN with a note when a term is not identified)."""
    results: dict[str, dict[str, object]] = {}
    varying: list[str] = []
    for term in terms:
        values = data[term]
        spread = values - values.groupby(data["item_id"]).transform("mean")
        if values.nunique() < 2:
            results[term] = {"note": f"{term} never varies here"}
        elif adjust == "item" and not (spread.abs() > 0).any():
            results[term] = {"note": f"no item seen at two {term}s: shuffle the runs"}
        else:
            varying.append(term)
    if not varying:
        return results
    columns = (["human"] if adjust == "human" else []) + varying
    outcome = data["score"] - data["human"] if adjust == "difference" else data["score"]
    fit = clustered_ols(
        outcome,
        data[columns],
        data[cluster_col],
        level=level,
        absorb=data["item_id"] if adjust == "item" else None,
    )
    for term in varying:
        row = ols_term(fit, term)
        results[term] = {key: row[key] for key in (*INTERVAL_COLUMNS, "p_value")}
        results[term]["estimate"] = _snap_zero(row["estimate"], row["se"])
        results[term]["note"] = ""
    return results


def position_effects(
    judgments: pd.DataFrame,
    human: Human | None = None,
    *,
    terms: Sequence[str] = ("position", "batch_index"),
    adjust: Adjust = "item",
    group_col: str | None = None,
    first_ask_only: bool = True,
    level: float = 0.95,
    columns: Columns = JUDGMENT_ITEMS,
) -> pd.DataFrame:
    """Slope of the judge's score per step of batch position and of batch number.

    Args:
        judgments: The table ``judge()`` returns; several runs (``shuffle_seed``) or modes
            may be stacked, with ``group_col`` telling the modes apart.
        human: Item ID -> human score (needed for ``adjust="human"`` / ``"difference"``).
        terms: Slope terms: columns of ``judgments`` (``position``, ``batch_index``, ``turn``).
        adjust: ``"item"`` (item fixed effects), ``"human"`` or ``"difference"``.
        group_col: Fit each value of this column separately (e.g. ``"mode"``).
        first_ask_only: Leave out rows settled by a re-ask (their position is not comparable).
        level: Confidence level of the intervals.
        columns: ``columns.cluster`` is the column of ``judgments`` to cluster the SEs on (e.g.
            the question several items answer; every row needs a value). Default: the item.

    Returns:
        One row per group and term: ``estimate`` (score points per step), ``se`` (clustered on
        items, or on ``columns.cluster``), ``ci_low``, ``ci_high``, ``p_value``, ``span`` (max -
        min of the term), ``n``, ``n_items``, ``adjust``, ``method``, ``n_dropped``,
        ``dropped_reason`` and ``note`` (why a term has no estimate, e.g. it never varies).

    Raises:
        ValueError: On a missing column, an unknown ``adjust`` or no human score when needed.

    Examples:
        >>> from judgekit.stats.examples import batch_judgments
        >>> judgments, human = batch_judgments()
        >>> effects = position_effects(judgments, human, adjust="difference")
        >>> shown = effects[["term", "estimate", "ci_low", "ci_high"]]
        >>> print(shown.round(3).to_string(index=False))
               term  estimate  ci_low  ci_high
           position     0.143  -0.464    0.750
        batch_index     0.000  -1.744    1.744
    """
    if adjust not in ("item", "human", "difference"):
        raise ValueError(f"adjust must be 'item', 'human' or 'difference', got {adjust!r}")
    if adjust != "item" and human is None:
        raise ValueError(f"adjust={adjust!r} needs the human scores (human=...)")
    cluster_col = columns.cluster
    extra = [c for c in (group_col, cluster_col) if c]
    needed = dict.fromkeys([*NEEDED_COLUMNS, *terms, *extra])
    missing = [column for column in needed if column not in judgments.columns]
    if missing:
        raise ValueError(f"judgments: missing column(s) {missing}")
    rows, dropped = usable_rows(judgments, human, first_ask_only=first_ask_only)
    for term in terms:
        rows[term] = rows[term].astype("float64")
    n_dropped, reason = _describe(dropped)
    clusters = cluster_col or "item_id"
    grouped = [("all", rows)] if group_col is None else list(rows.groupby(group_col, sort=False))
    records = []
    for group, data in grouped:
        fitted = _group_effects(data, terms, adjust, level, clusters) if len(data) else {}
        for term in terms:
            result = fitted.get(term, {"note": "no usable rows"})
            records.append(
                {
                    "group": group,
                    "term": term,
                    "estimate": np.nan,
                    "se": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "p_value": np.nan,
                    **result,
                    "span": float(np.ptp(data[term].to_numpy(float))) if len(data) else np.nan,
                    "n": len(data),
                    "n_items": int(data["item_id"].nunique()),
                    "adjust": adjust,
                    "method": f"ols, {'item' if cluster_col is None else cluster_col}-clustered SE",
                    "n_dropped": n_dropped,
                    "dropped_reason": reason,
                }
            )
    return pd.DataFrame(records, columns=list(EFFECT_COLUMNS))


def leniency_drift_verdict(effects: pd.DataFrame, *, tolerance: float = 0.5) -> pd.DataFrame:
    """Pass/fail of "do not adjust leniency based on batch position", with its evidence.

    The slope is scaled to the ``span`` the data covered (e.g. 59 steps for 60-row batches),
    giving the drift in score points between the first and the last position. The rule
    (:data:`VERDICT_RULE`) is an equivalence check: *pass* needs the whole CI of the drift
    inside ``+/-tolerance`` (so "no drift" is shown, not merely "no drift detected"); *fail*
    needs a CI that excludes zero and a point estimate at least ``tolerance`` away from it;
    anything else (a CI too wide to tell) is *inconclusive*. With a 90% CI the pass rule is a
    TOST equivalence test at the 5% level; with 95% it is stricter.

    Args:
        effects: Output of :func:`position_effects`.
        tolerance: Largest drift across the span, in score points, that is practically
            irrelevant (default half a point; pick it for your scale before looking).

    Returns:
        One row per group and term: ``instruction``, ``verdict`` (pass / fail / inconclusive /
        not tested), ``statement``, ``slope``, ``slope_ci_low``, ``slope_ci_high``, ``span``,
        ``drift``, ``drift_ci_low``, ``drift_ci_high``, ``tolerance``, ``rule``.

    Examples:
        >>> from judgekit.stats.examples import batch_judgments
        >>> judgments, human = batch_judgments()
        >>> effects = position_effects(judgments, human, adjust="difference")
        >>> verdicts = leniency_drift_verdict(effects, tolerance=1.0)
        >>> print(verdicts[["term", "verdict", "drift"]].round(3).to_string(index=False))
               term      verdict  drift
           position inconclusive  0.714
        batch_index inconclusive  0.000
    """
    if tolerance <= 0:
        raise ValueError(f"tolerance must be positive, got {tolerance}")
    records = []
    for row in effects.to_dict("records"):
        span, term = float(row["span"]), str(row["term"])
        drift, low, high = (float(row[k]) * span for k in ("estimate", "ci_low", "ci_high"))
        if np.isnan(drift):
            verdict, statement = "not tested", f"no estimate: {row['note']}"
        else:
            if -tolerance < low and high < tolerance:
                verdict = "pass"
            elif (low > 0 or high < 0) and abs(drift) >= tolerance:
                verdict = "fail"
            else:
                verdict = "inconclusive"
            statement = (
                f"{verdict.upper()}: scores move by {drift:+.2f} points "
                f"(CI {low:+.2f} to {high:+.2f}) over {span:g} steps of {term}; "
                f"tolerance +/-{tolerance:g}"
            )
        records.append(
            {
                "group": row["group"],
                "term": row["term"],
                "instruction": INSTRUCTIONS.get(term, f"no drift with {term}"),
                "verdict": verdict,
                "statement": statement,
                "slope": row["estimate"],
                "slope_ci_low": row["ci_low"],
                "slope_ci_high": row["ci_high"],
                "span": span,
                "drift": drift,
                "drift_ci_low": low,
                "drift_ci_high": high,
                "tolerance": tolerance,
                "rule": VERDICT_RULE,
            }
        )
    return pd.DataFrame(records)


def position_profile(
    judgments: pd.DataFrame,
    human: Human | None = None,
    *,
    term: str = "position",
    group_col: str | None = None,
    first_ask_only: bool = True,
    level: float = 0.95,
) -> pd.DataFrame:
    """Mean judge-minus-human (or item-centred score without ``human``) at each value of ``term``.

    Without human scores each score is centred on its item's mean over all its appearances, so
    the profile shows leniency relative to the item itself (useful with shuffled runs).

    Returns:
        One row per group and value of ``term``: ``group``, ``value``, ``mean``, ``ci_low``,
        ``ci_high`` (t interval), ``n``, ``outcome`` (what was averaged).

    Examples:
        >>> from judgekit.stats.examples import batch_judgments
        >>> judgments, human = batch_judgments()
        >>> profile = position_profile(judgments, human)
        >>> print(profile[["value", "mean", "n", "outcome"]].head(3).to_string(index=False))
         value  mean  n       outcome
           0.0   1.0  2 judge - human
           1.0   1.0  2 judge - human
           2.0   0.5  2 judge - human
    """
    rows, _ = usable_rows(judgments, human, first_ask_only=first_ask_only)
    if term not in rows.columns:
        raise ValueError(f"judgments: missing column {term!r}")
    if human is not None:
        rows = rows.assign(outcome=rows["score"] - rows["human"])
        outcome = "judge - human"
    else:
        centred = rows["score"] - rows.groupby("item_id")["score"].transform("mean")
        rows = rows.assign(outcome=centred)
        outcome = "score - item mean"
    rows = rows.assign(group="all" if group_col is None else rows[group_col])
    records = []
    for (group, value), cell in rows.groupby(["group", term], sort=True):
        n = len(cell)
        mean = float(cell["outcome"].mean())
        half = np.nan
        if n > 1:
            sem = float(cell["outcome"].std(ddof=1)) / np.sqrt(n)
            half = float(scipy_stats.t.ppf(0.5 + level / 2, n - 1)) * sem
        records.append(
            {
                "group": group,
                "value": float(cast(float, value)),
                "mean": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "n": n,
                "outcome": outcome,
            }
        )
    return pd.DataFrame(records, columns=list(PROFILE_COLUMNS))
