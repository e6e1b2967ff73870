"""judge() guards found by review: interrupts, exact offline replay of failures, argument checks,
and the logprob guard against sampled (less likely) score tokens."""

from __future__ import annotations

import asyncio
import inspect
import signal
import threading
import time

import pandas as pd
import pytest
from test_engine_runner import ACCURACY, client, riddle_items, run

from judgekit.engine import ResponseStore, ajudge, judge
from judgekit.engine.replies import top_logprobs
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator

FACTUAL = load_rubric("factual_accuracy")


def test_interrupt_under_a_running_loop_stops_the_run_at_once(tmp_path) -> None:
    """Jupyter's stop button while judge() waits in its worker thread (12 calls of 0.5 s)."""
    store_path = tmp_path / "s.sqlite"
    with run_simulator(SimulatorConfig(latency_s=0.5)) as sim:
        judge_client = client(sim, max_concurrency=1)
        main_thread = threading.main_thread().ident
        assert main_thread is not None
        interrupt = threading.Timer(1.0, signal.pthread_kill, (main_thread, signal.SIGINT))

        async def notebook_cell() -> pd.DataFrame:
            interrupt.start()
            return judge(riddle_items(12), ACCURACY, judge_client, batch_size=1, store=store_path)

        # A notebook kernel's loop: no asyncio SIGINT handler, Ctrl-C raises KeyboardInterrupt.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        loop = asyncio.new_event_loop()
        started = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                loop.run_until_complete(notebook_cell())
            elapsed = time.monotonic() - started
        finally:
            interrupt.cancel()
            loop.close()
            signal.signal(signal.SIGINT, previous)
        time.sleep(1.5)  # a run still going on in the background would reach the server now
        served = len(sim.requests)
    assert elapsed < 2.5
    assert served <= 4
    with ResponseStore(store_path) as store:
        answered = store.counts()["ok"]
    assert 1 <= answered <= served


def test_failed_calls_replay_offline_exactly(tmp_path) -> None:
    store_path = tmp_path / "s.sqlite"
    with run_simulator(SimulatorConfig(error_500_rate=1.0)) as sim:
        online = run(
            riddle_items(4),
            ACCURACY,
            sim,
            batch_size=2,
            store=store_path,
            client_kwargs={"max_retries": 2},
        )
        sim_client = client(sim)
    offline = judge(
        riddle_items(4),
        ACCURACY,
        sim_client,
        batch_size=2,
        store=store_path,
        offline=True,
        progress=False,
    )
    assert (online["status"] == "error").all()
    assert (online["http_attempts"] == 3).all()
    assert online["reason"].str.contains("call failed after 3 attempt").all()
    assert (online["error"] == online["reason"]).all()
    pd.testing.assert_frame_equal(online, offline)
    assert offline.attrs["api_calls"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variants": ("base", "base")}, "distinct"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -2}, "batch_size"),
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        ({"logprobs": True, "top_logprobs": -1}, "top_logprobs"),
        ({"max_reasks": -1}, "max_reasks"),
    ],
)
def test_costly_argument_mistakes_fail_before_any_call(kwargs, message) -> None:
    with run_simulator(SimulatorConfig()) as sim:
        with pytest.raises(ValueError, match=message):
            run(riddle_items(2), ACCURACY, sim, **kwargs)
        assert len(sim.requests) == 0


def test_a_store_opened_read_only_is_named_when_a_run_would_write_it(tmp_path) -> None:
    path = tmp_path / "store.sqlite"
    ResponseStore(path).close()
    with run_simulator(SimulatorConfig()) as sim, ResponseStore.open_readonly(path) as store:
        with pytest.raises(ValueError, match=f"^{path} is open read-only; use offline=True"):
            run(riddle_items(2), ACCURACY, sim, store=store)
        assert len(sim.requests) == 0


@pytest.mark.parametrize(
    ("rubric", "values", "top_in_logprobs"),
    [
        # Confidence 0.35 on the written score: on 0/3/5 a neighbour outweighs 0 and 5, so
        # the judge "sampled" those against its most likely token; 3 stays the most likely.
        (ACCURACY, (0, 3, 5), {3}),
        (FACTUAL, (1, 2, 3, 4), {2, 3}),
    ],
)
def test_sampled_score_token_gets_no_expected_score(rubric, values, top_in_logprobs) -> None:
    truth = {str(i): float(values[i % len(values)]) for i in range(1, 9)}
    items = riddle_items(8)
    with run_simulator(SimulatorConfig(oracle=truth, logprob_confidence=0.35)) as sim:
        table = run(items, rubric, sim, logprobs=True, top_logprobs=5, structured=False)
    assert (table["status"] == "ok").all()
    assert table["score"].tolist() == [truth[i] for i in table["item_id"]]
    resolved = table["score"].isin(top_in_logprobs)
    assert table["expected_score"].notna().tolist() == resolved.tolist()


def test_emitted_token_outside_the_listed_alternatives_is_kept() -> None:
    payload = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "SCORE: 4"},
                "logprobs": {
                    "content": [
                        {
                            "token": "SCORE: ",
                            "logprob": -0.01,
                            "bytes": None,
                            "top_logprobs": [{"token": "SCORE: ", "logprob": -0.01, "bytes": None}],
                        },
                        {
                            "token": "4",
                            "logprob": -3.0,
                            "bytes": None,
                            "top_logprobs": [
                                {"token": "2", "logprob": -0.5, "bytes": None},
                                {"token": "3", "logprob": -1.0, "bytes": None},
                            ],
                        },
                    ]
                },
            }
        ],
    }
    choice = payload["choices"][0]
    assert top_logprobs(choice) == (
        (("SCORE: ", -0.01),),
        (("2", -0.5), ("3", -1.0), ("4", -3.0)),
    )


def test_judge_is_ajudge_made_blocking() -> None:
    assert judge.__name__ == "judge"
    assert inspect.signature(judge) == inspect.signature(ajudge)
