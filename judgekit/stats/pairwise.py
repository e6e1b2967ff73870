"""Pairwise judge statistics: position, outcomes, agreement with humans, between humans.

Every function takes the comparison long table of :mod:`judgekit.data.pairwise` (one row per
pair x judge x variant x run x order, ``verdict`` in the original A/B) and returns a tidy table
with ``estimate``, ``ci_low``, ``ci_high``, ``level``, ``n``, ``method``, ``ci_method``,
``n_dropped``/``dropped_reason`` and ``note``, one row per judge x variant x run (``by``).
Orders of one pair are never independent: intervals resample whole pairs, or whole clusters
(prompts) when ``cluster`` names a column. Human labels are a long table ``pair_id``,
``rater``, ``label`` (``a``/``b``/``tie``, read by :func:`judgekit.data.pairwise.read_pair_label`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit.data.pairwise import (
    PAIR_ID,
    VERDICTS,
    PairOutcome,
    check_comparisons,
    pair_outcomes,
    view_inconsistent_as_tie,
)
from judgekit.stats._bootstrap import CI, as_generator, unit_weights
from judgekit.stats._intervals import share_interval
from judgekit.stats._prep import result_row
from judgekit.stats.agreement import cohen_kappa

GROUP: tuple[str, ...] = ("judge", "variant", "run")
_CODES = {"a": 1.0, "b": 2.0, "tie": 0.0}


def _units(frame: pd.DataFrame, cluster: str | None) -> np.ndarray:
    """Resampling unit per row: the cluster when given, else the pair."""
    column = cluster or PAIR_ID
    if frame[column].isna().any():
        raise ValueError(f"cluster column {column!r} has empty values; name every row's cluster")
    codes: np.ndarray = pd.factorize(frame[column].astype(str))[0].astype(np.int64)
    return codes


def _outcomes(comparisons: pd.DataFrame, cluster: str | None) -> pd.DataFrame:
    """Per-pair outcomes, carrying the cluster column when it is not the contract's own."""
    outcomes = pair_outcomes(comparisons)
    if cluster is None or cluster in outcomes.columns:
        return outcomes
    if cluster not in comparisons.columns:
        raise ValueError(f"cluster column {cluster!r} is not in the comparisons")
    per_pair = comparisons.groupby(PAIR_ID)[cluster].nunique(dropna=False)
    if (per_pair > 1).any():
        raise ValueError(f"pair {per_pair.idxmax()!r} sits in several {cluster!r} clusters")
    first = comparisons.drop_duplicates(PAIR_ID).set_index(PAIR_ID)[cluster]
    return outcomes.assign(**{cluster: outcomes[PAIR_ID].map(first).to_numpy()})


def _share_row(
    hits: np.ndarray, units: np.ndarray, ci: CI, method: str, **extra: object
) -> dict[str, object]:
    found = share_interval(hits.astype(bool), units, ci)
    return result_row(
        **found, n=int(hits.size), method=method, level=ci.level, **extra,
    )  # fmt: skip


