"""The store keeps a reply's reasoning field and refusal, so an offline replay reads the same.

Before schema 3 both were dropped: a replayed refusal came back as an empty reply and was read
``unparseable`` instead of ``refused``, and the judge's reasoning was lost.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from judgekit.engine import OpenAIJudge, ResponseStore, judge
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item

UNREACHABLE = "http://127.0.0.1:9/v1"
OPTIONS = {"batch_size": 3, "structured": False, "progress": False}


def _items() -> list[Item]:
    return [
        Item(str(i), {"Question": f"Riddle {i}?", "Answer": f"A{i}", "Ref_Answer": f"R{i}"})
        for i in range(1, 7)
    ]


def _run_online(store: Path, malformation: str) -> tuple[pd.DataFrame, list[dict]]:
    config = SimulatorConfig(seed=3, malformed={malformation: 1.0})
    with run_simulator(config) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        table = judge(_items(), load_rubric("riddle_accuracy"), client, store=store, **OPTIONS)
        assert table.attrs["api_calls"] == len(sim.requests) > 0
    with ResponseStore.open_readonly(store) as opened:
        return table, list(opened.rows())


def _replay(store: Path) -> pd.DataFrame:
    client = OpenAIJudge("sim-judge", base_url=UNREACHABLE, provider="simulator")
    table = judge(_items(), load_rubric("riddle_accuracy"), client, store=store, offline=True,
                  **OPTIONS)  # fmt: skip
    assert table.attrs["api_calls"] == 0
    return table


def test_a_refusal_replays_as_refused(tmp_path) -> None:
    store = tmp_path / "store.sqlite"
    online, rows = _run_online(store, "refusal")
    assert set(online["status"]) == {"refused"}
    assert all(row["refusal"] and row["reply_text"] == "" for row in rows)
    pd.testing.assert_frame_equal(_replay(store), online)


@pytest.mark.parametrize("export_name", ["copy.sqlite", "copy.jsonl.gz"])
def test_reasoning_is_kept_and_survives_export(tmp_path, export_name) -> None:
    store = tmp_path / "store.sqlite"
    online, rows = _run_online(store, "reasoning_field")
    assert all(row["reasoning"].startswith("Draft before checking") for row in rows)
    assert (online["status"] == "ok").all()  # the conflicting draft was not read as the answer
    with ResponseStore.open_readonly(store) as opened:
        exported = opened.export(tmp_path / export_name)
    with ResponseStore.open_readonly(exported) as reopened:
        assert [r["reasoning"] for r in reopened.rows()] == [r["reasoning"] for r in rows]
    pd.testing.assert_frame_equal(_replay(exported), online)


def test_reasoning_block_in_the_content_replays_the_same_table(tmp_path) -> None:
    store = tmp_path / "store.sqlite"
    online, rows = _run_online(store, "reasoning_block")
    assert all("<think>" in row["reply_text"] and row["reasoning"] is None for row in rows)
    pd.testing.assert_frame_equal(_replay(store), online)


def test_an_old_store_gains_empty_reasoning_and_refusal_columns(tmp_path) -> None:
    path = tmp_path / "store_v1.sqlite"
    shutil.copyfile(Path(__file__).parent / "fixtures" / "store_v1.sqlite", path)
    with ResponseStore(path) as store:
        rows = list(store.rows())
        assert len(rows) == 8
        assert all(row["reasoning"] is None and row["refusal"] is None for row in rows)
        assert all(store.lookup(row["request_hash"]).reply.refusal is None for row in rows)
    with sqlite3.connect(path) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(requests)")}
    assert {"reasoning", "refusal"} <= columns
