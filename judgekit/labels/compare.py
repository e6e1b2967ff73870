"""Compare: humans with each other (the ceiling), judge with humans, and where they differ."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import pandas as pd

from judgekit.stats import CI
from judgekit.stats.agreement import cohen_kappa
from judgekit.stats.multirater import krippendorff_alpha


def labels_long(labels: pd.DataFrame) -> pd.DataFrame:
    """The labels table as the statistics' long form: ``item, rater, score, status``."""
    return pd.DataFrame(
        {
            "item": labels["item_id"].astype(str),
            "rater": labels["labeller"].astype(str),
            "score": labels["score"].astype(float),
            "status": labels["status"].astype(str),
        }
    )


def inter_human_agreement(
    labels: pd.DataFrame,
    levels: Sequence[float],
    *,
    ci: CI = CI("bca", seed=0),
) -> pd.DataFrame:
    """Quadratic kappa for every pair of labellers and Krippendorff's ordinal alpha over all.

    Skips and abstentions are not scores and are dropped (counted in ``n_dropped``).

    Returns:
        One row per statistic: ``statistic, rater_a, rater_b, estimate, ci_low, ci_high, n,
        n_dropped``; no rows (the columns only) when fewer than two labellers scored.
    """
    columns = ["statistic", "rater_a", "rater_b", "estimate", "ci_low", "ci_high", "n"]
    long = labels_long(labels)
    labellers = sorted(long.loc[long["status"] == "ok", "rater"].unique())
    if len(labellers) < 2:
        return pd.DataFrame(columns=[*columns, "n_dropped"])
    rows = [
        cohen_kappa(long, a, b, scale=tuple(levels), weights="quadratic", ci=ci).assign(
            statistic="kappa (quadratic)"
        )
        for a, b in combinations(labellers, 2)
    ]
    alpha = krippendorff_alpha(
        long, level_of_measurement="ordinal", scale=tuple(levels), ci=ci
    ).assign(statistic="alpha (ordinal)", rater_a="all labellers", rater_b="")
    return pd.concat([*rows, alpha], ignore_index=True)[[*columns, "n_dropped"]]


def consensus(labels: pd.DataFrame) -> pd.DataFrame:
    """One human score per item: the median of the labellers' scores (``item_id, score, n``)."""
    scored = labels[labels["status"] == "ok"]
    grouped = scored.groupby("item_id")["score"]
    return pd.DataFrame({"score": grouped.median(), "n": grouped.size()}).reset_index()


def disagreements(
    verdicts: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    context: pd.DataFrame | None = None,
    top: int = 20,
) -> pd.DataFrame:
    """The verdicts farthest from the human consensus, with the judge's reason and raw reply.

    Args:
        verdicts: Final verdicts (engine columns); every model, variant and run is kept so the
            table can be filtered by them.
        labels: The labels table.
        context: Optional item columns to show (``item_id`` plus e.g. question, answer, model).
        top: How many rows to return (largest gaps first).

    Returns:
        ``item_id, model, variant, run, judge_score, human_score, gap, reason, raw_reply`` and
        the context columns; ``gap`` is judge minus human.
    """
    human = consensus(labels).set_index("item_id")["score"]
    scored = verdicts[verdicts["status"] == "ok"].copy()
    scored["item_id"] = scored["item_id"].astype(str)
    scored = scored[scored["item_id"].isin(human.index)]
    scored["human_score"] = scored["item_id"].map(human)
    scored = scored.rename(columns={"score": "judge_score"})
    scored["gap"] = scored["judge_score"] - scored["human_score"]
    keep = ["item_id", "model", "variant", "run", "judge_score", "human_score", "gap", "reason"]
    table = scored[[*keep, "raw_reply"]]
    if context is not None:
        table = table.merge(context.assign(item_id=context["item_id"].astype(str)), on="item_id")
    order = table["gap"].abs().sort_values(ascending=False, kind="stable").index
    return table.loc[order].head(top).reset_index(drop=True)