def _dropped(counts: pd.Series) -> dict[str, object]:
    """``n_dropped`` and ``dropped_reason`` from the counts of the rows left out, by reason."""
    reason = "; ".join(f"{k}: {v}" for k, v in counts.items())
    return {"n_dropped": int(counts.sum()), "dropped_reason": reason}


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> list[tuple[dict[str, object], pd.DataFrame]]:
    keys = [k for k in by if k in frame.columns]
    if not keys:
        return [({}, frame)]
    out = []
    for values, part in frame.groupby(keys, sort=True, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((dict(zip(keys, values, strict=True)), part))
    return out


def position_consistency(
    comparisons: pd.DataFrame,
    *,
    ci: CI = CI("analytic"),
    cluster: str | None = None,
    by: Sequence[str] = GROUP,
) -> pd.DataFrame:
    """Share of pairs whose verdict survives swapping the order (LLMBar's positional agreement).

    ``consistency = #{pairs: verdict_ab = verdict_ba} / #{pairs with both orders parsed}``
    (Zeng et al. 2024, "positional agreement"; Zheng et al. 2023, section 3.3). Pairs with an
    unparsed order are counted in ``n_dropped``, never as consistent or not.

    >>> from judgekit.stats.pairwise_examples import pair_comparisons
    >>> row = position_consistency(pair_comparisons()).iloc[0]
    >>> float(row["estimate"]), int(row["n"]), int(row["n_dropped"])
    (0.75, 4, 1)
    """
    outcomes = _outcomes(comparisons, cluster)
    rows = []
    for keys, part in _groups(outcomes, by):
        judged = part["outcome"].isin(
            [PairOutcome.CONSISTENT_WIN, PairOutcome.CONSISTENT_TIE, PairOutcome.INCONSISTENT]
        )
        kept = part.loc[judged]
        hits = (kept["outcome"] != PairOutcome.INCONSISTENT).to_numpy()
        dropped = part.loc[~judged, "outcome"].astype(str).value_counts()
        units = _units(kept, cluster)
        method = "position consistency"
        rows.append(_share_row(hits, units, ci, method, **keys, **_dropped(dropped)))
    return pd.DataFrame(rows)


def first_position_win_rate(
    comparisons: pd.DataFrame,
    *,
    ci: CI = CI("analytic"),
    cluster: str | None = None,
    by: Sequence[str] = GROUP,
) -> pd.DataFrame:
    """Share of decisive verdicts that go to the answer shown first; 0.5 means no position bias.

    ``rate = #{(order ab, verdict a) or (order ba, verdict b)} / #{decisive verdicts}``
    (Zheng et al. 2023, table 2; Wang et al. 2023, "Large language models are not fair
    evaluators"). Ties and unparsed orders are counted in ``n_dropped``.

    >>> from judgekit.stats.pairwise_examples import pair_comparisons
    >>> row = first_position_win_rate(pair_comparisons()).iloc[0]
    >>> round(float(row["estimate"]), 3), int(row["n"])
    (0.714, 7)
    """
    check_comparisons(comparisons)
    rows = []
    for keys, part in _groups(comparisons, by):
        decisive = part["verdict"].isin(["a", "b"])
        kept = part.loc[decisive]
        first = np.where(kept["order"] == "ab", "a", "b")
        hits = kept["verdict"].to_numpy() == first
        reasons = np.where(part.loc[~decisive, "verdict"] == "tie", "tie", "unparsed")
        dropped = pd.Series(reasons, dtype=str).value_counts()
        units = _units(kept, cluster)
        method = "first-position win rate"
        rows.append(_share_row(hits, units, ci, method, **keys, **_dropped(dropped)))
    return pd.DataFrame(rows)


def outcome_shares(
    comparisons: pd.DataFrame,
    *,
    ci: CI = CI("analytic"),
    cluster: str | None = None,
    by: Sequence[str] = GROUP,
) -> pd.DataFrame:
    """The share of pairs with each :class:`~judgekit.data.pairwise.PairOutcome`, with intervals.

    ``share_k = #{pairs with outcome k} / #{pairs}``; every outcome is its own row, so an
    inconsistent or unparsed pair is never folded into a win or a tie.

    >>> from judgekit.stats.pairwise_examples import pair_comparisons
    >>> shares = outcome_shares(pair_comparisons(), ci=CI(None))
    >>> shares.set_index("outcome")["estimate"].round(2).to_dict()["inconsistent"]
    0.2
    """
    outcomes = _outcomes(comparisons, cluster)
    rows = []
    for keys, part in _groups(outcomes, by):
        units = _units(part, cluster)
        for outcome in PairOutcome:
            hits = (part["outcome"] == outcome).to_numpy()
            rows.append(_share_row(hits, units, ci, "outcome share", **keys, outcome=str(outcome)))
    return pd.DataFrame(rows)


def _majority(labels: pd.DataFrame) -> pd.DataFrame:
    """Per pair: the label most raters gave (ties between labels -> no majority)."""
    counts = labels.groupby([PAIR_ID, "label"]).size().unstack(fill_value=0)
    top = counts.max(axis=1)
    unique = counts.eq(top, axis=0).sum(axis=1) == 1
    gold = counts.idxmax(axis=1).where(unique, "")
    return gold.rename("gold").reset_index()


def verdict_accuracy(
    comparisons: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    unparsed: str = "wrong",
    ci: CI = CI("analytic"),
    cluster: str | None = None,
    by: Sequence[str] = GROUP,
) -> pd.DataFrame:
    """Accuracy and macro precision/recall/F1 of the verdicts against the labels' majority.

    Every order is one verdict, so accuracy is averaged over the two orders (LLMBar's
    ``correct_average``). ``accuracy = #{verdict = gold} / n``; for each class c of
    ``{a, b, tie}`` present in the gold or the verdicts, ``P_c = TP_c / #{verdict = c}``,
    ``R_c = TP_c / #{gold = c}``, ``F1_c = 2 P_c R_c / (P_c + R_c)``, macro = the mean over
    classes (sklearn's ``average="macro"``; Wang et al. 2024, PandaLM). Pairs without a
    majority are dropped. ``unparsed``: ``"wrong"`` (an unparsed order counts as incorrect and
    predicts no class), ``"drop"``, or ``"tie"`` (PandaLM's script: scored as a tie). Macro
    intervals are percentile bootstraps over pairs (or clusters) with ``ci.seed``; with
    ``CI("analytic")`` accuracy has Wilson's interval and the macro rows none (said in ``note``).

    >>> from judgekit.stats.pairwise_examples import pair_comparisons, pair_labels
    >>> table = verdict_accuracy(pair_comparisons(), pair_labels(), ci=CI(None))
    >>> table.set_index("measure")["estimate"].round(3).to_dict()["accuracy"]
    0.875
    """
    check_comparisons(comparisons)
    if unparsed not in ("wrong", "drop", "tie"):
        raise ValueError(f"unparsed must be 'wrong', 'drop' or 'tie', not {unparsed!r}")
    gold = _majority(labels)
    joined = comparisons.merge(gold, on=PAIR_ID, how="left")
    rows = []
    for keys, part in _groups(joined, by):
        no_gold = part["gold"].fillna("") == ""
        pred = part["verdict"].fillna("").astype(str)
        if unparsed == "tie":
            pred = pred.where(pred != "", "tie")
        keep = ~no_gold & ((pred != "") | (unparsed != "drop"))
        kept, predicted = part.loc[keep], pred[keep].to_numpy()
        truth = kept["gold"].astype(str).to_numpy()
        units = _units(kept, cluster)
        dropped = int((~keep).sum())
        reason = f"no label majority: {int(no_gold.sum())}" if no_gold.any() else ""
        if unparsed == "drop" and dropped > int(no_gold.sum()):
            reason = "; ".join(t for t in (reason, f"unparsed: {dropped - no_gold.sum()}") if t)
        common = {**keys, "n_dropped": dropped, "dropped_reason": reason, "unparsed": unparsed}
        hits = predicted == truth
        rows.append(
            {**_share_row(hits, units, ci, "accuracy vs label majority", **common),
             "measure": "accuracy"}
        )  # fmt: skip
        rows.extend(_macro_rows(truth, predicted, units, ci, common))
    return pd.DataFrame(rows)


def _macro_rows(
    truth: np.ndarray, pred: np.ndarray, units: np.ndarray, ci: CI, common: dict[str, object]
) -> list[dict[str, object]]:
    classes = [c for c in VERDICTS if c in set(truth) | set(pred)]
    tp = np.stack([(truth == c) & (pred == c) for c in classes], axis=1).astype(float)
    npred = np.stack([pred == c for c in classes], axis=1).astype(float)
    ngold = np.stack([truth == c for c in classes], axis=1).astype(float)

    def macro(weights: np.ndarray) -> np.ndarray:
        t, p, g = weights @ tp, weights @ npred, weights @ ngold
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(p > 0, t / p, 0.0)
            recall = np.where(g > 0, t / g, 0.0)
            f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0)
        return np.stack([precision.mean(1), recall.mean(1), f1.mean(1)], axis=1)

    estimate = macro(np.ones((1, truth.size)))[0]
    low = high = np.full(3, np.nan)
    ci_method, note = "none", ""
    if ci.method == "analytic":
        note = "no analytic interval for a macro average: ask for CI('percentile', seed=...)"
    elif ci.method is not None and truth.size:
        ci.offered((None, "analytic", "percentile"), "macro precision/recall/F1")
        rng = as_generator(ci.seed)
        unit_w = unit_weights(int(units.max()) + 1, None, ci.n_boot, rng)
        boot = macro(unit_w[:, units])
        alpha = (1 - ci.level) / 2
        low, high = np.nanquantile(boot, alpha, axis=0), np.nanquantile(boot, 1 - alpha, axis=0)
        ci_method = "percentile, pair/cluster bootstrap"
    names = ("macro_precision", "macro_recall", "macro_f1")
    return [
        {**result_row(estimate=float(estimate[k]), ci_low=float(low[k]), ci_high=float(high[k]),
                      n=int(truth.size), method=f"{name} over {', '.join(classes)}",
                      ci_method=ci_method, level=ci.level, note=note, **common),
         "measure": name}
        for k, name in enumerate(names)
    ]  # fmt: skip


