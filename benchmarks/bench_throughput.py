"""Throughput under a provider rate limit: how close judgekit gets to the limit, losing nothing.

Run from the repository root: ``python3 -m benchmarks.bench_throughput``.

**Request limit, no latency** (issue 12's regime). The simulator admits 30 requests per sliding
window and answers at once; judgekit judges one synthetic item per request. The issue's regime
is 30 requests / 10 s and 10,000 items (about 55 min); here time is scaled by 5 (30 requests /
2 s, the same burst size, five times the rate) and 900 items are judged (30 windows, 60 s at
the limit), so the run fits in minutes. A shorter window is the harder case: every millisecond
of client overhead is five times larger relative to it. Efficiency = the ideal wall time (the
last window opens at (requests / 30 - 1) x 2 s) / achieved; error rows must be 0.

**Request and token limits, 300 ms latency.** The simulator answers after a fixed 300 ms
and enforces a sliding-window limit on requests and tokens (estimated prompt tokens +
``max_tokens`` per request), answering 429 with ``Retry-After`` beyond it. judgekit judges
the 600 riddle rows x 3 runs with the accuracy rubric (60-row batches). The token limit is
scaled so the run needs about 45 s at the limit.

Two client settings are measured on the same server:

* ``told the limit``: the client is given the provider's requests and tokens per minute and
  its window;
* ``not told`` (the default client): no client budget; it learns the limit from 429s and
  ``Retry-After``.

The window is 15 s (the per-minute limits are scaled to it); a ~45 s run spans three windows.

"Best possible" is the wall time of an ideal client that starts every request the moment the
server's window admits it (computed by replaying the server's limiter on the run's own request
sizes) plus one latency. Efficiency = best possible / achieved (= achieved rows/s over the
limit's maximum rows/s for this run).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

from benchmarks._common import (
    LATENCY_S,
    Stopwatch,
    begin_benchmark,
    markdown_table,
    oracle_scores,
    rubric_items,
    scored_items,
    synthetic_items,
    write_metrics,
)
from judgekit.engine import OpenAIJudge, judge
from judgekit.simulator import SimulatorConfig, run_simulator

RUNS = 3
BATCH = 60
TARGET_S = 45.0
WINDOW_S = 15.0
#: The request limit sits this far above the request rate the token limit allows.
REQUEST_LIMIT_HEADROOM = 1.5


def best_possible_s(
    costs: Sequence[int], *, rpm: int, tpm: int, window_s: float, latency_s: float
) -> float:
    """Wall time of an ideal client against a sliding-window limiter (greedy, in order)."""
    admitted: deque[tuple[float, int]] = deque()
    start = 0.0
    for cost in costs:
        while True:
            while admitted and admitted[0][0] <= start - window_s:
                admitted.popleft()
            used = sum(spent for _, spent in admitted)
            if len(admitted) < rpm and used + cost <= tpm:
                break
            start = admitted[0][0] + window_s  # wait for the oldest admission to expire
        admitted.append((start, cost))
    return start + latency_s


def measure(
    items: list[Any], rubric: Any, oracle: dict[str, float], *, rpm: int, tpm: int, told: bool
) -> dict[str, Any]:
    """Judge ``items`` x RUNS against a rate-limited simulator and count what happened."""
    sim_config = SimulatorConfig(
        oracle=oracle,
        latency_s=LATENCY_S,
        rate_limit_rpm=rpm,
        rate_limit_tpm=tpm,
        rate_window_s=WINDOW_S,
    )
    with run_simulator(sim_config) as sim:
        client = OpenAIJudge(
            "sim-judge",
            base_url=sim.base_url,
            provider="simulator",
            requests_per_minute=rpm * 60 / WINDOW_S if told else None,
            tokens_per_minute=tpm * 60 / WINDOW_S if told else None,
            rate_window_s=WINDOW_S,
        )
        with Stopwatch() as clock:
            table = judge(
                items, rubric, client, runs=RUNS, batch_size=BATCH, structured=False, progress=False
            )
        log = sim.requests.snapshot()
    answered = [entry for entry in log if entry.status_code == 200]
    costs = [entry.prompt_tokens for entry in answered]  # no max_tokens is sent
    best = best_possible_s(costs, rpm=rpm, tpm=tpm, window_s=WINDOW_S, latency_s=LATENCY_S)
    expected_rows = len(items) * RUNS
    per_run = table.groupby("run")["item_id"].agg(lambda ids: set(ids) == {i.id for i in items})
    lost = expected_rows - int(table[table["status"] != "unknown_id"].shape[0])
    ok = table["status"] == "ok"
    return {
        "setting": "told the limit" if told else "not told (learns from 429s)",
        "rows": expected_rows,
        "seconds": clock.seconds,
        "rows_per_s": expected_rows / clock.seconds,
        "limit_rows_per_s": expected_rows / best,
        "efficiency": best / clock.seconds,
        "http_429": sum(1 for entry in log if entry.status_code == 429),
        "retries": int(table.drop_duplicates("request_hash")["http_attempts"].sum())
        - int(table["request_hash"].nunique()),
        "api_requests": len(answered),
        "lost_rows": lost + int((~per_run).sum()),
        "wrong_scores": int((table.loc[ok, "score"] != table.loc[ok, "item_id"].map(oracle)).sum()),
    }


REQUEST_LIMIT = 30
REQUEST_WINDOW_S = 2.0
REQUEST_ITEMS = 900


def measure_request_limit(
    told: bool, *, window_s: float = REQUEST_WINDOW_S, n_items: int = REQUEST_ITEMS
) -> dict[str, Any]:
    """Issue 12's regime: 30 requests per ``window_s`` window, no latency, one item a request."""
    rubric, items, _ = rubric_items("riddle_accuracy")
    items = synthetic_items(n_items, rubric.input_columns)
    oracle = oracle_scores(items, rubric.scale.allowed)
    sim_config = SimulatorConfig(
        oracle=oracle, rate_limit_rpm=REQUEST_LIMIT, rate_window_s=window_s
    )
    per_minute = REQUEST_LIMIT * 60 / window_s
    with run_simulator(sim_config) as sim:
        client = OpenAIJudge(
            "sim-judge",
            base_url=sim.base_url,
            provider="simulator",
            requests_per_minute=per_minute if told else None,
            rate_window_s=window_s,
        )
        with Stopwatch() as clock:
            table = judge(items, rubric, client, batch_size=1, structured=False, progress=False)
    ideal = (math.ceil(n_items / REQUEST_LIMIT) - 1) * window_s
    ok = table["status"] == "ok"
    return {
        "setting": "told the limit" if told else "not told (429s and x-ratelimit headers)",
        "rows": len(table),
        "seconds": clock.seconds,
        "ideal_s": ideal,
        "efficiency": ideal / clock.seconds,
        "http_429": client.throttle.rate_limited_count,
        "error_rows": int((table["status"] == "error").sum()),
        "wrong_scores": int((table.loc[ok, "score"] != table.loc[ok, "item_id"].map(oracle)).sum()),
    }


