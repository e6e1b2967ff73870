"""OpenAIJudge through the real openai client against the project's HTTP simulator."""

from __future__ import annotations

import asyncio
import pickle
import time

import jsonschema
import pytest

from judgekit.engine import JudgeCallError, MissingAPIKeyError, OpenAIJudge, get_provider
from judgekit.engine.limits import (
    AdaptiveThrottle,
    SlidingWindow,
    Ticket,
    announced_cooldown_s,
    parse_duration_s,
    retry_after_seconds,
)
from judgekit.engine.providers import PROVIDERS, structured_options
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import ChatRequest, Item, UsageError

RUBRIC = load_rubric("extent_rating")


def _request(item_id: str = "1", **options: object) -> ChatRequest:
    item = Item(item_id, {"Question": f"Question {item_id}?", "Answer": f"Answer {item_id}."})
    return ChatRequest(messages=tuple(RUBRIC.render([item])), options={"temperature": 0, **options})


def _judge(base_url: str, **kwargs: object) -> OpenAIJudge:
    settings: dict[str, object] = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 2.0}
    settings.update(kwargs)
    return OpenAIJudge("sim-judge", base_url=base_url, provider="simulator", **settings)  # type: ignore[arg-type]


def test_reply_carries_usage_logprobs_and_request_id() -> None:
    with run_simulator(SimulatorConfig(oracle={"1": 7})) as sim:
        reply = asyncio.run(_judge(sim.base_url).complete(_request(logprobs=True, top_logprobs=5)))
    assert '"rating": 7' in reply.text
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.finish_reason == "stop" and reply.request_id
    assert reply.http_attempts == 1 and reply.latency_s > 0
    assert reply.top_logprobs is not None
    assert all(1 <= len(step) <= 5 for step in reply.top_logprobs)
    score_step = next(step for step in reply.top_logprobs if step[0][0] == "7")
    assert len(score_step) == 5  # the score token comes with its alternatives


def test_server_errors_are_retried_then_succeed() -> None:
    # Every body fails with 500 on some sightings; the simulator decides per (body, sighting).
    with run_simulator(SimulatorConfig(error_500_rate=0.5, seed=3)) as sim:
        judge = _judge(sim.base_url, max_retries=10)
        replies = asyncio.run(_complete_all(judge, [_request(str(i)) for i in range(12)]))
        outcomes = [entry.outcome for entry in sim.requests]
    assert outcomes.count("error_500") > 0
    assert sum(r.http_attempts for r in replies) == len(outcomes)
    assert all(r.text for r in replies)


async def _complete_all(judge: OpenAIJudge, requests: list[ChatRequest]) -> list:
    try:
        return list(await asyncio.gather(*(judge.complete(r) for r in requests)))
    finally:
        await judge.aclose()


def test_gives_up_with_attempts_and_last_error() -> None:
    with run_simulator(SimulatorConfig(error_500_rate=1.0)) as sim:
        with pytest.raises(JudgeCallError) as caught:
            asyncio.run(_judge(sim.base_url, max_retries=2).complete(_request()))
        assert len(sim.requests) == 3
    assert caught.value.attempts == 3 and caught.value.status_code == 500
    assert not caught.value.fatal and "500" in caught.value.last_error


@pytest.mark.parametrize(
    "fault", [{"drop_rate": 0.3}, {"timeout_rate": 0.3, "timeout_sleep_s": 1.5}]
)
def test_dropped_connections_and_timeouts_are_retried(fault: dict) -> None:
    with run_simulator(SimulatorConfig(seed=1, **fault)) as sim:
        judge = _judge(sim.base_url, max_retries=8, timeout_s=0.5)
        replies = asyncio.run(_complete_all(judge, [_request(str(i)) for i in range(6)]))
        outcomes = [entry.outcome for entry in sim.requests]
    assert {"dropped", "timeout"} & set(outcomes)
    assert any(r.http_attempts > 1 for r in replies)
    assert all('"rating"' in r.text for r in replies)


