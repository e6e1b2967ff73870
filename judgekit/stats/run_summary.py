"""One ``judge()`` table in a few numbers: agreement with humans, failure rates, token use.

The batch-size probe (:mod:`judgekit.judging.batch_probe`) compares these numbers across
batch sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pandas as pd

from judgekit.stats._bootstrap import CI
from judgekit.stats._prep import Columns, cluster_codes, item_clusters
from judgekit.stats.agreement import kappa_from_pairs
from judgekit.stats.position import JUDGMENT_ITEMS, Human, human_series

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
    columns: Columns = JUDGMENT_ITEMS,
) -> dict[str, object]:
    """Agreement, failure rates and token use of one ``judge()`` table.

    Kappa pairs the judge's ok scores of the first variant's first run with the human scores on
    ``levels`` (off-scale human labels and unscored rows are left out, counted in
    ``n_dropped``). Its interval is ``ci``'s; with ``columns.cluster`` (a column of
    ``judgments``, e.g. the question an answer belongs to; every scored item needs a value) a
    bootstrap (``CI("percentile")`` or ``CI("bca")``) resamples whole clusters and the design
    effect is reported beside it; kappa has no cluster-robust analytic interval, so
    ``CI("analytic")`` with clusters is a one-line error. Rates are shares of all judged rows
    (item x run x variant); token counts are summed over distinct requests (re-asks included)
    and divided by those rows.

    Examples:
        >>> import pandas as pd
        >>> human = {"1": 1.0, "2": 2.0, "3": 3.0, "4": 3.0}
        >>> judgments = pd.DataFrame({
        ...     "item_id": ["1", "2", "3", "4"], "status": "ok", "score": [1.0, 2.0, 3.0, 2.0],
        ...     "variant": "base", "run": 1, "attempt": 1, "request_hash": ["r1", "r1", "r2", "r2"],
        ...     "prompt_tokens": 100, "cached_tokens": 0, "completion_tokens": 10,
        ... })
        >>> summary = batch_run_summary(judgments, human, (1, 2, 3))
        >>> round(summary["kappa"], 3), summary["requests"], summary["prompt_tokens_per_item"]
        (0.8, 2, 50.0)
    """
    rows = judgments[judgments["status"] != "unknown_id"]
    reasked = rows["attempt"] > 1
    unread_first = reasked | rows["status"].isin(FAILED_READ_STATUSES)
    requests = judgments.drop_duplicates("request_hash")
    first = rows[(rows["variant"] == rows["variant"].iloc[0]) & (rows["run"] == rows["run"].min())]
    truth = human_series(human)
    paired = first[first["status"] == "ok"].assign(human=first["item_id"].astype(str).map(truth))
    paired = paired[paired["human"].isin([float(v) for v in levels])]
    design = cluster_codes(paired[columns.item], item_clusters(judgments, columns))
    kappa = kappa_from_pairs(
        paired["score"].to_numpy(float),
        paired["human"].to_numpy(float),
        tuple(float(v) for v in levels),
        weights=weights,
        ci=ci,
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
