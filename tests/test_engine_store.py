"""ResponseStore: keys, write-as-you-go, export/import, read-only replay."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from judgekit.engine import RequestKey, ResponseStore
from judgekit.engine.keys import canonical_json
from judgekit.types import ChatReply, ChatRequest, Usage

REQUEST = ChatRequest(
    messages=(
        {"role": "system", "content": "Score it."},
        {"role": "user", "content": '<item id="1">x</item>'},
    ),
    options={"temperature": 0.0, "seed": 0},
)
REPLY = ChatReply(
    text="1,5",
    model="m-2026",
    usage=Usage(120, 3, 64),
    latency_s=0.25,
    finish_reason="stop",
    request_id="req_1",
    top_logprobs=((("1", -0.1), ("2", -2.5)), ((",", 0.0),)),
    http_attempts=2,
)


def key(**changes: object) -> RequestKey:
    fields: dict[str, object] = {
        "model": "m",
        "rubric": "r",
        "variant": "base",
        "run": 1,
        "attempt": 1,
        "request": REQUEST,
    }
    fields.update(changes)
    return RequestKey(**fields)  # type: ignore[arg-type]


def test_hash_covers_every_part_of_the_key() -> None:
    base = key().hash
    assert key().hash == base  # stable
    changed = [
        key(model="m2"),
        key(rubric="r2"),
        key(variant="paraphrase_1"),
        key(run=2),
        key(attempt=2),
        key(request=ChatRequest(REQUEST.messages, {"temperature": 0.0, "seed": 1})),
        key(request=ChatRequest(REQUEST.messages[:1], REQUEST.options)),
    ]
    assert len({k.hash for k in changed} | {base}) == len(changed) + 1
    # Option order does not matter (canonical JSON).
    reordered = ChatRequest(REQUEST.messages, {"seed": 0, "temperature": 0.0})
    assert key(request=reordered).hash == base


def test_hashes_are_the_sha256_of_the_whole_key_as_canonical_json() -> None:
    """The definition every existing store was written with (a changed hash re-asks all)."""
    hungarian = ChatRequest(({"role": "user", "content": 'Ő válasza: "igen"\n'},), {"seed": 0})
    ours = key(request=hungarian, endpoint="http://127.0.0.1:1/v1")
    fields = {
        "model": "m",
        "messages": [dict(m) for m in hungarian.messages],
        "options": {"seed": 0},
        "run": 1,
        "variant": "base",
        "rubric": "r",
        "attempt": 1,
    }

    def digest(payload: dict[str, object]) -> str:
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()

    assert ours.base_hash == digest(fields)
    assert ours.hash == digest({**fields, "endpoint": "http://127.0.0.1:1/v1"})
    assert key(request=hungarian).hash == digest(fields)  # no endpoint: schema 1's key


def test_reply_round_trip_and_states(tmp_path) -> None:
    with ResponseStore(tmp_path / "s.sqlite") as store:
        digest = store.record_request(key())
        assert store.lookup(digest) is None  # pending is not an answer
        assert store.counts() == {"pending": 1, "ok": 0, "error": 0}
        store.record_reply(digest, REPLY)
        assert store.lookup(digest).reply == REPLY
        failed = store.record_request(key(run=2))
        store.record_error(failed, "HTTP 500 after 7 attempts", 7)
        assert store.lookup(failed).reply is None and "500" in store.lookup(failed).error
        store.record_request(key(run=2))  # a retry resets the failure to pending
        assert store.lookup(failed) is None
        store.record_request(key())  # re-recording an answered request keeps its reply
        assert store.lookup(digest).reply == REPLY
    with sqlite3.connect(tmp_path / "s.sqlite") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_reply_is_committed_immediately(tmp_path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    digest = store.record_request(key())
    store.record_reply(digest, REPLY)
    # A second connection (another process after a crash) sees it without close() or commit().
    other = ResponseStore.open_readonly(tmp_path / "s.sqlite")
    assert other.lookup(digest).reply == REPLY
    other.close()
    store.close()


@pytest.mark.parametrize("name", ["shared.sqlite", "shared.jsonl.gz"])
def test_export_then_open_readonly(tmp_path, name) -> None:
    with ResponseStore(tmp_path / "s.sqlite") as store:
        digests = []
        for run in (1, 2, 3):
            digest = store.record_request(key(run=run))
            store.record_reply(digest, REPLY)
            digests.append(digest)
        store.record_request(key(run=4))  # pending: exported as is, never served
        exported = store.export(tmp_path / "out" / name)
    assert exported.is_file() and not list((tmp_path / "out").glob("*.partial"))
    with ResponseStore.open_readonly(exported) as shared:
        assert all(shared.lookup(d).reply == REPLY for d in digests)
        with pytest.raises(PermissionError):
            shared.record_request(key(run=9))


def test_open_readonly_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.sqlite"):
        ResponseStore.open_readonly(tmp_path / "nope.sqlite")


def test_the_instructions_are_stored_once_and_read_back_whole(tmp_path) -> None:
    instructions = "Score every row. " * 200  # ~3.4 KB, as a rubric's system message
    requests = [
        ChatRequest(
            ({"role": "system", "content": instructions}, {"role": "user", "content": f"item {i}"}),
            {"temperature": 0.0},
        )
        for i in range(50)
    ]
    with ResponseStore(tmp_path / "s.sqlite") as store:
        for request in requests:
            store.record_reply(store.record_request(key(request=request)), REPLY)
        rows = list(store.rows())
        store.export(tmp_path / "copy.sqlite")
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM instructions").fetchone()[0] == 1
        stored = [text for (text,) in db.execute("SELECT messages FROM requests")]
    assert len(stored) == 50 and all(len(text) < 200 for text in stored)
    expected = {canonical_json([dict(m) for m in r.messages]) for r in requests}
    assert {row["messages"] for row in rows} == expected
    with ResponseStore.open_readonly(tmp_path / "copy.sqlite") as copy:
        assert {row["messages"] for row in copy.rows()} == expected
        assert copy.lookup(key(request=requests[7]).hash) is not None
