"""The small pairwise tables the docstring examples of the pairwise statistics run on."""

from __future__ import annotations

import pandas as pd

#: (pair, order, verdict in the original A/B, status): one outcome of each kind.
_ROWS = [
    ("p1", "ab", "a", "ok"), ("p1", "ba", "a", "ok"),  # consistent win for A
    ("p2", "ab", "a", "ok"), ("p2", "ba", "b", "ok"),  # inconsistent: flips with the order
    ("p3", "ab", "tie", "ok"), ("p3", "ba", "tie", "ok"),  # consistent tie
    ("p4", "ab", "b", "ok"), ("p4", "ba", "b", "ok"),  # consistent win for B
    ("p5", "ab", "a", "ok"), ("p5", "ba", "", "unparseable"),  # one order unparsed
]  # fmt: skip
#: Three raters' labels per pair; p5 has no majority.
_LABELS = {
    "p1": ("a", "a", "b"), "p2": ("b", "b", "b"), "p3": ("tie", "tie", "a"),
    "p4": ("b", "a", "b"), "p5": ("a", "tie", "b"),
}  # fmt: skip


def pair_comparisons() -> pd.DataFrame:
    """Five pairs judged in both orders by one judge, one pair per outcome."""
    frame = pd.DataFrame(_ROWS, columns=["pair_id", "order", "verdict", "status"])
    return frame.assign(judge="j", variant="base", run=1, reason="", model_a="m1", model_b="m2")


def pair_labels() -> pd.DataFrame:
    """Three human raters' labels for the five pairs (long: pair_id, rater, label)."""
    rows = [(p, f"h{k + 1}", v) for p, votes in _LABELS.items() for k, v in enumerate(votes)]
    return pd.DataFrame(rows, columns=["pair_id", "rater", "label"])
