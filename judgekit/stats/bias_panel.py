"""Self-preference across a panel: a judge on its own family's answers, against the others.

With one judge, a preference for its own family's answers can only be measured against the
human (:func:`~judgekit.stats.bias.self_preference`). A panel offers a second yardstick: the
*other* judges' scores of the very same answers. For judge J and answer i written by J's
family, with ``o_i`` the mean score of the panel's judges of other families:

* ``own_minus_other_judges``: mean of ``s_Ji - o_i`` over J's own answers;
* ``own_minus_other_judges_did``: that gap on own answers minus the same gap on the other
  answers (a difference in differences: J's general leniency relative to the panel cancels);
* ``own_minus_human``: mean of ``s_Ji - h_i`` over J's own answers;

each with an SE clustered by question (OLS on an intercept, or on the own indicator, Liang &
Zeger 1986, statsmodels ``cov_type="cluster"``; t with G - 1 degrees of freedom). Beside them
the six single-judge methods of :func:`~judgekit.stats.bias.self_preference` (naive and
controlled for the human score). Each method's p-values over every judge (and every ``by``
group) form one family, corrected with Holm (1979) by default
(:func:`~judgekit.stats.significance.adjust_p`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgekit.stats._prep import INTERVAL_COLUMNS, Columns, describe_drops, require_columns
from judgekit.stats.bias import BIAS_COLUMNS, BY_QUESTION, self_preference
from judgekit.stats.regression import clustered_ols, ols_term
from judgekit.stats.significance import PAdjust, adjust_p
from judgekit.types import UsageError

#: What the panel comparisons assume, printed beside their figures.
PANEL_ASSUMPTIONS: dict[str, str] = {
    "own_minus_other_judges": "the other families' judges as the yardstick (their own "
    "biases included); scores compared as numbers; questions independent (cluster-robust SE)",
    "own_minus_other_judges_did": "as own_minus_other_judges, with the judge's general "
    "leniency relative to the panel removed; cluster-robust SE",
    "own_minus_human": "the human as the yardstick; includes the judge's general leniency; "
    "cluster-robust SE",
}
#: The methods of :func:`panel_self_preference` beyond the single-judge ones.
PANEL_METHODS: tuple[str, ...] = tuple(PANEL_ASSUMPTIONS)


def _gaps(group: pd.DataFrame, judges: Sequence[object], own: Mapping[object, object],
          human: object, author_col: str, columns: Columns) -> pd.DataFrame:  # fmt: skip
    """Items x judges scores (usable only), the human's, the author and the cluster."""
    status = columns.status if columns.status in group.columns else None
    usable = group[columns.score].notna() & ~group[columns.score].isin(list(columns.abstain))
    if status is not None:
        usable &= group[status].astype(str) == "ok"
    wide = (
        group[usable]
        .pivot(index=columns.item, columns=columns.rater, values=columns.score)
        .astype(float)
    )
    wide = wide.reindex(columns=[*judges, human])
    info = group.drop_duplicates(columns.item).set_index(columns.item)
    wide["author"] = info[author_col].reindex(wide.index)
    wide["cluster"] = info[str(columns.cluster)].reindex(wide.index)
    return wide


def _panel_rows(wide: pd.DataFrame, judge: object, others: list[object], target: object,
                human: object, level: float) -> list[dict[str, object]]:  # fmt: skip
    """The three panel comparisons of one judge."""
    is_own = wide["author"] == target
    gap = wide[judge] - wide[others].mean(axis=1)
    rows = []
    for method, values, own_only in (
        ("own_minus_other_judges", gap, True),
        ("own_minus_other_judges_did", gap, False),
        ("own_minus_human", wide[judge] - wide[human], True),
    ):
        keep = values.notna() & (is_own if own_only else True)
        data = pd.DataFrame(
            {
                "score": values[keep],
                "own": is_own[keep].astype(float),
                "cluster": wide["cluster"][keep],
            }
        )
        n_dropped, why = describe_drops(
            np.where(wide[judge].isna(), "judge unscored", "no yardstick score")[
                (~values.notna() & (is_own if own_only else True)).to_numpy()
            ]
        )
        base = {"method": method, "n_dropped": n_dropped, "dropped_reason": why}
        if data["cluster"].nunique() < 2 or (not own_only and data["own"].nunique() < 2):
            rows.append({**base, "note": "too few questions or no own/other split"})
            continue
        terms, term = ([], "Intercept") if own_only else (["own"], "own")
        fit = ols_term(
            clustered_ols(data["score"], data[terms], data["cluster"], level=level), term
        )
        result: dict[str, object] = {key: fit[key] for key in (*INTERVAL_COLUMNS, "p_value")}
        result |= {"n": int(fit["n"]), "n_clusters": int(fit["n_clusters"])}
        rows.append({**base, "term": "own" if not own_only else "own answers", **result})
    return rows


