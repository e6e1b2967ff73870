"""The simulator against the real openai client: endpoints, formats, usage, logprobs, shutdown."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from judgekit.simulator import SimulatorConfig, load_config, run_simulator
from judgekit.simulator.tokens import tokenize

SYSTEM = "Score each answer on the scale (0 / 3 / 5). Reply with one ID,score line per row."


def batch_user(items: dict[str, str]) -> str:
    blocks = "\n".join(
        f'<item id="{i}">\n<Answer>{text}</Answer>\n</item>' for i, text in items.items()
    )
    return (
        f"Batch rows 1-{len(items)} ({len(items)} rows). Expected IDs: {', '.join(items)}\n{blocks}"
    )


def messages(items: dict[str, str], system: str = SYSTEM) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": batch_user(items)}]


def client_for(sim, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim.base_url, api_key="sk-test-not-real", max_retries=0, **kwargs)


def test_models_and_plain_id_score_reply_follow_the_oracle() -> None:
    with run_simulator(SimulatorConfig(oracle={"17": 5, "18": 0, "19": 3})) as sim:
        client = client_for(sim)
        assert sim.base_url.startswith("http://127.0.0.1:") and sim.base_url.endswith("/v1")
        assert [m.id for m in client.models.list().data] == ["sim-judge"]
        reply = client.chat.completions.create(
            model="judge-x", messages=messages({"17": "a", "18": "b", "19": "c"})
        )
        assert reply.choices[0].message.content == "17,5\n18,0\n19,3"
        assert reply.choices[0].finish_reason == "stop"
        assert reply.model == "judge-x"
        assert reply.usage.completion_tokens == len(tokenize("17,5\n18,0\n19,3"))
        chars = sum(len(m["content"]) for m in messages({"17": "a", "18": "b", "19": "c"}))
        assert reply.usage.prompt_tokens == pytest.approx(chars / 4 + 8, abs=3)
        entry = sim.last()
        assert entry.outcome == "ok" and entry.reply_text == "17,5\n18,0\n19,3" and entry.seen == 0
        assert sim.stats()["by_outcome"] == {"ok": 1}


def test_without_a_log_the_counts_are_kept_and_the_bodies_are_not() -> None:
    with run_simulator(SimulatorConfig(keep_log=False, oracle={"17": 5})) as sim:
        client = client_for(sim)
        for _ in range(3):
            reply = client.chat.completions.create(model="m", messages=messages({"17": "a"}))
            assert reply.choices[0].message.content == "17,5"
        assert sim.stats()["by_outcome"] == {"ok": 3} and len(sim.requests) == 0


def test_hash_scores_are_on_the_scale_and_depend_only_on_text() -> None:
    items = {str(i): f"answer number {i}" for i in range(1, 41)}
    with run_simulator(SimulatorConfig(seed=7)) as sim:
        client = client_for(sim)
        text = (
            client.chat.completions.create(model="m", messages=messages(items))
            .choices[0]
            .message.content
        )
        scores = dict(line.split(",") for line in text.splitlines())
        assert set(scores) == set(items)
        assert set(scores.values()) <= {"0", "3", "5"}
        assert len(set(scores.values())) > 1  # a hash, not a constant
        # the same text under another ID and in another batch gets the same score
        again = client.chat.completions.create(model="m", messages=messages({"99": items["5"]}))
        assert again.choices[0].message.content == f"99,{scores['5']}"


def test_json_schema_reply_uses_schema_ids_and_scale() -> None:
    schema = {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "enum": ["a1", "a2"]},
                        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5, 6, 7]},
                    },
                },
            }
        },
    }
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "r", "schema": schema, "strict": True},
    }
    with run_simulator(SimulatorConfig(seed=1)) as sim:
        client = client_for(sim)
        for options in (
            {"response_format": response_format},
            {"response_format": {"type": "json_object", "schema": schema}},
            {"extra_body": {"guided_json": schema}},
        ):
            reply = client.chat.completions.create(
                model="m", messages=messages({"a1": "x", "a2": "y"}, "Score."), **options
            )
            data = json.loads(reply.choices[0].message.content)
            assert [e["id"] for e in data["scores"]] == ["a1", "a2"]
            assert all(e["score"] in range(1, 8) for e in data["scores"])


def test_conversation_mode_reads_only_the_last_user_message() -> None:
    history = messages({"1": "old", "2": "old"})
    history.append({"role": "assistant", "content": "1,5\n2,0"})
    history.append({"role": "user", "content": batch_user({"3": "new", "4": "new"})})
    with run_simulator(SimulatorConfig(oracle={"3": 3, "4": 5, "1": 0, "2": 0})) as sim:
        reply = client_for(sim).chat.completions.create(model="m", messages=history)
        assert reply.choices[0].message.content == "3,3\n4,5"
        assert reply.usage.prompt_tokens_details.cached_tokens == 0
        reply = client_for(sim).chat.completions.create(model="m", messages=history)
        assert reply.usage.prompt_tokens_details.cached_tokens > 0


def test_cached_tokens_count_a_repeated_system_prefix() -> None:
    with run_simulator() as sim:
        client = client_for(sim)
        first = client.chat.completions.create(model="m", messages=messages({"1": "a"}))
        second = client.chat.completions.create(model="m", messages=messages({"2": "b"}))
        assert first.usage.prompt_tokens_details.cached_tokens == 0
        assert second.usage.prompt_tokens_details.cached_tokens == len(SYSTEM) // 4 + 4
        assert sim.stats()["cached_tokens"] == len(SYSTEM) // 4 + 4


def test_logprobs_put_the_score_first_and_split_ten_into_two_tokens() -> None:
    system = 'Reply with JSON {"rating": n, "reason": "..."}; "rating": an integer from 0 to 10.'
    with run_simulator(SimulatorConfig(oracle={"q": 10}, logprob_confidence=0.9)) as sim:
        reply = client_for(sim).chat.completions.create(
            model="m", messages=messages({"q": "text"}, system), logprobs=True, top_logprobs=5
        )
    content = reply.choices[0].logprobs.content
    text = reply.choices[0].message.content
    assert "".join(t.token for t in content) == text
    assert json.loads(text)["rating"] == 10
    index = text.index('"rating": ') + len('"rating": ')
    tokens = [t.token for t in content]
    offsets = [sum(len(t) for t in tokens[:k]) for k in range(len(tokens))]
    first, second = content[offsets.index(index)], content[offsets.index(index) + 1]
    assert (first.token, second.token) == ("1", "0")
    assert len(first.top_logprobs) == 5
    alternatives = {a.token: a.logprob for a in first.top_logprobs}
    assert max(alternatives, key=alternatives.get) == "1"
    assert "9" in alternatives  # the neighbouring score keeps some mass
    assert sum(pow(2.718281828, lp) for lp in alternatives.values()) == pytest.approx(1.0, abs=0.02)


def test_max_tokens_truncates_with_finish_reason_length() -> None:
    with run_simulator() as sim:
        reply = client_for(sim).chat.completions.create(
            model="m", messages=messages({str(i): "x" for i in range(10, 30)}), max_tokens=7
        )
        assert reply.choices[0].finish_reason == "length"
        assert reply.usage.completion_tokens == 7
        assert len(tokenize(reply.choices[0].message.content)) == 7
        assert sim.last().finish_reason == "length"


def test_async_client_many_concurrent_requests_are_all_logged() -> None:
    async def go(base_url: str) -> list[str]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
            replies = await asyncio.gather(
                *(
                    client.chat.completions.create(model="m", messages=messages({str(i): f"t{i}"}))
                    for i in range(20)
                )
            )
        return [r.choices[0].message.content for r in replies]

    with run_simulator(SimulatorConfig(latency_s=0.5)) as sim:
        started = time.perf_counter()
        texts = asyncio.run(go(sim.base_url))
        elapsed = time.perf_counter() - started
        assert [t.split(",")[0] for t in texts] == [str(i) for i in range(20)]
        assert len(sim.requests) == 20 and sim.stats()["requests"] == 20
        assert 0.5 <= elapsed < 20 * 0.5 / 2  # served concurrently, not one after another
        sim.reset_stats()
        assert sim.stats()["requests"] == 0 and len(sim.requests) == 0


def _batch_line(custom_id: str, items: dict[str, str]) -> dict[str, Any]:
    """One line of a Batch API input file: a chat request that judges ``items``."""
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "m", "messages": messages(items)},
    }


def test_files_and_batches_endpoints_with_the_sync_client() -> None:
    line = _batch_line("c1", {"7": "x"})
    with run_simulator(SimulatorConfig(oracle={"7": 3}, batch_polls_to_complete=2)) as sim:
        client = client_for(sim)
        uploaded = client.files.create(
            file=("in.jsonl", io.BytesIO((json.dumps(line) + "\n").encode())), purpose="batch"
        )
        assert client.files.retrieve(uploaded.id).filename == "in.jsonl"
        assert json.loads(client.files.content(uploaded.id).text) == line
        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"k": "v"},
        )
        assert batch.status == "validating" and batch.metadata == {"k": "v"}
        assert client.batches.retrieve(batch.id).status == "in_progress"
        done = client.batches.retrieve(batch.id)
        assert (
            done.status == "completed"
            and done.request_counts.completed == 1
            and done.error_file_id is None
        )
        output = json.loads(client.files.content(done.output_file_id).text)
        assert output["custom_id"] == "c1" and output["response"]["status_code"] == 200
        assert output["response"]["body"]["choices"][0]["message"]["content"] == "7,3"
        assert sim.stats()["by_source"] == {"batch": 1}


def test_batch_validation_failure_and_cancel() -> None:
    good = _batch_line("a", {"1": "x"})
    with run_simulator(SimulatorConfig(batch_delay_s=60)) as sim:
        client = client_for(sim)
        duplicated = (json.dumps(good) + "\n") * 2
        bad = client.files.create(
            file=("bad.jsonl", io.BytesIO(duplicated.encode())), purpose="batch"
        )
        failed = client.batches.create(
            input_file_id=bad.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        assert failed.status == "failed" and failed.errors.data[0].code == "duplicate_custom_id"
        ok = client.files.create(
            file=("ok.jsonl", io.BytesIO(json.dumps(good).encode())), purpose="batch"
        )
        batch = client.batches.create(
            input_file_id=ok.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        assert client.batches.cancel(batch.id).status == "cancelled"
        with pytest.raises(openai.NotFoundError):
            client.batches.retrieve("batch-nope")
        with pytest.raises(openai.BadRequestError):
            client.batches.create(
                input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h"
            )


def test_async_client_batch_round_trip() -> None:
    line = _batch_line("x", {"5": "y"})

    async def go(base_url: str) -> str:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
            uploaded = await client.files.create(
                file=("in.jsonl", json.dumps(line).encode()), purpose="batch"
            )
            batch = await client.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
            )
            while batch.status not in ("completed", "failed"):
                await asyncio.sleep(0.02)
                batch = await client.batches.retrieve(batch.id)
            return (await client.files.content(batch.output_file_id)).text

    with run_simulator(SimulatorConfig(oracle={"5": 0}, batch_delay_s=0.1)) as sim:
        output = json.loads(asyncio.run(go(sim.base_url)))
    assert output["response"]["body"]["choices"][0]["message"]["content"] == "5,0"


def test_unknown_route_and_bad_body_get_openai_errors() -> None:
    with run_simulator() as sim:
        client = client_for(sim)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[])
        assert sim.last().outcome == "bad_request"
        with pytest.raises(openai.BadRequestError, match="non-streaming"):
            client.chat.completions.create(model="m", messages=messages({"1": "x"}), n=2)
        with pytest.raises(openai.NotFoundError):
            client.embeddings.create(model="m", input="x")


def test_shutdown_leaves_no_threads_even_with_a_sleeping_request() -> None:
    before = set(threading.enumerate())
    with run_simulator(SimulatorConfig(timeout_rate=1.0, timeout_sleep_s=30)) as sim:
        client = client_for(sim, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=messages({"1": "x"}))
        idle = client_for(sim)
        idle.models.list()  # leaves a keep-alive connection open
        started = time.perf_counter()
    assert time.perf_counter() - started < 5
    assert set(threading.enumerate()) <= before


def test_yaml_config_and_oracle_csv(tmp_path: Path) -> None:
    (tmp_path / "oracle.csv").write_text("ID,score\n1,5\n2,0\n", encoding="utf-8")
    (tmp_path / "sim.yaml").write_text(
        "seed: 3\noracle_csv: oracle.csv\noracle: {'3': 3}\n"
        "malformed: {fence: 0.5}\nscale: [0, 3, 5]\n",
        encoding="utf-8",
    )
    config = load_config(tmp_path / "sim.yaml")
    assert config.oracle == {"1": 5.0, "2": 0.0, "3": 3.0} and config.scale == (0, 3, 5)
    (tmp_path / "bad.yaml").write_text("drop_rate: 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.yaml: .*drop_rate"):
        load_config(tmp_path / "bad.yaml")
    (tmp_path / "typo.yaml").write_text("dropp_rate: 0.1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="dropp_rate"):
        load_config(tmp_path / "typo.yaml")
    (tmp_path / "bad.csv").write_text("ID,score\n1,high\n", encoding="utf-8")
    (tmp_path / "csv.yaml").write_text("oracle_csv: bad.csv\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.csv: row 2, column 'score'"):
        load_config(tmp_path / "csv.yaml")


def test_standalone_command_prints_base_url_and_serves(tmp_path: Path) -> None:
    (tmp_path / "sim.yaml").write_text("oracle: {'1': 5}\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "judgekit.simulator", "--config", str(tmp_path / "sim.yaml")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        line = process.stdout.readline()
        base_url = line.rsplit(" ", 1)[-1].strip()
        assert "not a judge" in line and base_url.startswith("http://127.0.0.1:")
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=messages({"1": "x"}))
        assert reply.choices[0].message.content == "1,5"
    finally:
        process.terminate()
        process.wait(timeout=10)