def verdict_kappa(
    comparisons: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    ci: CI = CI("analytic"),
    by: Sequence[str] = (*GROUP, "order"),
) -> pd.DataFrame:
    """Cohen's kappa between the judge's verdicts and the labels' majority, per order.

    ``kappa = (p_o - p_e) / (1 - p_e)`` on the categories a/b/tie (Cohen 1960), computed by
    :func:`judgekit.stats.cohen_kappa`; verdict and label are coded alike (LLMBar's stored
    kappa codes verdict "2" as 0 but label 2 as 2, so its figures are not this kappa).

    >>> from judgekit.stats.pairwise_examples import pair_comparisons, pair_labels
    >>> table = verdict_kappa(pair_comparisons(), pair_labels(), ci=CI(None))
    >>> table["estimate"].round(3).tolist()
    [0.636, 1.0]
    """
    check_comparisons(comparisons)
    gold = _majority(labels)
    rows = []
    for keys, part in _groups(comparisons.merge(gold, on=PAIR_ID), by):
        part = part.loc[part["gold"] != ""]
        judge = part.assign(rater="judge", score=part["verdict"].map(_CODES))
        human = part.assign(rater="human", score=part["gold"].map(_CODES), status="ok")
        long = pd.concat([judge, human])[[PAIR_ID, "rater", "score", "status"]]
        long = long.rename(columns={PAIR_ID: "item"})
        found = cohen_kappa(long, "judge", "human", scale=[0.0, 1.0, 2.0], ci=ci)
        row: dict[str, object] = {**keys, **{str(k): v for k, v in found.iloc[0].items()}}
        row["level"] = ci.level
        rows.append(row)
    return pd.DataFrame(rows)