def panel_self_preference(
    df: pd.DataFrame,
    judges: Sequence[object],
    *,
    human: object,
    own: Mapping[object, object] | None = None,
    author_col: str = "model",
    by: Sequence[str] = (),
    columns: Columns = BY_QUESTION,
    level: float = 0.95,
    n_perm: int = 10_000,
    seed: int = 0,
    p_adjust: PAdjust = "holm",
) -> pd.DataFrame:
    """Each judge's scores of its own family's answers against the other judges and the human.

    Formulas in the module docstring. A judge whose family wrote no answer (or every answer)
    gets one ``method="none"`` row with a note.

    Args:
        df: Long table: one row per answer (``columns.item``) and rater, the human among them,
            with the answer's author (``author_col``) and question (``columns.cluster``).
        judges: The panel (values of the rater column).
        human: The human rater's name.
        own: Judge -> the author (family) it belongs to; default the judge's own name.
        author_col: Column naming the model that wrote the answer.
        by: Columns splitting ``df`` into separate analyses (e.g. the rubric dimension).
        columns: Item, rater, score, status and the cluster column (required).
        level: Confidence level.
        n_perm: Permutations of the single-judge permutation test.
        seed: Seed of each ``by`` group's permutation test.
        p_adjust: "holm" or "fdr_bh", over every judge and ``by`` group of one method.

    Returns:
        ``BIAS_COLUMNS`` plus the ``by`` columns, ``p_adjusted`` and ``p_adjust``; first every
        single-judge method's rows, then the three panel comparisons.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> rows = []
        >>> for q in range(30):
        ...     for author in ("A", "B"):
        ...         truth, noise = float(rng.integers(0, 5)), rng.normal(0, 0.3, 2)
        ...         rows += [(f"{q}{author}", q, author, "human", truth),
        ...                  (f"{q}{author}", q, author, "A", truth + (author == "A") + noise[0]),
        ...                  (f"{q}{author}", q, author, "B", truth + noise[1])]
        >>> long = pd.DataFrame(rows, columns=["item", "question", "model", "rater", "score"])
        >>> table = panel_self_preference(long, ["A", "B"], human="human", n_perm=200)
        >>> gap = table[(table["judge"] == "A") & (table["method"] == "own_minus_other_judges")]
        >>> bool(0.8 < gap["estimate"].iloc[0] < 1.2), bool(gap["p_adjusted"].iloc[0] < 0.01)
        (True, True)
    """
    if columns.cluster is None:
        raise UsageError("self-preference clusters its SEs: set Columns(cluster=...)")
    names = list(dict.fromkeys(judges))
    require_columns(df, [columns.item, columns.rater, columns.score, author_col,
                         columns.cluster, *by])  # fmt: skip
    groups = df.groupby(list(by), sort=False) if by else [((), df)]
    single, panel = [], []
    for key, group in groups:
        labels: dict[str, object] = dict(
            zip(by, key if isinstance(key, tuple) else (key,), strict=True)
        )
        judged = group[group[columns.rater].isin(names)].copy()
        human_rows = group[group[columns.rater] == human]
        if human_rows.empty:
            raise UsageError(f"no rows for the human rater {human!r} in {columns.rater!r}")
        human_score = human_rows.set_index(columns.item)[columns.score]
        judged[columns.score] = judged[columns.score].astype(float)
        judged["human_score"] = judged[columns.item].map(human_score).astype(float)
        result = self_preference(
            judged, own=own, author_col=author_col, human_col="human_score",
            columns=Columns(rater=columns.rater, score=columns.score, status=columns.status,
                            cluster=columns.cluster, abstain=columns.abstain),
            level=level, n_perm=n_perm, seed=seed,
        )  # fmt: skip
        single.append(result.assign(**labels))  # type: ignore[arg-type]
        wide = _gaps(group, names, own or {}, human, author_col, columns)
        for judge in names:
            target = (own or {}).get(judge, judge)
            if not (wide["author"] == target).any():
                continue
            others = [j for j in names if (own or {}).get(j, j) != target]
            if not others:
                continue
            for row in _panel_rows(wide, judge, others, target, human, level):
                row["assumption"] = PANEL_ASSUMPTIONS[str(row["method"])]
                panel.append({"judge": judge, **row, **labels})
    frame = pd.concat([*single, pd.DataFrame(panel)], ignore_index=True)
    frame = frame.reindex(columns=[*BIAS_COLUMNS, *by])
    return adjust_p(frame, family=["method"], method=p_adjust)
