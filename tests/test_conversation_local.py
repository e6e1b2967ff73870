"""One tiny conversation through the local llama.cpp judge (a plumbing check, not a quality one)."""

from __future__ import annotations

import pytest

from judgekit.engine import judge
from judgekit.rubrics import load_rubric
from judgekit.stats.position import position_effects
from judgekit.types import Item

pytestmark = pytest.mark.local


@pytest.fixture(scope="module")
def local_server(tmp_path_factory):  # type: ignore[no-untyped-def]
    from judgekit.local import (
        LocalJudgeServer,
        LocalJudgeUnavailable,
        LocalServerConfig,
        find_local_model,
        missing_server_modules,
    )

    missing = missing_server_modules()
    if missing:
        pytest.skip(f"llama_cpp server modules missing: {missing}")
    try:
        find_local_model()
    except LocalJudgeUnavailable as error:
        pytest.skip(f"no local model: {error}")
    settings = LocalServerConfig(n_ctx=4096, log_dir=tmp_path_factory.mktemp("llama"))
    with LocalJudgeServer(settings) as server:
        yield server


def test_local_judge_answers_a_two_turn_conversation(local_server, tmp_path) -> None:
    from judgekit.judging.clients import EndpointOptions, local_judge_client

    rubric = load_rubric("riddle_accuracy")
    items = [
        Item(
            "1",
            {"Question": "Ki írta a Toldit?", "Answer": "Arany János", "Ref_Answer": "Arany János"},
        ),
        Item(
            "2",
            {"Question": "Melyik folyó a leghosszabb?", "Answer": "Tisza", "Ref_Answer": "Duna"},
        ),
        Item("3", {"Question": "Mi a főváros?", "Answer": "Budapest", "Ref_Answer": "Budapest"}),
        Item("4", {"Question": "Kócos kis jószág?", "Answer": "Puli", "Ref_Answer": "Puli"}),
    ]
    client = local_judge_client(local_server, EndpointOptions(timeout_s=300.0))
    table = judge(
        items,
        rubric,
        client,
        batch_size=2,
        mode="conversation",
        context_tokens=4096,
        max_tokens=96,
        max_reasks=1,
        store=tmp_path / "local.sqlite",
        progress=False,
    )
    expected = table[table["status"] != "unknown_id"]
    assert sorted(expected["item_id"]) == ["1", "2", "3", "4"]
    ok = expected[expected["status"] == "ok"]
    assert set(ok["score"]) <= {0.0, 3.0, 5.0}
    assert expected.loc[expected["status"] != "ok", "score"].isna().all()
    assert set(table["conversation"]) == {0}
    first_turns = expected[expected["attempt"] == 1]
    assert sorted(set(first_turns["turn"])) == [0, 1]
    # Turn 2 carries turn 1 and its reply, so it is the longer prompt.
    tokens = first_turns.drop_duplicates("turn").set_index("turn")["prompt_tokens"]
    assert tokens[1] > tokens[0]
    position_effects(table, adjust="item")  # the measurement runs on a real judge's table
