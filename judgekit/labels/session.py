"""One labeller's blind labelling session: what the page may see, and every label saved at once.

Both front ends (the JupyterLab widget and the page of ``judgekit label``) hold a
:class:`LabellingSession` and send the browser only :meth:`LabellingSession.state`: the
rubric's scale and anchors and, per item, a position and the rubric-facing text (question,
answer, reference). Nothing else reaches it: no item ID (an ID can name the model that wrote
the answer), no answering model, no judge score or reason, no selection stratum or reason.
Blindness is a property of what this class is given and sends, not of what a page chooses
to hide.

A skip is not a label: it is stored (status ``skip``) so the item comes back, but it is not
counted as labelled, and a session resumes at the first item the labeller has neither
labelled nor skipped, then at the skipped ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.labels.table import read_labels_table, record_label, rubric_version
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import UsageError

#: How the page titles each rubric-facing column, in the order a reader needs them: the
#: question before the answer, whatever order the rubric's template names them in.
COLUMN_TITLES: dict[str, str] = {
    "Question": "Question",
    "Answer": "Answer",
    "Ref_Answer": "Reference answer",
    "Reasoning": "Reasoning",
    "Ref_Reasoning": "Reference reasoning",
}
#: The front end (JupyterLab widget and the page of ``judgekit label``) and its style.
FRONT_END = Path(__file__).with_name("labeller.js")
STYLE = Path(__file__).with_name("labeller.css")
#: Statuses that are a labeller's verdict on an item (a skip is not one).
VERDICTS: tuple[str, ...] = ("ok", "abstain")


def scale_anchors(rubric: JinjaRubric) -> list[dict[str, Any]]:
    """The rubric's scale as ``{score, label, points}`` rows, best score first."""
    # An anchor's score may be written "7" or "7/10": the leading whole number names it.
    anchors = {
        int(match[0]): anchor
        for anchor in rubric.template_data.get("anchors", [])
        if (match := re.match(r"\d+", str(anchor.get("score", ""))))
    }
    return [
        {
            "score": int(score),
            "label": str(anchors.get(int(score), {}).get("label", "")),
            "points": [str(p) for p in anchors.get(int(score), {}).get("points", [])],
        }
        for score in sorted(rubric.scale.allowed, reverse=True)
    ]


def _reading_order(columns: Sequence[str]) -> list[str]:
    """``columns`` in :data:`COLUMN_TITLES` order (question first); others after, as given.

    Examples:
        >>> _reading_order(["Answer", "Notes", "Question"])
        ['Question', 'Answer', 'Notes']
    """
    known = list(COLUMN_TITLES)
    return sorted(columns, key=lambda c: known.index(c) if c in known else len(known))


def _score(value: Any) -> float | None:
    score = float(value)
    return None if math.isnan(score) else score


class LabellingSession:
    """Label ``items`` blind, in the order given, into ``labels_path`` as ``labeller``.

    Args:
        items: One row per item to label, in labelling order: ``ID`` and the rubric's input
            columns. Any other column (model, judge score, stratum) is ignored, never sent.
        rubric: The rubric whose scale and anchors the labeller uses.
        labels_path: The study's ``labels.csv`` (created at the first label).
        labeller: This labeller's name; several labellers share one file independently.
        show_columns: Extra item columns to show (e.g. ``("Model",)``, to unblind on
            purpose); none by default.

    Raises:
        UsageError: For an empty name, a scale the keyboard cannot type, or items without
            an ID or any of the rubric's columns.
    """

    def __init__(
        self,
        items: pd.DataFrame,
        rubric: JinjaRubric,
        labels_path: str | Path,
        labeller: str,
        *,
        show_columns: Sequence[str] = (),
    ) -> None:
        if not labeller.strip():
            raise UsageError("labeller: give your name so your labels stay apart from others'")
        if not all(0 <= score <= 99 for score in rubric.scale.allowed):
            raise UsageError(
                f"rubric {rubric.name}: the labeller types scores as digits, so they must be "
                f"0-99, not {rubric.scale.allowed}"
            )
        columns = _reading_order(
            [c for c in rubric.columns_for(items.columns) if c in items.columns]
        )
        if "ID" not in items.columns or not columns:
            raise UsageError(f"items need an ID column and some of {rubric.input_columns}")
        unknown = [c for c in show_columns if c not in items.columns]
        if unknown:
            raise UsageError(f"show_columns {unknown}: not columns of the items")
        shown = [*columns, *(c for c in show_columns if c not in columns)]
        self.ids = [str(i) for i in items["ID"]]
        self.fields = [
            [{"title": COLUMN_TITLES.get(c, c), "text": str(row[c])} for c in shown]
            for _, row in items.iterrows()
        ]
        self.labeller = labeller.strip()
        self.rubric = rubric
        self.path = Path(labels_path)
        self.version = rubric_version(rubric)
        mine = read_labels_table(self.path)
        mine = mine[(mine["labeller"] == self.labeller) & mine["item_id"].isin(self.ids)]
        self.labelled: dict[str, dict[str, Any]] = {
            str(r.item_id): {"status": r.status, "score": _score(r.score), "note": r.note}
            for r in mine.itertuples()
        }

    def resume_position(self) -> int:
        """The first item with no label at all, else the first skipped one, else the last."""
        status = [self.labelled.get(i, {}).get("status", "") for i in self.ids]
        for wanted in ("", "skip"):
            if wanted in status:
                return status.index(wanted)
        return len(self.ids) - 1

    def state(self) -> dict[str, Any]:
        """Everything the page may know: positions and texts, the scale, this labeller's labels.

        Labels are keyed by position (``"0"``, ``"1"``, ...), never by item ID.
        """
        return {
            "items": [{"fields": fields} for fields in self.fields],
            "scale": scale_anchors(self.rubric),
            "abstain": bool(self.rubric.scale.abstain),
            "labelled": {
                str(k): self.labelled[item_id]
                for k, item_id in enumerate(self.ids)
                if item_id in self.labelled
            },
            "labeller": self.labeller,
            "rubric_name": self.rubric.name,
        }

    def record(self, position: int, status: str, score: float | None, note: str = "") -> None:
        """Save one label of the item at ``position`` to the file, then remember it.

        Raises:
            ValueError: For a position out of range, a score off the scale, or an abstention
                on a rubric that has no abstain value (the page shows the message).
        """
        if not 0 <= position < len(self.ids):
            raise ValueError(f"no item at position {position + 1}")
        if score is not None and float(score) not in self.rubric.scale.allowed:
            scale = ", ".join(f"{v:g}" for v in self.rubric.scale.allowed)
            raise ValueError(f"{score:g} is not on the scale ({scale})")
        if status == "abstain" and not self.rubric.scale.abstain:
            raise ValueError(f"{self.rubric.name} has no abstain value: score it, or skip (s)")
        item_id = self.ids[position]
        record_label(
            self.path,
            item_id=item_id,
            labeller=self.labeller,
            status=status,
            score=None if score is None else float(score),
            note=note,
            rubric=self.rubric.name,
            version=self.version,
        )
        self.labelled[item_id] = {"status": status, "score": score, "note": note}

    def counts(self) -> dict[str, int]:
        """How many items this labeller labelled (``ok`` or ``abstain``), skipped, left open."""
        status = [self.labelled.get(i, {}).get("status", "") for i in self.ids]
        labelled = sum(s in VERDICTS for s in status)
        skipped = status.count("skip")
        return {"labelled": labelled, "skipped": skipped, "open": len(status) - labelled - skipped}
