"""The store's writer thread: no write on the event loop's thread, acks after commit, grouping."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from test_engine_runner import ACCURACY, client, riddle_items
from test_engine_store import REPLY, key

from judgekit.engine import ResponseStore, ajudge
from judgekit.engine.store_writer import StoreWriter
from judgekit.simulator import run_simulator


def test_a_judge_run_writes_its_store_off_the_event_loops_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[int] = []
    execute = StoreWriter.execute

    def traced(self: StoreWriter, sql: str, params: Any) -> None:
        writers.append(threading.get_ident())
        execute(self, sql, params)

    monkeypatch.setattr(StoreWriter, "execute", traced)
    reads: list[int] = []
    find = ResponseStore.find

    def traced_find(self: ResponseStore, *args: Any, **kwargs: Any) -> Any:
        reads.append(threading.get_ident())
        return find(self, *args, **kwargs)

    monkeypatch.setattr(ResponseStore, "find", traced_find)

    async def judged() -> tuple[int, int]:
        loop_thread = threading.get_ident()
        table = await ajudge(
            riddle_items(12), ACCURACY, client(sim), batch_size=4, store=tmp_path / "s.sqlite"
        )
        return loop_thread, len(table)

    with run_simulator() as sim:
        loop_thread, rows = asyncio.run(judged())
    assert rows == 12 and len(writers) >= 2 * 3  # a pending row and a reply per request
    assert loop_thread not in writers
    assert reads and set(reads) == {loop_thread}  # the tracer saw the loop's own thread
    with ResponseStore.open_readonly(tmp_path / "s.sqlite") as kept:
        assert kept.counts()["ok"] == 3


def test_a_write_is_acknowledged_only_after_its_commit(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    seen_at_ack: list[str | None] = []

    def read_back(_: Future[None]) -> None:  # a fresh connection sees only committed rows
        with sqlite3.connect(path) as fresh:
            row = fresh.execute("SELECT state FROM requests WHERE request_hash=?", (digest,))
            seen_at_ack.append(next(iter(row.fetchone() or ()), None))
        fresh.close()

    with ResponseStore(path) as store:
        digest = store.record_request(key())
        written = store.submit_reply(digest, REPLY)
        written.add_done_callback(read_back)
        written.result()
    assert seen_at_ack == ["ok"]


def test_grouped_writes_are_all_on_disk_after_a_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups: list[int] = []
    commit = StoreWriter._commit

    def counted(self: StoreWriter, group: list[Any]) -> None:
        groups.append(len(group))
        commit(self, group)

    monkeypatch.setattr(StoreWriter, "_commit", counted)
    path = tmp_path / "s.sqlite"
    store = ResponseStore(path)
    pending = [store.submit_request(key(run=run)) for run in range(500)]
    store.close()  # nothing awaited: the close commits what is queued
    assert all(written.done() and written.exception() is None for written in pending)
    assert sum(groups) == 501 and len(groups) < 500  # and the instructions: grouped
    with ResponseStore.open_readonly(path) as kept:
        assert kept.counts()["pending"] == 500


def test_a_failed_transaction_fails_its_writes_and_every_later_one(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    try:
        broken = store._submit("INSERT INTO no_such_table VALUES (1)", ())
        with pytest.raises(Exception, match="cannot write the response store"):
            broken.result()
        with pytest.raises(Exception, match="cannot write the response store"):
            store.record_request(key())
    finally:
        store.close()
