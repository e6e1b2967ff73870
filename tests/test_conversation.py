"""Conversation mode end to end: real openai client, real HTTP simulator, real SQLite store."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pandas as pd
import pytest

from judgekit.engine import OpenAIJudge, judge
from judgekit.engine.conversation import REASK_PREAMBLE, REPLY_TOKENS_PER_ROW
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item

ACCURACY = load_rubric("riddle_accuracy")
ITEM_ID = re.compile(r'<item id="([^"]*)">')


def riddle_items(n: int) -> list[Item]:
    return [
        Item(
            str(i),
            {"Question": f"Riddle {i}?", "Answer": f"Answer {i}", "Ref_Answer": f"Reference {i}"},
        )
        for i in range(1, n + 1)
    ]


def oracle(n: int) -> dict[str, float]:
    return {str(i): float((0, 3, 5)[i % 3]) for i in range(1, n + 1)}


def converse(sim: Any, n: int, **kwargs: Any) -> pd.DataFrame:
    client = OpenAIJudge(
        "sim-judge", base_url=sim.base_url, provider="simulator", backoff_base_s=0.01
    )
    options = {"batch_size": 3, "structured": False, "progress": False, **kwargs}
    return judge(riddle_items(n), ACCURACY, client, mode="conversation", **options)


def answered(sim: Any) -> list[Any]:
    return [entry for entry in sim.requests if entry.outcome in ("ok", "malformed")]


def last_user_ids(body: Any) -> list[str]:
    return ITEM_ID.findall(body["messages"][-1]["content"])


def test_each_batch_is_the_next_turn_of_one_growing_chat() -> None:
    with run_simulator(SimulatorConfig(oracle=oracle(9))) as sim:
        table = converse(sim, 9)
        entries = answered(sim)
    bodies = [entry.body for entry in entries]
    assert [len(body["messages"]) for body in bodies] == [2, 4, 6]
    for body in bodies:
        assert [m["role"] for m in body["messages"]].count("system") == 1
    for before, entry in itertools.pairwise(entries):
        assistant = {"role": "assistant", "content": before.reply_text}
        assert entry.body["messages"][:-1] == [*before.body["messages"], assistant]
    assert [last_user_ids(body) for body in bodies] == [
        ["1", "2", "3"],
        ["4", "5", "6"],
        ["7", "8", "9"],
    ]
    assert table["score"].tolist() == [oracle(9)[str(i)] for i in range(1, 10)]
    assert table["conversation"].tolist() == [0] * 9
    assert table["turn"].tolist() == table["batch_index"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    # The history is a cacheable prefix: later turns report cached prompt tokens.
    cached = table.drop_duplicates("request_hash")["cached_tokens"].tolist()
    assert cached[0] == 0 and all(value > 0 for value in cached[1:])


def test_failed_rows_are_asked_again_inside_the_conversation() -> None:
    config = SimulatorConfig(oracle=oracle(12), malformed={"missing_rows": 0.5}, seed=3)
    with run_simulator(config) as sim:
        table = converse(sim, 12)
        entries = answered(sim)
    reasks = [
        k
        for k, e in enumerate(entries)
        if e.body["messages"][-1]["content"].startswith(REASK_PREAMBLE)
    ]
    assert reasks, "the fault mix should force at least one re-ask"
    for k in reasks:
        previous = entries[k - 1]
        scored = {line.split(",")[0] for line in previous.reply_text.splitlines() if "," in line}
        lacking = [i for i in last_user_ids(previous.body) if i not in scored]
        assert last_user_ids(entries[k].body) == lacking
        # The re-ask continues the same chat: the failed reply is part of its history.
        assert entries[k].body["messages"][-2] == {
            "role": "assistant",
            "content": previous.reply_text,
        }
    reasked = table[table["attempt"] > 1]
    assert not reasked.empty and (reasked["turn"] > reasked["batch_index"]).all()
    ok = table[table["status"] == "ok"]
    assert ok.set_index("item_id")["score"].to_dict() == {i: oracle(12)[i] for i in ok["item_id"]}
    # A row no re-ask could read stays unscored, after the last allowed re-ask.
    unread = table[table["status"] != "ok"]
    assert set(unread["status"]) <= {"missing", "unparseable"}
    assert (unread["attempt"] == 3).all() and unread["score"].isna().all()


def test_a_full_context_starts_a_new_conversation_with_the_instructions() -> None:
    with run_simulator(SimulatorConfig(oracle=oracle(12))) as sim:
        converse(sim, 12)
        unlimited = [entry.body["messages"] for entry in answered(sim)]
    reserve = REPLY_TOKENS_PER_ROW * 3
    last_two = [unlimited[3][0], *unlimited[3][5:]]  # instructions, turns 3 and 4
    budget = max(map(estimate_message_tokens, (unlimited[1], last_two))) + reserve
    assert estimate_message_tokens(unlimited[2]) + reserve > budget
    with run_simulator(SimulatorConfig(oracle=oracle(12))) as sim:
        table = converse(sim, 12, context_tokens=budget)
        sent = [entry.body["messages"] for entry in answered(sim)]
    assert table.drop_duplicates("batch_index")["conversation"].tolist() == [0, 0, 1, 1]
    assert table.drop_duplicates("batch_index")["turn"].tolist() == [0, 1, 0, 1]
    assert [len(messages) for messages in sent] == [2, 4, 2, 4]
    assert sent[2][0] == sent[0][0]  # the instructions are sent again
    assert all(estimate_message_tokens(m) + reserve <= budget for m in sent)
    assert table.set_index("item_id")["score"].to_dict() == oracle(12)


def test_a_budget_smaller_than_one_turn_is_refused_before_any_call() -> None:
    with run_simulator(SimulatorConfig()) as sim:
        with pytest.raises(ValueError, match="context_tokens=50 is too small for rows 1-3:"):
            converse(sim, 6, context_tokens=50)
        assert len(sim.requests) == 0


def test_context_tokens_belongs_to_conversation_mode() -> None:
    with run_simulator(SimulatorConfig()) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        with pytest.raises(ValueError, match="context_tokens"):
            judge(riddle_items(2), ACCURACY, client, context_tokens=1000, progress=False)


def test_a_stored_conversation_replays_offline_turn_by_turn(tmp_path) -> None:
    store = tmp_path / "chat.sqlite"
    config = SimulatorConfig(oracle=oracle(9), malformed={"missing_rows": 0.4}, seed=5)
    with run_simulator(config) as sim:
        online = converse(sim, 9, store=store, runs=2)
        calls = len(answered(sim))
    assert online.attrs["api_calls"] == calls
    with run_simulator(SimulatorConfig()) as sim:  # a different judge: nothing may reach it
        offline = converse(sim, 9, store=store, runs=2, offline=True)
        assert len(sim.requests) == 0
    assert offline.attrs["replayed"] == calls and offline.attrs["api_calls"] == 0
    measured = ["latency_s", "cached_tokens"]
    pd.testing.assert_frame_equal(online.drop(columns=measured), offline.drop(columns=measured))


def test_the_cost_estimate_counts_the_growing_history(tmp_path) -> None:
    store = tmp_path / "chat.sqlite"
    with run_simulator(SimulatorConfig(oracle=oracle(30))) as sim:
        table = converse(sim, 30, store=store)
        sent = sum(entry.prompt_tokens for entry in answered(sim))
        bodies = [entry.body["messages"] for entry in answered(sim)]
        again = converse(sim, 30, store=store)
    estimate = table.attrs["estimate"]
    assert estimate["requests"] == 10 and estimate["stored"] == 0
    # The endpoint counts tokens its own way; the estimate must be of the same size, and well
    # above what the turns would cost without their history.
    assert 0.8 < estimate["prompt_tokens"] / sent < 1.25
    without_history = sum(estimate_message_tokens([m[0], m[-1]]) for m in bodies)
    assert estimate["prompt_tokens"] > 1.3 * without_history
    assert again.attrs["estimate"]["stored"] == 10 and again.attrs["api_calls"] == 0
