"""Item order per run: a recorded, seeded shuffle so every item visits several batch positions.

Seed 000 tells the judge not to let leniency drift with batch position. That can only be
checked if the same item is seen at different positions: with ``shuffle_seed`` the order of the
items (within and across batches) is a permutation drawn from
``numpy.random.default_rng([shuffle_seed, run])``, so run 1 and run 2 differ, every variant of a
run sees the same order, and anyone holding the seed can rebuild the order exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")


def run_permutation(count: int, run: int, shuffle_seed: int) -> list[int]:
    """The 0-based source indices of ``count`` items in the sending order of ``run``.

    Args:
        count: Number of items.
        run: 1-based run number.
        shuffle_seed: The recorded seed.
    """
    if shuffle_seed < 0:
        raise ValueError(f"shuffle_seed must be a non-negative integer, got {shuffle_seed}")
    permutation = np.random.default_rng([shuffle_seed, run]).permutation(count)
    return [int(index) for index in permutation]


def order_items(items: Sequence[T], run: int, shuffle_seed: int | None) -> list[T]:
    """The items in the order ``run`` sends them: as given, or the seeded shuffle of that run."""
    if shuffle_seed is None:
        return list(items)
    return [items[index] for index in run_permutation(len(items), run, shuffle_seed)]


def position_spread(
    judgments: pd.DataFrame, *, by: Sequence[str] = ("variant",), first_ask_only: bool = True
) -> pd.DataFrame:
    """Where each item sat across runs: how many distinct positions and batches it saw.

    Args:
        judgments: The table ``judge()`` returns (``item_id``, ``run``, ``attempt``,
            ``batch_index``, ``position`` and the ``by`` columns).
        by: Columns that separate independent orders (the variant by default).
        first_ask_only: Keep rows settled at the first ask only (a re-asked row's ``position``
            is its place in the re-ask request, not in the original batch).

    Returns:
        One row per item and ``by`` group: ``runs``, ``distinct_positions``,
        ``distinct_batches``, ``min_position``, ``max_position``.
    """
    needed = ["item_id", "run", "attempt", "batch_index", "position", *by]
    missing = [column for column in needed if column not in judgments.columns]
    if missing:
        raise ValueError(f"position_spread: missing column(s) {missing}")
    rows = judgments[judgments["position"].notna()]
    if first_ask_only:
        rows = rows[rows["attempt"] == 1]
    grouped = rows.groupby([*by, "item_id"], sort=True)
    return grouped.agg(
        runs=("run", "nunique"),
        distinct_positions=("position", "nunique"),
        distinct_batches=("batch_index", "nunique"),
        min_position=("position", "min"),
        max_position=("position", "max"),
    ).reset_index()
