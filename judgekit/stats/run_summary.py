"""One ``judge()`` table in a few numbers: agreement with humans, failure rates, token use.

The batch-size probe (:mod:`judgekit.workflows.batch_probe`) compares these numbers across
batch sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

import pandas as pd

from judgekit.stats._bootstrap import CI
from judgekit.stats.agreement import kappa_from_pairs
from judgekit.stats.position import Human, human_series

#: Statuses meaning "the reply could not be read for this row" (the engine's re-ask statuses).
FAILED_READ_STATUSES: frozenset[str] = frozenset(
    {"missing", "unparseable", "out_of_range", "duplicate"}
)


def batch_run_summary(
    judgments: pd.DataFrame,
    human: Human,
    levels: Sequence[float],
    *,
    weights: Literal["linear", "quadratic"] | None = "quadratic",
    ci: CI = CI("analytic", seed=0),
    clusters: Mapping[str, object] | pd.Series | None = None,
) -> dict[str, object]:
    """Agreement, failure rates and token use of one ``judge()`` table.

    Kappa pairs the judge's ok scores of the first variant's first run with the human scores on
    ``levels`` (off-scale human labels and unscored rows are left out, counted in
    ``n_dropped``). Its interval is ``ci``'s; with ``clusters`` (item ID -> cluster, e.g. the
    question an answer belongs to; an item without one is its own cluster) it is a bootstrap of
    whole clusters (BCa when ``ci`` asks for "analytic", which assumes independent items) with
    the design effect beside it. Rates are shares of all judged rows (item x run x variant); token
    counts are summed over distinct requests (re-asks included) and divided by those rows.
    """
    rows = judgments[judgments["status"] != "unknown_id"]
    reasked = rows["attempt"] > 1
    unread_first = reasked | rows["status"].isin(FAILED_READ_STATUSES)
    requests = judgments.drop_duplicates("request_hash")
    first = rows[(rows["variant"] == rows["variant"].iloc[0]) & (rows["run"] == rows["run"].min())]
    truth = human_series(human)
    paired = first[first["status"] == "ok"].assign(human=first["item_id"].astype(str).map(truth))
    paired = paired[paired["human"].isin([float(v) for v in levels])]
    ids = paired["item_id"].astype(str)
    design = None
    if clusters is not None:
        by_id = pd.Series(clusters, dtype=object)
        by_id.index = by_id.index.astype(str)  # item IDs are strings; a map may hold numbers
        cluster_of = ids.map(by_id).fillna("item " + ids)
        design = pd.factorize(cluster_of.astype(str))[0]
    kappa = kappa_from_pairs(
        paired["score"].to_numpy(float),
        paired["human"].to_numpy(float),
        tuple(float(v) for v in levels),
        weights=weights,
        ci=ci if design is None or ci.method != "analytic" else replace(ci, method="bca"),
        clusters=design,
    )
    judged = len(rows)
    return {
        "n_items": int(rows["item_id"].nunique()),
        "rows_judged": judged,
        "requests": len(requests),
        "kappa": kappa["estimate"],
        "kappa_ci_low": kappa["ci_low"],
        "kappa_ci_high": kappa["ci_high"],
        "kappa_n": kappa["n"],
        "kappa_method": kappa["method"],
        "kappa_ci_method": kappa["ci_method"],
        "kappa_n_clusters": kappa.get("n_clusters", kappa["n"]),
        "kappa_design_effect": kappa.get("design_effect", float("nan")),
        "kappa_note": kappa["note"],
        "n_dropped": len(first) - len(paired),
        "first_ask_failure_rate": float(unread_first.mean()),
        "reask_rate": float(reasked.mean()),
        "final_failure_rate": float(rows["status"].isin(FAILED_READ_STATUSES | {"error"}).mean()),
        "prompt_tokens_per_item": float(requests["prompt_tokens"].sum()) / judged,
        "cached_tokens_per_item": float(requests["cached_tokens"].sum()) / judged,
        "completion_tokens_per_item": float(requests["completion_tokens"].sum()) / judged,
    }
