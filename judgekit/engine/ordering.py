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
