"""Store schema versions and the endpoint in request keys.

``fixtures/store_v1.sqlite`` was written by judgekit before migrations and endpoints existed
(schema 1): 6 riddle items, ``riddle_accuracy``, batches of 3, 2 runs, a noisy simulator with
missing rows (so re-asks happened), ``fixtures/store_v1_table.csv`` is the table that run returned.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from judgekit.engine import OfflineStoreMissError, OpenAIJudge, RequestKey, ResponseStore, judge
from judgekit.engine.migrations import SCHEMA_VERSION
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import ChatRequest, Item, UsageError

FIXTURES = Path(__file__).parent / "fixtures"
COMPARED = ["item_id", "run", "attempt", "status", "score", "request_hash", "raw_reply"]
UNREACHABLE = "http://127.0.0.1:9/v1"


def _items(count: int = 6) -> list[Item]:
    return [
        Item(
            str(i), {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": f"Ref {i}"}
        )
        for i in range(1, count + 1)
    ]


def _v1_store(tmp_path: Path) -> Path:
    copy = tmp_path / "store_v1.sqlite"
    shutil.copyfile(FIXTURES / "store_v1.sqlite", copy)
    return copy


def _version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])


def _keys_of(path: Path, endpoint: str) -> list[tuple[RequestKey, str]]:
    """Every stored request rebuilt as a key of ``endpoint``, with the reply text it got."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT model, rubric, variant, run, attempt, messages, options, reply_text"
            " FROM requests"
        ).fetchall()
    return [
        (
            RequestKey(
                model, rubric, variant, run, attempt,
                ChatRequest(tuple(json.loads(messages)), json.loads(options)),
                endpoint=endpoint,
            ),
            text,
        )
        for model, rubric, variant, run, attempt, messages, options, text in rows
    ]  # fmt: skip


def test_a_schema_1_store_is_read_without_touching_the_file_then_migrated(tmp_path) -> None:
    path = _v1_store(tmp_path)
    before = path.read_bytes()
    with ResponseStore.open_readonly(path) as old:
        keys = _keys_of(path, "https://api.example.com/v1")
        assert len(keys) == 8
        for key, text in keys:  # the old rows answer for any endpoint, offline and online
            assert old.find(key, offline=True).reply.text == text
            assert old.find(key).request_hash == key.base_hash
    assert path.read_bytes() == before and _version(path) == 1
    with ResponseStore(path) as store:
        assert _version(path) == SCHEMA_VERSION == 5
        rows = list(store.rows())
        assert all(r["endpoint"] == "" and r["base_hash"] == r["request_hash"] for r in rows)
        assert all(store.find(key).reply.text == text for key, text in _keys_of(path, "x"))
    with ResponseStore(path):  # reopening applies nothing twice
        assert _version(path) == SCHEMA_VERSION


def test_a_schema_1_store_replays_the_table_it_was_written_with(tmp_path) -> None:
    path = _v1_store(tmp_path)
    rubric = load_rubric("riddle_accuracy")
    client = OpenAIJudge("sim-judge", base_url=UNREACHABLE, provider="simulator")
    replay_options = {"batch_size": 3, "runs": 2, "structured": False, "progress": False}
    try:
        replay = judge(_items(), rubric, client, store=path, offline=True, **replay_options)
    except OfflineStoreMissError:  # the prompt text is part of the key
        pytest.skip("the riddle_accuracy templates changed since the fixture was written")
    written = pd.read_csv(FIXTURES / "store_v1_table.csv", dtype={"item_id": str})
    written["raw_reply"] = written["raw_reply"].fillna("")  # CSV reads "" as missing
    assert replay.attrs["api_calls"] == 0
    pd.testing.assert_frame_equal(
        replay[COMPARED].reset_index(drop=True),
        written[COMPARED].astype(replay[COMPARED].dtypes.to_dict()),
        check_dtype=False,
    )
    with run_simulator(SimulatorConfig(seed=5)) as sim:  # online, another endpoint: still reused
        online_client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        online = judge(_items(), rubric, online_client, store=path, **replay_options)
        assert len(sim.requests) == 0
    assert online["score"].equals(replay["score"])


def test_same_model_two_endpoints_one_store_two_sets_of_requests(tmp_path) -> None:
    store = tmp_path / "store.sqlite"
    rubric = load_rubric("riddle_accuracy")
    options = {"batch_size": 3, "structured": False, "progress": False, "store": store}
    tables = {}
    for seed in (1, 2):
        with run_simulator(SimulatorConfig(seed=seed, noise_rate=0.5)) as sim:
            client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
            tables[sim.base_url] = judge(_items(), rubric, client, **options)
            assert len(sim.requests) == tables[sim.base_url].attrs["api_calls"] >= 2
    with ResponseStore.open_readonly(store) as opened:
        endpoints = {row["endpoint"] for row in opened.rows()}
    assert endpoints == set(tables)
    for base_url, table in tables.items():  # each endpoint replays its own replies
        client = OpenAIJudge("sim-judge", base_url=base_url, provider="simulator")
        replay = judge(_items(), rubric, client, offline=True, **options)
        pd.testing.assert_frame_equal(replay, table)
    stranger = OpenAIJudge("sim-judge", base_url=UNREACHABLE, provider="simulator")
    with pytest.raises(UsageError, match="answered by 2 endpoints"):
        judge(_items(), rubric, stranger, offline=True, **options)


def test_a_store_from_a_newer_judgekit_is_refused(tmp_path) -> None:
    path = _v1_store(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(UsageError, match="schema 99 is newer"):
        ResponseStore(path)
    garbage = tmp_path / "not_a_store.sqlite"
    garbage.write_bytes(b"PNG" * 100)
    with pytest.raises(UsageError, match="not a usable response store"):
        ResponseStore(garbage)
