"""Pairwise judging: each pair shown in one or both orders, each order a request of its own.

A pairwise rubric (its output format reads a verdict: :data:`PAIRWISE_FORMATS`) judges a pair
items file (:func:`judgekit.data.pairwise.canonical_pair_frame`, checked before any call).
Every pair becomes one engine item per order it is shown in, with the ID ``<pair>/<order>``
(the same suffix in both orders, so neither order is marked), so the store, resume, replay,
panels, runs, variants, the dry run, the Batch API and request files treat each order as an
ordinary item. :func:`pairwise_rows` turns the engine's rows back into the contract's
(``docs/pairwise.md``): ``item_id`` the pair, ``order``, ``verdict`` in the ORIGINAL A/B,
``model_a``, ``model_b``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit.data import Table
from judgekit.data.pairwise import (
    ITEM_MODEL_A,
    ITEM_MODEL_B,
    ORDERS,
    canonical_pair_frame,
    pair_items,
    read_pair_labels,
    unswap,
    verdict_from_preference,
)
from judgekit.data.tidy import LABEL_COLUMNS
from judgekit.formats.verdicts import PAIRWISE_FORMATS
from judgekit.types import Item, Rubric, UsageError

#: ``--orders``: both orders (the default), answer A first only, or one seeded order per pair.
ORDER_CHOICES: tuple[str, ...] = ("both", "ab", "random")
#: The contract's columns a pairwise judgments table adds (docs/pairwise.md).
PAIR_COLUMNS: tuple[str, ...] = ("order", "verdict", "model_a", "model_b")


def is_pairwise(rubric: Rubric) -> bool:
    """Whether ``rubric`` compares two answers (its format reads a verdict)."""
    return rubric.format.name in PAIRWISE_FORMATS


@dataclass(frozen=True)
class PairPlan:
    """How the pairs were shown: the ``--orders`` choice, its seed, each engine ID's pair.

    Attributes:
        orders: ``both``, ``ab`` or ``random``.
        seed: The seed of ``random`` (recorded in study.json).
        shown: Engine item ID -> (pair ID, order).
        models: Pair ID -> (Model_A, Model_B); ``""`` where the file has none.
        labels: Pair ID -> the human label (``a``/``b``/``tie``), for labelled pairs.
    """

    orders: str
    seed: int
    shown: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    models: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What study.json keeps of the plan."""
        return {"orders": self.orders, "seed": self.seed, "requests": len(self.shown)}


def chosen_orders(pair_ids: Sequence[str], orders: str, seed: int) -> list[tuple[str, ...]]:
    """The orders each pair is shown in; ``random`` draws one per pair from ``seed``.

    >>> chosen_orders(["p1", "p2"], "both", 0)
    [('ab', 'ba'), ('ab', 'ba')]
    >>> chosen_orders(["p1"], "random", 3) == chosen_orders(["p1"], "random", 3)
    True
    """
    if orders not in ORDER_CHOICES:
        raise UsageError(f"--orders {orders!r}: choose one of {', '.join(ORDER_CHOICES)}")
    if orders == "both":
        return [ORDERS] * len(pair_ids)
    if orders == "ab":
        return [("ab",)] * len(pair_ids)
    draws = np.random.default_rng(seed).integers(0, 2, size=len(pair_ids))
    return [(ORDERS[int(d)],) for d in draws]