def test_an_announced_spent_budget_is_waited_out_without_a_429() -> None:
    # One request per 1.5 s window: the first reply says x-ratelimit-remaining-requests: 0 and
    # when the window frees, so the second call waits for that instead of earning a 429.
    config = SimulatorConfig(rate_limit_rpm=1, rate_window_s=1.5)
    with run_simulator(config) as sim:
        judge = _judge(sim.base_url, max_retries=3)

        async def two_calls() -> tuple:
            first = await judge.complete(_request("1"))
            started = time.monotonic()
            second = await judge.complete(_request("2"))
            await judge.aclose()
            return first, second, time.monotonic() - started

        first, second, waited = asyncio.run(two_calls())
        outcomes = [entry.outcome for entry in sim.requests]
    assert outcomes == ["ok", "ok"]
    assert first.http_attempts == 1 and second.http_attempts == 1
    assert waited >= 1.3
    assert judge.throttle.rate_limited_count == 0


def test_429_retry_after_is_honoured() -> None:
    # Two calls at once against one request per 1.5 s: the second is refused with Retry-After
    # and waits for it rather than for its own (tiny) backoff, succeeding on its 2nd attempt.
    config = SimulatorConfig(rate_limit_rpm=1, rate_window_s=1.5)
    with run_simulator(config) as sim:
        judge = _judge(sim.base_url, max_retries=0)
        started = time.monotonic()
        replies = asyncio.run(_complete_all(judge, [_request("1"), _request("2")]))
        waited = time.monotonic() - started
        outcomes = [entry.outcome for entry in sim.requests]
    assert outcomes == ["ok", "rate_limited", "ok"]
    assert sorted(r.http_attempts for r in replies) == [1, 2]
    assert waited >= 1.3
    assert judge.throttle.rate_limited_count == 1


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({}) is None


def test_a_429_holds_every_worker_and_spreads_their_wake_ups() -> None:
    # One worker's 429 starts a cooldown that every other worker sits out too; each wakes at
    # its own jittered moment after it, never before.
    throttle = AdaptiveThrottle(8, jitter_s=0.2, seed=1)

    async def starts() -> list[float]:
        throttle.on_rate_limited(0.3, Ticket(time.monotonic(), 10.0, 10, probe=False))
        began = time.monotonic()

        async def one() -> float:
            async with throttle.slot(10):
                return time.monotonic() - began

        return list(await asyncio.gather(*(one() for _ in range(8))))

    waits = asyncio.run(starts())
    assert min(waits) >= 0.29  # nobody starts inside the cooldown
    assert max(waits) - min(waits) >= 0.05  # not one burst
    assert max(waits) < 0.3 + 0.2 + 0.1


def test_rate_limits_do_not_use_up_retries_but_patience_ends_them() -> None:
    # 2 requests per 1 s window and max_retries=0: every 429 is "later", not a failure, so
    # all six calls succeed; with 0.5 s of patience the same load ends in JudgeCallError.
    config = SimulatorConfig(rate_limit_rpm=2, rate_window_s=1.0)
    with run_simulator(config) as sim:
        replies = asyncio.run(
            _complete_all(_judge(sim.base_url, max_retries=0), [_request(str(i)) for i in range(6)])
        )
        assert all(reply.text for reply in replies)
        assert any(reply.http_attempts > 1 for reply in replies)
    with run_simulator(config) as sim:
        impatient = _judge(sim.base_url, max_retries=0, patience_s=0.5)
        with pytest.raises(JudgeCallError, match=r"patience_s=0\.5"):
            asyncio.run(_complete_all(impatient, [_request(str(i)) for i in range(6)]))


def test_the_token_window_charges_big_requests_in_full() -> None:
    # 60k tokens/min over a 1 s window = 1k tokens per window. 600 tokens start at once; the
    # next 600 wait for the first to leave the window (~1 s); a 2.5k-token request is booked
    # as 1k + 1k + 0.5k in three consecutive windows, so a small request after it waits ~2 s.
    async def admit(*sizes: int) -> list[float]:
        throttle = AdaptiveThrottle(8, tokens_per_minute=60_000, window_s=1.0)
        started, waits = time.monotonic(), []
        for size in sizes:
            async with throttle.slot(size):
                waits.append(time.monotonic() - started)
        return waits

    first, second = asyncio.run(admit(600, 600))
    assert first < 0.05 and 1.0 <= second < 1.3
    big, after = asyncio.run(admit(2_500, 10))
    assert big < 0.05 and 2.0 <= after < 2.4


