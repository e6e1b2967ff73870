"""A pairwise study's judgments and human labels, read on the contract (``_coord`` pairwise study).

A rubric is pairwise when judgekit packages it with ``kind: pairwise``, an import recorded it so,
or its judgments name the order shown (``order``: ``ab``/``ba``). Each order of a pair is its own
row; the verdict is in the original A/B. :class:`~judgekit.study.folder.Study` exposes these as
``is_pairwise``, ``comparisons`` and ``pair_labels``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from judgekit.data.pairwise import COMPARISON_COLUMNS, ORDERS, check_comparisons
from judgekit.data.tidy import JUDGE
from judgekit.rubrics import list_rubrics
from judgekit.study.rubrics import recorded_manifest
from judgekit.types import Status, UsageError

if TYPE_CHECKING:
    from judgekit.study.folder import Study


def is_pairwise(study: Study, rubric: str) -> bool:
    """Whether ``rubric`` compares two answers (``kind: pairwise``).

    A packaged pairwise rubric, an import recorded as pairwise in ``study.json``, or
    judgments of the rubric that name the order shown (the pairwise contract's ``order``).
    """
    if rubric in list_rubrics("pairwise"):
        return True
    commands = recorded_manifest(study.folder).get("commands", [])
    for command in commands if isinstance(commands, list) else []:
        record = command.get("imported_rubric") if isinstance(command, dict) else None
        if isinstance(record, dict) and (record.get("name"), record.get("kind")) == (
            rubric,
            "pairwise",
        ):
            return True
    if "order" not in study.judgments.columns:
        return False
    orders = study.judgments.loc[study.judgments["rubric"] == rubric, "order"]
    return bool(orders.fillna("").astype(str).isin(ORDERS).any())


def chosen_rubric(study: Study, rubric: str | None) -> str:
    """``rubric`` checked to be a judged pairwise rubric; ``None``: the study's only one.

    Raises:
        UsageError: One line naming the study's pairwise rubrics.
    """
    found = study.pairwise_rubrics()
    if rubric is None:
        if len(found) != 1:
            raise UsageError(
                f"say which pairwise rubric: the study judged {', '.join(found) or 'none'}"
            )
        return found[0]
    if rubric not in found:
        raise UsageError(
            f"rubric {rubric!r} is not a judged pairwise rubric; pairwise: "
            f"{', '.join(found) or 'none'}"
        )
    return rubric


def comparisons(study: Study, rubric: str | None = None) -> pd.DataFrame:
    """The comparison long table of a pairwise rubric (``data.pairwise.COMPARISON_COLUMNS``).

    One row per pair x judge x variant x run x order, from the attempt that settled it;
    ``cluster`` is the pair's question when the judgments carry one (:attr:`cluster`).

    Raises:
        UsageError: For a rubric that is not pairwise, or none named in a study of several.
    """
    chosen = chosen_rubric(study, rubric)
    rows = study.judgments[
        (study.judgments["rubric"] == chosen)
        & (study.judgments["status"] != Status.UNKNOWN_ID.value)
    ]
    keys = ["item_id", JUDGE, "variant", "run", "order"]
    last = rows.groupby(keys, sort=False, dropna=False)["attempt"].transform("max")
    rows = rows[rows["attempt"] == last].drop_duplicates(keys, keep="last")
    # the reason is a reply text: a study loaded without replies has none
    blank = pd.Series("", index=rows.index)
    text = {c: rows.get(c, blank).fillna("").astype(str) for c in ("verdict", "reason")}
    frame = pd.DataFrame(
        {
            "pair_id": rows["item_id"].astype(str),
            JUDGE: rows[JUDGE].astype(str),
            "variant": rows["variant"].astype(str),
            "run": rows["run"],
            "order": rows["order"].astype(str),
            **text,
            "status": rows["status"].astype(str),
            "model_a": rows["model_a"].fillna("").astype(str),
            "model_b": rows["model_b"].fillna("").astype(str),
        }
    )
    if study.cluster:
        frame["cluster"] = rows[study.cluster].astype(str)
    frame = frame[[c for c in COMPARISON_COLUMNS if c in frame.columns]]
    check_comparisons(frame, what=str(study.folder.judgments))
    return frame.reset_index(drop=True)


def pair_labels(study: Study, rubric: str | None = None) -> pd.DataFrame:
    """The human pairwise labels of a pairwise rubric: ``pair_id, rater, verdict``.

    Every rater's ``ok`` label with a verdict (``a``/``b``/``tie``), from the items file's
    label column and the labelling tool (``labels.csv``), never merged; possibly empty.
    """
    chosen = chosen_rubric(study, rubric)
    human = study.human
    columns = ["pair_id", "rater", "verdict"]
    if "verdict" not in human.columns or human.empty:
        return pd.DataFrame(columns=columns)
    verdict = human["verdict"].fillna("").astype(str).str.strip().str.lower()
    usable = (human["status"].astype(str) == Status.OK.value) & verdict.isin(("a", "b", "tie"))
    rubrics = human["rubric"].fillna("").astype(str)
    usable &= (rubrics == chosen) | (rubrics == "")
    kept = human.loc[usable]
    return pd.DataFrame(
        {
            "pair_id": kept["item_id"].astype(str),
            "rater": kept["labeller"].astype(str),
            "verdict": verdict[usable],
        },
        columns=columns,
    ).reset_index(drop=True)