def rater_kappas(labels: pd.DataFrame, *, ci: CI = CI("analytic")) -> pd.DataFrame:
    """Cohen's kappa for every two human raters of the same pairs (PandaLM's annotator kappas).

    >>> from judgekit.stats.pairwise_examples import pair_labels
    >>> rater_kappas(pair_labels(), ci=CI(None))["estimate"].round(3).tolist()
    [0.412, 0.0, -0.053]
    """
    long = labels.assign(item=labels[PAIR_ID], score=labels["label"].map(_CODES), status="ok")
    raters = sorted(long["rater"].unique())
    rows = []
    for i, first in enumerate(raters):
        for second in raters[i + 1 :]:
            found = cohen_kappa(long, first, second, scale=[0.0, 1.0, 2.0], ci=ci)
            rows.append({**found.iloc[0].to_dict(), "level": ci.level})
    return pd.DataFrame(rows)


def human_agreement_s1_s2(
    comparisons: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    ci: CI = CI("analytic"),
    cluster: str | None = None,
    by: Sequence[str] = GROUP,
) -> pd.DataFrame:
    """Judge-human agreement in MT-Bench's two setups, S1 (with ties) and S2 (without).

    Each pair's judge verdict is MT-Bench's view (both orders; a flip counts as a tie,
    :func:`~judgekit.data.pairwise.view_inconsistent_as_tie`; a pair with an unparsed order is
    dropped and counted). Every human vote on the pair is compared with it:
    ``S1 = #{vote = verdict} / #{votes}``; S2 keeps only the votes where neither says tie
    (Zheng et al. 2023, section 4.2, table 5).

    >>> from judgekit.stats.pairwise_examples import pair_comparisons, pair_labels
    >>> table = human_agreement_s1_s2(pair_comparisons(), pair_labels(), ci=CI(None))
    >>> table.set_index("setup")["estimate"].round(3).to_dict()
    {'S1': 0.5, 'S2': 0.667}
    """
    outcomes = view_inconsistent_as_tie(_outcomes(comparisons, cluster))
    votes = outcomes.merge(labels[[PAIR_ID, "label"]], on=PAIR_ID)
    votes = votes.loc[votes["label"] != ""]
    rows = []
    for keys, part in _groups(votes, by):
        parsed = part["winner"] != ""
        dropped = {"n_dropped": int((~parsed).sum()),
                   "dropped_reason": "; ".join(f"{k}: {v}" for k, v in
                                               part.loc[~parsed, "dropped_reason"]
                                               .value_counts().items())}  # fmt: skip
        kept = part.loc[parsed]
        no_tie = (kept["winner"] != "tie") & (kept["label"] != "tie")
        for setup, use in (("S1", np.ones(len(kept), bool)), ("S2", no_tie.to_numpy())):
            chosen = kept.loc[use]
            hits = (chosen["winner"] == chosen["label"]).to_numpy()
            rows.append(_share_row(
                hits, _units(chosen, cluster), ci, f"agreement with human votes, {setup}",
                **keys, setup=setup, **dropped,
            ))  # fmt: skip
    return pd.DataFrame(rows)
