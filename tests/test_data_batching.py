"""Batches and the ID,score result file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgekit.data import STATUS_COLUMNS, DataError, make_batches, write_id_score_csv
from judgekit.types import JUDGMENT_COLUMNS, Item


def _items(n: int) -> list[Item]:
    return [Item(id=str(100 + i), fields={"Answer": f"a{i}"}) for i in range(n)]


def test_batches_cover_items_in_order_with_seed_row_labels() -> None:
    batches = make_batches(_items(130), 60)
    assert [b.index for b in batches] == [0, 1, 2]
    assert [b.label for b in batches] == ["rows 1-60", "rows 61-120", "rows 121-130"]
    assert [(b.first_row, b.last_row) for b in batches] == [(1, 60), (61, 120), (121, 130)]
    assert [len(b.items) for b in batches] == [60, 60, 10]
    assert batches[1].ids[0] == "160"
    assert [i for b in batches for i in b.ids] == [str(100 + i) for i in range(130)]


def test_batch_edge_cases() -> None:
    assert make_batches([], 10) == []
    single = make_batches(_items(1), 60)
    assert single[0].label == "rows 1-1"
    assert make_batches(_items(4), 1)[3].label == "rows 4-4"
    with pytest.raises(ValueError, match="at least 1"):
        make_batches(_items(3), 0)


def test_duplicate_ids_cannot_be_batched() -> None:
    items = [*_items(3), Item(id="101", fields={})]
    with pytest.raises(DataError) as caught:
        make_batches(items, 2)
    assert str(caught.value) == "<items>: row 4: duplicate ID '101' (also in row 2)"


def _judgments(rows: list[dict[str, object]]) -> pd.DataFrame:
    base = dict.fromkeys(JUDGMENT_COLUMNS, "")
    base.update(rubric="riddle_accuracy", variant="base", model="judge", run=1, attempt=1)
    return pd.DataFrame([{**base, **row} for row in rows], columns=list(JUDGMENT_COLUMNS))


def test_id_score_file_leaves_unscored_items_empty_and_explains_them(tmp_path: Path) -> None:
    judgments = _judgments(
        [
            {"item_id": "017", "status": "ok", "score": 5.0},
            {"item_id": "18", "status": "unparseable", "score": np.nan, "reason": "no number"},
            {"item_id": "19", "status": "missing", "score": np.nan, "reason": "not in reply"},
            {"item_id": "19", "status": "ok", "score": 3.0, "attempt": 2},
            {"item_id": "20", "status": "abstain", "score": np.nan, "reason": "-1"},
            {"item_id": "a,b", "status": "ok", "score": 2.5},
        ]
    )
    scores, sidecar = write_id_score_csv(judgments, tmp_path / "run1.csv")
    assert scores.read_text(encoding="utf-8") == 'ID,score\n017,5\n18,\n19,3\n20,\n"a,b",2.5\n'
    status = pd.read_csv(sidecar, dtype=str, keep_default_na=False)
    assert sidecar.name == "run1.status.csv"
    assert status.columns.tolist() == list(STATUS_COLUMNS)
    assert status.to_dict("list") == {
        "ID": ["017", "18", "19", "20", "a,b"],
        "status": ["ok", "unparseable", "ok", "abstain", "ok"],
        "score": ["5", "", "3", "", "2.5"],
        "attempt": ["1", "1", "2", "1", "1"],
        "reason": ["", "no number", "", "-1", ""],
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run1.csv", "run1.status.csv"]


def test_id_score_file_needs_one_final_judgment_per_item(tmp_path: Path) -> None:
    judgments = _judgments(
        [
            {"item_id": "1", "status": "ok", "score": 5.0, "run": 1},
            {"item_id": "1", "status": "ok", "score": 3.0, "run": 2},
        ]
    )
    with pytest.raises(ValueError, match=r"item '1' has 2 final judgments; choose one with run="):
        write_id_score_csv(judgments, tmp_path / "x.csv")
    assert not list(tmp_path.iterdir())
    _, _ = write_id_score_csv(judgments, tmp_path / "x.csv", run=2)
    assert (tmp_path / "x.csv").read_text(encoding="utf-8") == "ID,score\n1,3\n"
    with pytest.raises(ValueError, match="no judgments match"):
        write_id_score_csv(judgments, tmp_path / "y.csv", variant="paraphrase_1")


def test_foreign_ids_never_reach_the_id_score_file(tmp_path: Path) -> None:
    # A re-ask whose reply also scored item 2 from another batch must not blank item 2's
    # real verdict, and an ID that exists nowhere must not appear as a line.
    judgments = _judgments(
        [
            {"item_id": "1", "status": "missing", "score": np.nan},
            {"item_id": "2", "status": "ok", "score": 5.0},
            {"item_id": "1", "status": "ok", "score": 3.0, "attempt": 2},
            {"item_id": "2", "status": "unknown_id", "score": np.nan, "attempt": 2},
            {"item_id": "999", "status": "unknown_id", "score": np.nan},
        ]
    )
    scores, _ = write_id_score_csv(judgments, tmp_path / "run.csv")
    assert scores.read_text(encoding="utf-8") == "ID,score\n1,3\n2,5\n"


def test_ok_row_without_score_is_refused(tmp_path: Path) -> None:
    judgments = _judgments([{"item_id": "1", "status": "ok", "score": np.nan}])
    with pytest.raises(ValueError, match="ok but has no score"):
        write_id_score_csv(judgments, tmp_path / "x.csv")
    assert not list(tmp_path.iterdir())