def pair_study_items(
    table: Table, rubric: Rubric, labels_column: str | None, *, orders: str, seed: int,
    no_labels: bool = False,
) -> tuple[list[Item], list[str], str | None, str, PairPlan, pd.DataFrame]:  # fmt: skip
    """The engine items of a pair items table, its unused columns, labels note and plan.

    All of the file is checked first (a missing answer column, an empty answer, the same
    answer in both slots, a label that is neither side), each a one-line error naming the
    file, row and column. Items come order by order (all ``ab``, then all ``ba``).

    Returns:
        (items, unused columns, label column or None, label note, plan, canonical frame).
    """
    source = str(table.path)
    frame = canonical_pair_frame(table.frame, source=source)
    label_column = None if no_labels else (labels_column or rubric.label_column)
    if label_column is not None and label_column not in frame.columns:
        if labels_column is not None:
            raise UsageError(f"{source}: --labels-column '{labels_column}' is not a column")
        label_column = None
    note = "human labels: left out (--no-labels)" if no_labels else "human labels: none"
    ids = [str(i).strip() for i in frame["ID"]]
    labels: dict[str, str] = {}
    if label_column is not None:
        read = read_pair_labels(frame, label_column, source=source)
        labels = {pair: label for pair, label in zip(ids, read, strict=True) if label}
        note = f"human pairwise labels: column '{label_column}' (A, B or tie)"
    per_pair = chosen_orders(ids, orders, seed)
    named = [_texts(frame, c) for c in (ITEM_MODEL_A, ITEM_MODEL_B)]
    models = dict(zip(ids, zip(*named, strict=True), strict=True))
    items: list[Item] = []
    shown: dict[str, tuple[str, str]] = {}
    for order in ORDERS:
        shown_items = pair_items(frame, source=source, order=order)
        for item, wanted in zip(shown_items, per_pair, strict=True):
            if order in wanted:
                engine_id = f"{item.id}/{order}"
                if engine_id in shown:
                    raise UsageError(
                        f"{source}: pair ID {item.id!r} appears twice; give each pair its own ID"
                    )
                shown[engine_id] = (item.id, order)
                items.append(replace(item, id=engine_id))
    sent = set(rubric.input_columns)
    unused = [str(c) for c in frame.columns if c not in sent and c != "ID"]
    plan = PairPlan(orders, seed, shown, models, labels)
    return items, unused, label_column, note, plan, frame


def _texts(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame.columns:
        return [""] * len(frame)
    return ["" if pd.isna(v) else str(v) for v in frame[column]]


def pairwise_rows(judgments: pd.DataFrame, plan: PairPlan) -> pd.DataFrame:
    """The engine's rows as the contract's: the pair as ``item_id``, its order and verdict.

    ``verdict`` is the score's sign (the signed preference for the answer shown first) moved
    back to the ORIGINAL A/B (:func:`~judgekit.data.pairwise.unswap`); ``""`` unless ``ok``.
    Rows of IDs that were never asked (``unknown_id``) keep their ID and an empty order.
    """
    engine_ids = judgments["item_id"].astype(str)
    pair = engine_ids.map(lambda i: plan.shown.get(i, (i, ""))[0])
    order = engine_ids.map(lambda i: plan.shown.get(i, (i, ""))[1])
    ok = judgments["status"].astype(str) == "ok"
    verdicts = [
        unswap(verdict_from_preference(float(score)), shown) if good and shown else ""
        for score, shown, good in zip(judgments["score"], order, ok, strict=True)
    ]
    models = [plan.models.get(p, ("", "")) for p in pair]
    return judgments.assign(
        item_id=pair.to_numpy(),
        order=order.to_numpy(),
        verdict=verdicts,
        model_a=[m[0] for m in models],
        model_b=[m[1] for m in models],
    )


def pair_labels(plan: PairPlan, rubric_name: str) -> pd.DataFrame:
    """The human pairwise labels of the judged pairs: LABEL_COLUMNS plus ``verdict``."""
    return pd.DataFrame(
        {
            "item_id": list(plan.labels),
            "rubric": rubric_name,
            "answer_model": "",
            "score": np.full(len(plan.labels), np.nan),
            "verdict": list(plan.labels.values()),
        },
        columns=[*LABEL_COLUMNS, "verdict"],
    )


def first_of_each_order(items: Sequence[Item], plan: PairPlan | None) -> list[Item]:
    """The first item shown in each order (what a dry run previews); all items if not pairwise."""
    if plan is None:
        return list(items[:1])
    seen: dict[str, Item] = {}
    for item in items:
        seen.setdefault(plan.shown[item.id][1], item)
    return list(seen.values())
