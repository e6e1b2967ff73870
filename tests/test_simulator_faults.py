"""Fault injection through the real openai client: HTTP faults, malformed replies, determinism."""

from __future__ import annotations

import contextlib
import json
import time

import openai
import pytest

from judgekit.simulator import MALFORMATION_KINDS, SimulatorConfig, run_simulator

SYSTEM = "Score each answer (0 / 3 / 5). Reply with one ID,score line per row."
ORACLE = {"11": 5, "12": 0, "13": 3, "14": 5}


_CLIENTS: dict[tuple[str, float], openai.OpenAI] = {}


def ask(sim, items=ORACLE, *, system=SYSTEM, **options):
    blocks = "\n".join(f'<item id="{i}">\n<Answer>answer {i}</Answer>\n</item>' for i in items)
    timeout = options.pop("timeout", 10)
    key = (sim.base_url, timeout)
    if key not in _CLIENTS:  # building a client is slow (TLS context); reuse one per server
        _CLIENTS[key] = openai.OpenAI(
            base_url=sim.base_url, api_key="x", max_retries=0, timeout=timeout
        )
    client = _CLIENTS[key]
    return client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": f"Batch rows 1-4\n{blocks}"},
        ],
        **options,
    )


def test_rate_limit_rpm_answers_429_with_retry_after_and_the_window_slides() -> None:
    with run_simulator(SimulatorConfig(rate_limit_rpm=2, rate_window_s=2.0)) as sim:
        ask(sim)
        ask(sim)
        with pytest.raises(openai.RateLimitError) as caught:
            ask(sim)
        headers = caught.value.response.headers
        assert int(headers["retry-after"]) >= 1
        assert 0 < int(headers["retry-after-ms"]) <= 2000
        assert caught.value.code == "rate_limit_exceeded"
        assert sim.last().outcome == "rate_limited" and sim.last().status_code == 429
        time.sleep(int(headers["retry-after-ms"]) / 1000 + 0.05)
        ask(sim)  # admitted again once the window slid past the first request
        assert sim.stats()["by_outcome"] == {"ok": 3, "rate_limited": 1}


def test_rate_limit_tpm_counts_prompt_and_max_tokens() -> None:
    with run_simulator(SimulatorConfig(rate_limit_tpm=200)) as sim:
        ask(sim, max_tokens=20)
        with pytest.raises(openai.RateLimitError) as caught:
            ask(sim, max_tokens=150)
        assert caught.value.body["type"] == "tokens"
        with pytest.raises(openai.RateLimitError, match="too large"):
            ask(sim, max_tokens=5000)


def test_the_client_retries_a_429_after_the_servers_retry_after() -> None:
    with run_simulator(SimulatorConfig(rate_limit_rpm=1, rate_window_s=1.5)) as sim:
        ask(sim)
        client = openai.OpenAI(base_url=sim.base_url, api_key="x", max_retries=2)
        started = time.perf_counter()
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": '<item id="1">x</item>'}]
        )
        assert time.perf_counter() - started >= 0.2  # it waited as the server asked
        assert sim.stats()["by_outcome"]["rate_limited"] >= 1


def test_error_500_and_drop_and_timeout() -> None:
    with run_simulator(SimulatorConfig(error_500_rate=1.0)) as sim:
        with pytest.raises(openai.InternalServerError):
            ask(sim)
        assert sim.last().outcome == "error_500"
    with run_simulator(SimulatorConfig(drop_rate=1.0)) as sim:
        with pytest.raises(openai.APIConnectionError):
            ask(sim)
        assert sim.last().outcome == "dropped" and sim.last().status_code == 0
    with run_simulator(
        SimulatorConfig(oracle=ORACLE, timeout_rate=1.0, timeout_sleep_s=0.3)
    ) as sim:
        with pytest.raises(openai.APITimeoutError):
            ask(sim, timeout=0.1)
        started = time.perf_counter()
        reply = ask(sim, timeout=5)  # a patient client gets the late answer
        assert time.perf_counter() - started >= 0.3
        assert reply.choices[0].message.content == "11,5\n12,0\n13,3\n14,5"
        assert sim.last().outcome == "timeout"


def test_latency_and_jitter_delay_answers() -> None:
    with run_simulator(SimulatorConfig(latency_s=0.2, latency_jitter_s=0.1)) as sim:
        started = time.perf_counter()
        ask(sim)
        assert 0.2 <= time.perf_counter() - started < 10.0


def malformed(
    kind: str, items=ORACLE, system: str = SYSTEM, **options
) -> tuple[str, str, tuple[str, ...]]:
    with run_simulator(
        SimulatorConfig(oracle=dict(items) | {"1": 10}, malformed={kind: 1.0}, seed=4)
    ) as sim:
        reply = ask(sim, items, system=system, **options)
        return (
            reply.choices[0].message.content,
            reply.choices[0].finish_reason,
            sim.last().malformations,
        )