def test_the_token_budget_learns_what_the_server_counts() -> None:
    # 1k tokens per 1 s window. Our estimate says 600 tokens; the server counted 300. The
    # booking is settled to 300 and the next estimate is scaled by the learnt 0.5, so the
    # second request starts at once instead of waiting for the first to leave the window.
    async def two(counted: int | None) -> float:
        throttle = AdaptiveThrottle(8, tokens_per_minute=60_000, window_s=1.0)
        started = time.monotonic()
        async with throttle.slot(600) as ticket:
            throttle.on_answer(ticket, counted, None)
        async with throttle.slot(600):
            return time.monotonic() - started

    assert asyncio.run(two(300)) < 0.05
    assert asyncio.run(two(None)) >= 1.0  # nothing learnt: the estimates hold


def test_the_sliding_window_never_admits_more_than_its_capacity() -> None:
    window = SlidingWindow(capacity=5, window_s=1.0, margin_s=0.0)
    clock, starts = 0.0, []
    for _ in range(40):
        clock += window.wait_for(1, clock)
        window.take(1, clock)
        starts.append(clock)
        clock += 0.013  # arrivals faster than the budget
    for i, start in enumerate(starts):
        assert sum(start <= other < start + 1.0 for other in starts[i:]) <= 5
    assert starts[-1] < 8.0 + 0.1  # and it uses the budget: 40 starts in about 8 windows


def test_announced_budgets_are_read_from_headers() -> None:
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m2.5s"}
    assert announced_cooldown_s(headers) == 62.5
    assert announced_cooldown_s({**headers, "x-ratelimit-remaining-requests": "3"}) is None
    assert parse_duration_s("250ms") == 0.25 and parse_duration_s("6m0s") == 360.0
    assert parse_duration_s("soon") is None


def test_concurrency_cap_is_respected() -> None:
    with run_simulator(SimulatorConfig(latency_s=0.1)) as sim:
        judge = _judge(sim.base_url, max_concurrency=2)
        started = time.monotonic()
        asyncio.run(_complete_all(judge, [_request(str(i)) for i in range(6)]))
        elapsed = time.monotonic() - started
    assert elapsed >= 0.3  # 6 requests of 0.1 s, two at a time


def test_a_cancelled_waiter_never_loses_a_slot() -> None:
    # Condition.notify() can hand a wake-up to a waiter that is being cancelled; the slots must
    # still all come back, and the throttle never admits more than its cap.
    throttle = AdaptiveThrottle(2)
    in_flight = peak = done = 0

    async def request(hold: float) -> None:
        nonlocal in_flight, peak, done
        async with throttle.slot(1):
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(hold)
            in_flight -= 1
        done += 1

    async def scenario() -> None:
        holders = [asyncio.create_task(request(0.05)) for _ in range(2)]
        waiters = [asyncio.create_task(request(0.0)) for _ in range(6)]
        await asyncio.sleep(0.01)
        for task in waiters[:4]:  # cancelled while waiting for a slot
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*holders, *waiters[4:]), timeout=2)
        await asyncio.wait_for(request(0.0), timeout=1)  # both slots are free again

    asyncio.run(scenario())
    assert peak == 2 and done == 5


def test_request_budget_paces_requests() -> None:
    with run_simulator(SimulatorConfig()) as sim:
        judge = _judge(sim.base_url, requests_per_minute=120, rate_window_s=1.0)
        started = time.monotonic()
        asyncio.run(_complete_all(judge, [_request(str(i)) for i in range(4)]))
        elapsed = time.monotonic() - started
    # 120/min over a 1 s window = 2 per window: two at once, two when they leave the window
    assert 1.0 <= elapsed < 1.5


def test_key_never_in_repr_or_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = "sk-canary-7f3a9c1e55d2"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    with run_simulator(SimulatorConfig(error_500_rate=1.0)) as sim:
        judge = OpenAIJudge("sim-judge", base_url=sim.base_url, max_retries=0)
        assert canary not in repr(judge) and canary not in repr(vars(judge))
        with pytest.raises(TypeError, match="never pickled"):
            pickle.dumps(judge)
        with pytest.raises(JudgeCallError) as caught:
            asyncio.run(judge.complete(_request()))
    assert canary not in str(caught.value)
    assert judge._redact(f"Incorrect API key provided: {canary}") == (
        "Incorrect API key provided: [key]"
    )