def request_limit_table(results: Sequence[dict[str, Any]]) -> str:
    """The markdown table of :func:`measure_request_limit` results."""
    header = ["client", "rows", "wall s", "ideal s", "efficiency", "429s", "error rows"]
    rows = [
        [
            r["setting"],
            r["rows"],
            f"{r['seconds']:.1f}",
            f"{r['ideal_s']:.1f}",
            f"{r['efficiency']:.3f}",
            r["http_429"],
            r["error_rows"],
        ]
        for r in results
    ]
    return markdown_table(header, rows)


def main() -> None:
    args, source = begin_benchmark(__doc__ or "")
    rubric, items, oracle = scored_items("riddle_accuracy")
    with run_simulator(SimulatorConfig(oracle=oracle)) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        judge(items, rubric, client, batch_size=BATCH, structured=False, progress=False)
        tokens_per_run = sum(entry.prompt_tokens for entry in sim.requests)
    tpm = math.ceil(tokens_per_run * RUNS * WINDOW_S / TARGET_S)
    requests_per_run = math.ceil(len(items) / BATCH)
    rpm = math.ceil(requests_per_run * RUNS * WINDOW_S / TARGET_S * REQUEST_LIMIT_HEADROOM)
    results = [
        measure(items, rubric, oracle, rpm=rpm, tpm=tpm, told=told) for told in (True, False)
    ]
    print(
        f"Items: {source}; rubric riddle_accuracy, {BATCH}-row batches, {RUNS} runs. Simulator: "
        f"{LATENCY_S * 1000:.0f} ms latency, limit {rpm} requests and {tpm} tokens per "
        f"{WINDOW_S:g} s sliding window.\n"
    )
    header = [
        "client",
        "rows",
        "wall s",
        "rows/s",
        "limit max rows/s",
        "efficiency",
        "429s",
        "retries",
        "lost rows",
        "wrong scores",
    ]
    print(
        markdown_table(
            header,
            [
                [
                    r["setting"],
                    r["rows"],
                    f"{r['seconds']:.1f}",
                    f"{r['rows_per_s']:.1f}",
                    f"{r['limit_rows_per_s']:.1f}",
                    f"{r['efficiency']:.3f}",
                    r["http_429"],
                    r["retries"],
                    r["lost_rows"],
                    r["wrong_scores"],
                ]
                for r in results
            ],
        )
    )
    limited = [measure_request_limit(told) for told in (True, False)]
    print(
        f"\nRequest limit, no latency: {REQUEST_LIMIT} requests per {REQUEST_WINDOW_S:g} s "
        f"sliding window, {REQUEST_ITEMS} synthetic items, one per request.\n"
    )
    print(request_limit_table(limited))
    write_metrics(
        args.metrics,
        {
            "efficiency_told": results[0]["efficiency"],
            "efficiency_default": results[1]["efficiency"],
            "lost_rows": max(r["lost_rows"] for r in results),
            "request_limit_told": limited[0]["efficiency"],
            "request_limit_default": limited[1]["efficiency"],
            "request_limit_error_rows": max(r["error_rows"] for r in limited),
            "request_limit_wrong_scores": max(r["wrong_scores"] for r in limited),
        },
    )


if __name__ == "__main__":
    main()
