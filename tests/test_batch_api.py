"""Batch API mode against the simulator: same table as the online engine, resumable, retried."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judgekit.engine import OpenAIJudge, judge
from judgekit.engine.batch_api import PollPolicy, batch_judge
from judgekit.engine.batch_files import PendingRequest, reply_from_result, write_batch_jsonl
from judgekit.engine.store import RequestKey, ResponseStore
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import ChatRequest, Item

FAST = PollPolicy(initial_s=0.02, factor=1.5, max_interval_s=0.1, timeout_s=20)
ITEMS = [
    Item(
        str(100 + i),
        {"Question": f"Riddle {i}?", "Answer": f"answer {i}", "Ref_Answer": f"ref {i}"},
    )
    for i in range(12)
]
ORACLE = {item.id: (0, 3, 5)[i % 3] for i, item in enumerate(ITEMS)}
# Columns that legitimately differ: the Batch API has no per-request latency, and which
# request of a run reaches the cache first depends on arrival order.
TIMING = ["latency_s", "cached_tokens"]
#: One simulated endpoint, whatever port each simulator instance gets (request keys name it).
SIM_ENDPOINT = "judgekit-simulator"


def online_table(config: SimulatorConfig, tmp_path: Path, **options) -> tuple[pd.DataFrame, dict]:
    with run_simulator(config) as sim:
        client = OpenAIJudge(
            "sim-judge",
            base_url=sim.base_url,
            api_key="sk-test",
            backoff_base_s=0.01,
            endpoint=SIM_ENDPOINT,
        )
        table = judge(
            ITEMS,
            load_rubric("riddle_accuracy"),
            client,
            store=tmp_path / "online.sqlite",
            progress=False,
            **options,
        )
        return table, sim.stats()


def batch_table(config: SimulatorConfig, store: Path, **options) -> tuple[pd.DataFrame, dict]:
    with run_simulator(config) as sim:
        client = OpenAIJudge(
            "sim-judge", base_url=sim.base_url, api_key="sk-test", endpoint=SIM_ENDPOINT
        )
        table = batch_judge(
            ITEMS, load_rubric("riddle_accuracy"), client, store=store, poll=FAST, **options
        )
        return table, sim.stats()


@pytest.mark.parametrize("structured", [False, True])
def test_batch_table_equals_the_online_table(tmp_path: Path, structured: bool) -> None:
    config = SimulatorConfig(
        oracle=ORACLE,
        seed=3,
        malformed={"missing_rows": 0.5, "duplicate_id": 0.3, "fence": 0.3},
        batch_delay_s=0.05,
    )
    options = {
        "batch_size": 4,
        "runs": 2,
        "variants": ("base", "paraphrase_1"),
        "structured": structured,
    }
    online, online_stats = online_table(config, tmp_path, **options)
    batched, stats = batch_table(config, tmp_path / "batch.sqlite", **options)
    assert (online["attempt"] > 1).any()  # the malformations forced re-asks in both modes
    assert len(batched.attrs["batch_ids"]) == online["attempt"].max()  # one batch per round
    pd.testing.assert_frame_equal(online.drop(columns=TIMING), batched.drop(columns=TIMING))
    assert (batched["latency_s"] == 0.0).all()
    # the same requests were answered, once each, in both modes
    assert online_stats["by_source"] == {"online": stats["requests"]}
    assert stats["by_source"] == {"batch": stats["requests"]}
    ok = batched[batched["status"] == "ok"]
    assert (ok["score"] == ok["item_id"].map(ORACLE)).all()


def test_rerun_replays_from_the_store_without_a_new_batch(tmp_path: Path) -> None:
    config = SimulatorConfig(oracle=ORACLE, batch_delay_s=0.0)
    first, _ = batch_table(config, tmp_path / "s.sqlite", batch_size=6)
    second, stats = batch_table(config, tmp_path / "s.sqlite", batch_size=6)
    assert second.attrs["batch_ids"] == [] and stats["requests"] == 0
    pd.testing.assert_frame_equal(first, second)


def test_an_interrupted_wait_resumes_the_same_batch(tmp_path: Path) -> None:
    store = tmp_path / "resume.sqlite"
    config = SimulatorConfig(oracle=ORACLE, batch_polls_to_complete=6)
    with run_simulator(config) as sim:
        client = OpenAIJudge(
            "sim-judge", base_url=sim.base_url, api_key="sk-test", endpoint=SIM_ENDPOINT
        )
        rubric = load_rubric("riddle_accuracy")
        impatient = PollPolicy(initial_s=0.01, factor=1.0, max_interval_s=0.01, timeout_s=0.015)
        with pytest.raises(TimeoutError, match="rerun with the same inputs"):
            batch_judge(ITEMS, rubric, client, store=store, poll=impatient, batch_size=6)
        saved = json.loads((tmp_path / "resume.sqlite.batches.json").read_text())["batches"]
        (batch_id,) = [entry["batch_id"] for entry in saved if not entry["recorded"]]
        table = batch_judge(ITEMS, rubric, client, store=store, poll=FAST, batch_size=6)
        assert table.attrs["batch_ids"] == [batch_id]  # resumed, not resubmitted
        assert sim.stats()["by_source"] == {"batch": 2}  # each request answered once
    saved = json.loads((tmp_path / "resume.sqlite.batches.json").read_text())["batches"]
    assert [(e["batch_id"], e["recorded"], e["status"]) for e in saved] == [
        (batch_id, True, "completed")
    ]
    assert (table["status"] == "ok").all()


def test_failed_lines_are_retried_then_recorded_as_errors(tmp_path: Path) -> None:
    flaky = SimulatorConfig(oracle=ORACLE, error_500_rate=0.5, seed=8, batch_delay_s=0.0)
    with run_simulator(flaky) as sim:
        client = OpenAIJudge(
            "sim-judge", base_url=sim.base_url, api_key="sk-test", endpoint=SIM_ENDPOINT
        )
        table = batch_judge(
            ITEMS,
            load_rubric("riddle_accuracy"),
            client,
            store=tmp_path / "f.sqlite",
            poll=FAST,
            batch_size=2,
            max_line_retries=3,
        )
        tries: dict[str, list[str]] = {}
        for entry in sim.requests:
            tries.setdefault(entry.body_hash, []).append(entry.outcome)
    assert len(tries) == 6 and len(table.attrs["batch_ids"]) == max(len(t) for t in tries.values())
    for outcomes in tries.values():  # retried until it worked, at most 1 + 3 times
        assert outcomes[:-1] == ["error_500"] * (len(outcomes) - 1) and len(outcomes) <= 4
    gave_up = [o for o in tries.values() if o[-1] == "error_500"]
    assert len(gave_up) == 1 and len(gave_up[0]) == 4  # seed 8: one request failed all four tries
    assert (table["status"] == "error").sum() == 2 * len(gave_up)
    errors = table[table["status"] == "error"]
    assert errors["score"].isna().all() and errors["reason"].str.contains("HTTP 500").all()
    answered = table[table["status"] != "error"]
    assert (answered["score"] == answered["item_id"].map(ORACLE)).all()


def test_jsonl_lines_and_custom_ids(tmp_path: Path) -> None:
    request = ChatRequest(
        messages=({"role": "user", "content": "hi"},),
        options={"temperature": 0.0, "extra_body": {"guided_json": {"type": "object"}}},
    )
    key = RequestKey(
        model="m", rubric="riddle_accuracy", variant="base", run=2, attempt=1, request=request
    )
    path = write_batch_jsonl([PendingRequest(key, batch_index=3)], tmp_path / "in.jsonl")
    (line,) = [json.loads(raw) for raw in path.read_text().splitlines()]
    assert line["custom_id"] == f"riddle_accuracy/base/run2/batch3/attempt1/{key.hash}"
    assert line["url"] == "/v1/chat/completions" and line["method"] == "POST"
    assert line["body"] == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "guided_json": {"type": "object"},
    }
    reply, error = reply_from_result(
        {
            "custom_id": "x",
            "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}},
            "error": None,
        }
    )
    assert reply is None and error == "batch line HTTP 429: slow down"
    reply, error = reply_from_result(
        {
            "custom_id": "x",
            "response": None,
            "error": {"code": "batch_expired", "message": "expired"},
        }
    )
    assert reply is None and "batch_expired" in error


def test_reserved_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="offline"):
        batch_judge(
            ITEMS,
            load_rubric("riddle_accuracy"),
            OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key="x"),
            store=ResponseStore(tmp_path / "x.sqlite"),
            offline=True,
        )


def test_downloaded_result_files_are_read_back_line_by_line() -> None:
    """The output file's last line and the error file's first never join (no trailing newline)."""
    import io

    from judgekit.engine.batch_endpoint import result_lines

    downloaded = io.BytesIO(
        b'{"custom_id": "a"}\n{"custom_id": "b"}' + b"\n" + b'{"custom_id": "c"}\n\n'
    )
    assert [line["custom_id"] for line in result_lines(downloaded)] == ["a", "b", "c"]