def test_missing_key_is_a_clear_error_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="set GEMINI_API_KEY") as caught:
        OpenAIJudge("gemini-2.5-flash", provider="gemini")
    assert isinstance(caught.value, UsageError) and "\n" not in str(caught.value)


def test_base_url_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert OpenAIJudge("m", api_key="x").base_url == "http://127.0.0.1:1/v1"
    assert OpenAIJudge("m", provider="ollama").base_url == "http://localhost:11434/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(UsageError, match="needs a base URL"):
        OpenAIJudge("m", provider="azure", api_key="x")
    with pytest.raises(ValueError, match="unknown provider"):
        get_provider("nonesuch")


def test_every_preset_documents_its_assumptions() -> None:
    for preset in PROVIDERS.values():
        assert preset.notes and preset.api_key_env
    schema = RUBRIC.response_schema(["1"])
    assert structured_options("guided_json", schema) == {"extra_body": {"guided_json": schema}}
    assert structured_options("json_object_schema", schema)["response_format"] == {
        "type": "json_object",
        "schema": schema,
    }
    sent = structured_options("json_schema", schema)["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == schema
    with pytest.raises(ValueError):
        structured_options("none", schema)


def test_llamacpp_schema_pins_one_id_per_position() -> None:
    schema = load_rubric("riddle_accuracy").response_schema(["17", "18"])
    pinned = structured_options("json_object_schema", schema)["response_format"]["schema"]
    jsonschema.validate({"scores": [{"id": "17", "score": 5}, {"id": "18", "score": 0}]}, pinned)
    for repeated_or_swapped in (["17", "17"], ["18", "17"]):
        reply = {"scores": [{"id": i, "score": 3} for i in repeated_or_swapped]}
        jsonschema.validate(reply, schema)  # the enum form cannot stop these ...
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(reply, pinned)  # ... the pinned form can
    # hosted strict modes keep the enum form, which they accept
    assert (
        structured_options("json_schema", schema)["response_format"]["json_schema"]["schema"]
        == schema
    )


def test_an_unreachable_endpoint_fails_fast_naming_its_url() -> None:
    # Nothing listens on port 9: each attempt is refused at once; after the retries the error
    # names the URL and is fatal, since nothing ever succeeded on that endpoint.
    judge = _judge("http://127.0.0.1:9/v1", max_retries=2)
    started = time.monotonic()
    with pytest.raises(JudgeCallError, match=r"endpoint http://127\.0\.0\.1:9/v1") as caught:
        asyncio.run(judge.complete(_request()))
    assert caught.value.fatal and caught.value.attempts == 3
    assert time.monotonic() - started < 5


def test_a_refused_option_is_fatal_at_once_but_one_bad_request_later_is_not() -> None:
    with run_simulator(SimulatorConfig()) as sim:
        judge = _judge(sim.base_url, max_retries=5)

        async def calls() -> tuple[JudgeCallError, JudgeCallError]:
            errors = []
            for request in (_request(n=2), _request("2"), _request(n=2)):
                try:
                    await judge.complete(request)
                except JudgeCallError as error:
                    errors.append(error)
            await judge.aclose()
            return errors[0], errors[1]

        before, after = asyncio.run(calls())
        statuses = [entry.status_code for entry in sim.requests]
    assert statuses == [400, 200, 400]  # a 400 is never retried
    assert before.fatal and before.status_code == 400 and "run stops" in str(before)
    assert not after.fatal  # the endpoint answered before: this request alone is bad


def test_a_hung_endpoint_fails_within_its_attempts_times_the_timeout() -> None:
    # The server never answers in time: 2 attempts x 0.5 s (+ tiny backoff), then a fatal error.
    with run_simulator(SimulatorConfig(timeout_rate=1.0, timeout_sleep_s=30)) as sim:
        judge = _judge(sim.base_url, max_retries=1, timeout_s=0.5)
        started = time.monotonic()
        with pytest.raises(JudgeCallError, match="endpoint http") as caught:
            asyncio.run(judge.complete(_request()))
        elapsed = time.monotonic() - started
    assert caught.value.fatal and caught.value.attempts == 2
    assert 1.0 <= elapsed < 2.5
