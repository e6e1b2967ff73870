"""The blind labelling widget for JupyterLab (anywidget: its front end ships in this package).

One item at a time: the rubric's scale and anchors, then the item's rubric-facing text
(question, answer, reference); the judge's score is never sent to the page. Keys: a digit
scores (on a scale past 9: digits, then Enter), ``s`` skips, ``a`` abstains, ``←``/``→`` (or
``p``/``n``) move, ``Esc`` leaves the note field. Every label is written to ``labels.csv`` at
once (:func:`~judgekit.labels.table.record_label`), and a new widget for the same labeller
starts at the first item that labeller has not labelled.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import anywidget
import pandas as pd
import traitlets

from judgekit.labels.table import read_labels_table, record_label, rubric_version
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import UsageError

#: How the page titles each rubric-facing column.
COLUMN_TITLES: dict[str, str] = {
    "Question": "Question",
    "Answer": "Answer",
    "Ref_Answer": "Reference answer",
    "Reasoning": "Reasoning",
    "Ref_Reasoning": "Reference reasoning",
}


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


class LabelWidget(anywidget.AnyWidget):
    """Label a list of items blind, one at a time, with the keyboard.

    Args:
        items: One row per item, with an ``ID`` column and the rubric's input columns.
        rubric: The rubric whose scale and anchors the labeller uses.
        labels_path: The study's ``labels.csv`` (created at the first label).
        labeller: This labeller's name; several labellers share one file independently.
    """

    _esm = Path(__file__).with_name("labeller.js")
    _css = Path(__file__).with_name("labeller.css")

    items: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    scale: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    labelled = traitlets.Dict().tag(sync=True)
    labeller = traitlets.Unicode("").tag(sync=True)
    rubric_name = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, items: pd.DataFrame, rubric: JinjaRubric, labels_path: str | Path, labeller: str
    ) -> None:
        if not labeller.strip():
            raise UsageError("labeller: give your name so your labels stay apart from others'")
        if not all(0 <= score <= 99 for score in rubric.scale.allowed):
            raise UsageError(
                f"rubric {rubric.name}: the widget types scores as digits, so they must be "
                f"0-99, not {rubric.scale.allowed}"
            )
        columns = [c for c in rubric.columns_for(items.columns) if c in items.columns]
        if "ID" not in items.columns or not columns:
            raise UsageError(f"items need an ID column and some of {rubric.input_columns}")
        shown = [
            {
                "id": str(row["ID"]),
                "fields": [
                    {"title": COLUMN_TITLES.get(c, c), "text": str(row[c])} for c in columns
                ],
            }
            for _, row in items.iterrows()
        ]
        self._path = Path(labels_path)
        self._rubric = rubric
        self._version = rubric_version(rubric)
        existing = read_labels_table(self._path)
        mine = existing[existing["labeller"] == labeller]
        labelled = {
            str(r.item_id): {"status": r.status, "score": _score(r.score), "note": r.note}
            for r in mine.itertuples()
        }
        first_open = next((i for i, it in enumerate(shown) if it["id"] not in labelled), 0)
        super().__init__(
            items=shown,
            scale=scale_anchors(rubric),
            position=first_open,
            labelled=labelled,
            labeller=labeller,
            rubric_name=rubric.name,
        )
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("kind") != "label":
            return
        try:
            self.record(
                str(content["item_id"]),
                str(content["status"]),
                content.get("score"),
                str(content.get("note", "")),
                advance=bool(content.get("advance", True)),
            )
        except (OSError, ValueError) as problem:
            self.error = f"label not saved: {problem}"

    def record(
        self,
        item_id: str,
        status: str,
        score: float | None,
        note: str = "",
        *,
        advance: bool = True,
    ) -> None:
        """Store one label (file first, then the page) and, unless told not to, move on."""
        if score is not None and float(score) not in self._rubric.scale.allowed:
            raise ValueError(f"{score} is not on the scale {self._rubric.scale.allowed}")
        record_label(
            self._path,
            item_id=item_id,
            labeller=self.labeller,
            status=status,
            score=None if score is None else float(score),
            note=note,
            rubric=self._rubric.name,
            version=self._version,
        )
        self.labelled = {**self.labelled, item_id: {"status": status, "score": score, "note": note}}
        self.error = ""
        if advance:
            self.position = min(self.position + 1, len(self.items) - 1)


def _score(value: Any) -> float | None:
    score = float(value)
    return None if math.isnan(score) else score
