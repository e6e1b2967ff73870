"""A labeller's blind session on a pairwise study: which of two answers is better.

The page gets the prompt and the two answers, shown left and right in an order drawn per
labeller and pair (seeded: the same labeller sees a pair the same way after a restart, two
labellers independently), never the pair's ID, the models' names, the judge's verdict or which
answer is A. The labeller's keys: 1 (or l) left, 2 (or r) right, 0 (or t) tie, s skip, and a
abstain where the rubric has an abstain value. Each label is stored in ``labels.csv`` mapped
back to the original A/B (``verdict``: ``a``, ``b`` or ``tie``; no score).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.pairwise import ANSWER_A, ANSWER_B
from judgekit.labels.session import LabellingSession
from judgekit.labels.table import read_labels_table, record_label, rubric_version
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import UsageError

#: The labeller's choices as codes on the page's scale: digit -> side as shown.
SIDES: dict[int, str] = {1: "left", 2: "right", 0: "tie"}
_ANCHORS = ({"score": 1, "label": "the LEFT answer is better (1 or l)"},
            {"score": 2, "label": "the RIGHT answer is better (2 or r)"},
            {"score": 0, "label": "a tie: neither is better (0 or t)"})  # fmt: skip


def left_is_b(seed: int, labeller: str, pair_id: str) -> bool:
    """Whether this labeller sees answer B on the left for this pair (a seeded coin per pair).

    >>> [left_is_b(0, "ann", p) for p in ("p1", "p2", "p3")] == [
    ...     left_is_b(0, "ann", p) for p in ("p1", "p2", "p3")]
    True
    """
    digest = hashlib.sha256(f"{seed}\0{labeller}\0{pair_id}".encode()).digest()
    return bool(digest[0] & 1)


class PairLabellingSession(LabellingSession):
    """Label ``pairs`` blind (``ID``, ``Question``, ``Answer_A``, ``Answer_B``) into ``labels.csv``.

    Args:
        pairs: One row per pair, in labelling order; other columns are never sent.
        rubric: The pairwise rubric (its name and version are stored with each label).
        labels_path: The study's ``labels.csv``.
        labeller: This labeller's name.
        seed: Seed of the left/right order (with the labeller's name and the pair).

    Raises:
        UsageError: For an empty name, or pairs without an ID, a prompt or both answers.
    """

    def __init__(
        self,
        pairs: pd.DataFrame,
        rubric: JinjaRubric,
        labels_path: str | Path,
        labeller: str,
        *,
        seed: int = 0,
    ) -> None:
        if not labeller.strip():
            raise UsageError("labeller: give your name so your labels stay apart from others'")
        missing = [c for c in ("ID", "Question", ANSWER_A, ANSWER_B) if c not in pairs.columns]
        if missing:
            raise UsageError(f"pairs to label lack column(s) {', '.join(missing)}")
        self.labeller, self.rubric, self.path = labeller.strip(), rubric, Path(labels_path)
        self.version = rubric_version(rubric)
        self.ids = [str(i) for i in pairs["ID"]]
        self.swapped = [left_is_b(seed, self.labeller, i) for i in self.ids]
        self.fields = []
        for swapped, (_, row) in zip(self.swapped, pairs.iterrows(), strict=True):
            left, right = (
                (row[ANSWER_B], row[ANSWER_A]) if swapped else (row[ANSWER_A], row[ANSWER_B])
            )
            self.fields.append([{"title": "Question", "text": str(row["Question"])},
                                {"title": "Left answer", "text": str(left)},
                                {"title": "Right answer", "text": str(right)}])  # fmt: skip
        mine = read_labels_table(self.path)
        mine = mine[(mine["labeller"] == self.labeller) & mine["item_id"].isin(self.ids)]
        verdicts = mine["verdict"] if "verdict" in mine.columns else pd.Series("", mine.index)
        position = {item: k for k, item in enumerate(self.ids)}
        self.labelled = {
            str(r.item_id): {"status": r.status, "note": r.note,
                             "score": self._code(position[str(r.item_id)], verdict)}
            for r, verdict in zip(mine.itertuples(), verdicts, strict=True)
        }  # fmt: skip

    def _code(self, position: int, verdict: str) -> int | None:
        """The page's code (1 left, 2 right, 0 tie) of a stored A/B verdict."""
        if verdict == "tie":
            return 0
        if verdict not in ("a", "b"):
            return None
        return 2 if (verdict == "a") == self.swapped[position] else 1

    def state(self) -> dict[str, Any]:
        """The blind state: texts by position, the three choices, this labeller's labels."""
        return {**super().state(), "scale": [{**a, "points": []} for a in _ANCHORS],
                "pairwise": True}  # fmt: skip

    def record(self, position: int, status: str, score: float | None, note: str = "") -> None:
        """Save the label at ``position``: ``score`` is the side code, stored as a/b/tie."""
        if not 0 <= position < len(self.ids):
            raise ValueError(f"no item at position {position + 1}")
        if status == "abstain" and not self.rubric.scale.abstain:
            raise ValueError(f"{self.rubric.name} has no abstain value: choose a side, or skip (s)")
        verdict = ""
        if status == "ok":
            if score is None or int(score) not in SIDES or float(score) != int(score):
                raise ValueError("choose 1 (left), 2 (right) or 0 (tie)")
            side = SIDES[int(score)]
            verdict = (
                "tie"
                if side == "tie"
                else "b"
                if (side == "left") == self.swapped[position]
                else "a"
            )
        item_id = self.ids[position]
        record_label(
            self.path, item_id=item_id, labeller=self.labeller, status=status, score=None,
            note=note, rubric=self.rubric.name, version=self.version, verdict=verdict,
        )  # fmt: skip
        code = None if score is None else int(score)
        self.labelled[item_id] = {"status": status, "score": code, "note": note}
