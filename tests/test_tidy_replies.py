"""A judgments table is read with one copy of each reply text, or without them for the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgekit.data import write_table
from judgekit.data.tidy import REPLY_TEXT_COLUMNS, read_judgments, write_judgments
from judgekit.engine.history import HISTORY_COLUMNS, attempt_history
from judgekit.engine.store import RequestKey, ResponseStore
from judgekit.types import JUDGMENT_COLUMNS, ChatReply, ChatRequest, Usage


def judgments(n_requests: int = 3, per_request: int = 4) -> pd.DataFrame:
    rows = []
    for r in range(n_requests):
        reply = f"Reply {r}: " + "because " * 200 + "SCORE: 3"
        for i in range(per_request):
            rows.append(
                {column: "" for column in JUDGMENT_COLUMNS}
                | {
                    "item_id": f"{r}-{i}", "rubric": "factual_accuracy", "variant": "base",
                    "model": "m", "run": 1, "attempt": 1, "status": "ok", "score": 3.0,
                    "expected_score": float("nan"), "batch_index": r, "position": i,
                    "request_hash": f"h{r}", "prompt_tokens": 1, "completion_tokens": 1,
                    "latency_s": 0.1, "raw_reply": reply, "verdict_raw": reply,
                    "reason": reply.removesuffix("SCORE: 3"),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_each_reply_text_is_held_once(tmp_path: Path, suffix: str) -> None:
    path = write_table(judgments(), tmp_path / f"judgments{suffix}")
    frame = read_judgments(path)
    assert list(frame["raw_reply"]) == list(judgments()["raw_reply"])
    texts = {id(v) for column in REPLY_TEXT_COLUMNS for v in frame[column]}
    assert len(texts) == 3 + 3  # one reply (also its verdict_raw) and one reason per request
    without = read_judgments(path, replies=False)
    assert not set(REPLY_TEXT_COLUMNS) & set(without.columns)
    assert without["score"].tolist() == frame["score"].tolist()


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_10_mb_reply_judged_in_a_batch_of_20_is_written_once(tmp_path: Path, suffix: str) -> None:
    import tracemalloc

    lines = [f"Q{i:02d},{i % 4}" for i in range(20)]
    reply = "Gondolatmenet: " + "a válasz mérlegelése " * 480_000 + "\n" + "\n".join(lines)
    assert len(reply.encode("utf-8")) > 10_000_000
    table = judgments(n_requests=1, per_request=20)
    table["raw_reply"] = reply
    table["verdict_raw"] = lines
    table["reason"] = ""
    table.loc[19, ["status", "score", "raw_reply"]] = ["unknown_id", float("nan"), reply]
    path = write_judgments(table, tmp_path / f"judgments{suffix}")
    assert path.stat().st_size < 1.1 * len(reply.encode("utf-8"))  # one copy, not 20
    tracemalloc.start()
    frame = read_judgments(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (frame["raw_reply"] == reply).all() and frame["raw_reply"].map(id).nunique() == 1
    assert frame["verdict_raw"].tolist() == lines
    assert peak < 4 * len(reply), (  # a few copies of it, not one per row
        f"peak {peak / 1e6:.0f} MB reading a {len(reply) / 1e6:.0f} MB reply"
    )


def test_rows_of_a_failed_call_keep_an_empty_reply(tmp_path: Path) -> None:
    table = judgments(n_requests=2, per_request=3)
    table.loc[table["request_hash"] == "h1", ["status", "raw_reply"]] = ["error", ""]
    frame = read_judgments(write_judgments(table, tmp_path / "judgments.csv"))
    assert frame["raw_reply"].tolist()[:3] == table["raw_reply"].tolist()[:3]
    assert frame["raw_reply"].iloc[3:].isna().all()  # an empty cell, as write_table writes it


def test_attempt_history_lists_every_request(tmp_path: Path) -> None:
    with ResponseStore(tmp_path / "s.sqlite") as store:
        for attempt in (1, 2):
            request = ChatRequest(({"role": "user", "content": f"ask {attempt}"},), {})
            key = RequestKey("m", "r", "base", 1, attempt, request)
            store.record_request(key)
            if attempt == 1:
                reply = ChatReply("unusable", "m", Usage(3, 1, 0), 0.1, "stop", "id1")
                store.record_reply(key.hash, reply)
    history = attempt_history(tmp_path / "s.sqlite")
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert history[["attempt", "state"]].values.tolist() == [[1, "ok"], [2, "pending"]]
    assert history["reply_text"].iloc[0] == "unusable" and pd.isna(history["reply_text"].iloc[1])