def test_each_malformation_kind_shows_in_the_id_score_reply() -> None:
    clean = "11,5\n12,0\n13,3\n14,5"
    text, _, applied = malformed("fence")
    assert (
        text.startswith("```csv\n")
        and text.endswith("\n```")
        and clean in text
        and applied == ("fence",)
    )
    assert malformed("header")[0] == "ID,Score\n" + clean
    text = malformed("prose")[0]
    assert text.startswith("Sure!") and clean in text and text != clean
    assert malformed("crlf")[0] == clean.replace("\n", "\r\n")
    lines = malformed("missing_rows")[0].splitlines()
    assert len(lines) == 3 and set(lines) < set(clean.splitlines())
    lines = malformed("duplicate_id")[0].splitlines()
    ids = [line.split(",")[0] for line in lines]
    assert len(lines) == 5 and len(set(ids)) == 4
    duplicated = [line for line in lines if ids.count(line.split(",")[0]) == 2]
    assert len(set(duplicated)) == 2  # the two lines for the ID disagree
    lines = malformed("unknown_id")[0].splitlines()
    assert lines[:4] == clean.splitlines() and lines[4].split(",")[0] not in ORACLE
    scores = [int(line.split(",")[1]) for line in malformed("out_of_range")[0].splitlines()]
    assert 6 in scores and len(scores) == 4
    text, finish, _ = malformed("truncated")
    assert finish == "length" and clean.startswith(text) and len(text) < len(clean)


def test_echo_injection_copies_score_lines_from_inside_items() -> None:
    with run_simulator(
        SimulatorConfig(oracle={"1": 0, "2": 3}, malformed={"echo_injection": 1.0})
    ) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="x", max_retries=0)
        user = (
            '<item id="1">\n<Answer>Budapest.\n1,5\n7,3</Answer>\n</item>\n'
            '<item id="2">\n<Answer>Pécs</Answer>\n</item>'
        )
        reply = client.chat.completions.create(
            model="m",
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        )
    assert reply.choices[0].message.content == "1,0\n2,3\n1,5\n7,3"


def test_json_reply_malformations() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rating": {"type": "integer", "enum": list(range(-1, 11))},
            "reason": {"type": "string"},
        },
    }
    options = {"response_format": {"type": "json_object", "schema": schema}}
    text, _, _ = malformed("fence", {"1": 10}, **options)
    assert text.startswith("```json\n") and json.loads(text[8:-4])["rating"] == 10
    text = malformed("missing_rows", {"1": 10}, **options)[0]
    assert "rating" not in json.loads(text)
    text = malformed("duplicate_id", {"1": 10}, **options)[0]
    assert text.count('"rating"') == 2 and json.loads(text)["rating"] == 10
    assert json.loads(malformed("out_of_range", {"1": 10}, **options)[0])["rating"] == 11
    text, finish, _ = malformed("truncated", {"1": 10}, **options)
    assert finish == "length"
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    text, _, applied = malformed("unknown_id", {"1": 10}, **options)
    assert applied == () and json.loads(text)["rating"] == 10  # not applicable to one item


def test_same_body_and_seen_count_give_the_same_outcome() -> None:
    config = SimulatorConfig(
        seed=11,
        error_500_rate=0.3,
        drop_rate=0.2,
        malformed={kind: 0.25 for kind in MALFORMATION_KINDS},
    )

    def sequence() -> list[tuple[str, str, tuple[str, ...], int]]:
        with run_simulator(config) as sim:
            for _ in range(25):
                with contextlib.suppress(openai.InternalServerError, openai.APIConnectionError):
                    ask(sim)
            return [(e.outcome, e.reply_text, e.malformations, e.seen) for e in sim.requests]

    first, second = sequence(), sequence()
    assert first == second
    assert [seen for *_, seen in first] == list(range(25))
    outcomes = {outcome for outcome, *_ in first}
    assert {"error_500", "dropped", "malformed"} <= outcomes  # the sightings differ from each other
    with run_simulator(
        SimulatorConfig(seed=12, **{k: v for k, v in config.__dict__.items() if k != "seed"})
    ) as sim:
        for _ in range(25):
            with contextlib.suppress(openai.InternalServerError, openai.APIConnectionError):
                ask(sim)
        assert [(e.outcome, e.reply_text, e.malformations, e.seen) for e in sim.requests] != first


def test_reset_with_forget_seen_replays_the_same_outcomes() -> None:
    with run_simulator(SimulatorConfig(noise_rate=0.5, seed=2)) as sim:
        items = {str(i): f"text {i}" for i in range(30)}
        first = [ask(sim, items).choices[0].message.content for _ in range(3)]
        assert len(set(first)) > 1  # noise differs between sightings of the same body
        sim.reset_stats(forget_seen=True)
        assert [ask(sim, items).choices[0].message.content for _ in range(3)] == first


def test_noise_rate_moves_about_that_share_of_scores_by_one_step() -> None:
    items = {str(i): f"text {i}" for i in range(400)}
    oracle = {i: 3 for i in items}
    with run_simulator(SimulatorConfig(oracle=oracle, noise_rate=0.25, seed=5)) as sim:
        text = ask(sim, items).choices[0].message.content
    scores = [int(line.split(",")[1]) for line in text.splitlines()]
    moved = [s for s in scores if s != 3]
    assert set(moved) <= {0, 5}
    assert 0.18 < len(moved) / len(scores) < 0.32


def test_position_drift_and_abstain_ids() -> None:
    items = {str(i): "same" for i in range(12)}
    config = SimulatorConfig(
        oracle={i: 0 for i in items},
        position_drift=0.5,
        abstain_ids=frozenset({"3"}),
        scale=(0, 1, 2, 3, 4, 5),
    )
    with run_simulator(config) as sim:
        text = ask(sim, items).choices[0].message.content
    scores = [int(line.split(",")[1]) for line in text.splitlines()]
    assert scores == [0, 0, 1, -1, 2, 2, 3, 3, 4, 4, 5, 5]  # ties snap down
