"""The scale benchmark's measurements, on a few items (the full run is `judgekit bench scale`)."""

from __future__ import annotations

import pytest

from benchmarks.bench_scale import (
    CONTENDERS,
    _flatness,
    _trend,
    _windows,
    measure_one,
    scale_items,
    size_metrics,
)
from judgekit.cli.bench_targets import TARGETS
from judgekit.simulator import run_simulator


def test_windows_of_finished_requests_and_their_flatness() -> None:
    stamps = [0.001 * i for i in range(1, 2001)] + [2.0 + 0.002 * i for i in range(1, 1001)]
    rates = _windows(stamps, 0.0)
    assert [round(r) for r in rates] == [1000, 1000, 500]
    assert _flatness(rates) == pytest.approx(0.5) and _flatness(rates[:1]) is None


def test_the_trend_sees_a_falling_rate_through_noise_and_not_one_slow_window() -> None:
    falling = [400 - 4 * i + (25 if i % 2 else -25) for i in range(50)]  # 400 -> 204, noisy
    assert _trend(falling) == pytest.approx((400 - 4 * 49) / 400 - 1, abs=0.02)
    one_slow = [400.0] * 20 + [240.0] + [400.0] * 20  # one window 40 % slow, no trend
    assert _flatness(one_slow) == pytest.approx(0.4) and abs(_trend(one_slow) or 1) < 0.01
    assert _trend([400.0, 300.0]) is None


def test_the_ratio_is_the_median_of_runs_paired_in_turn() -> None:
    def run(contender: str, rate: float, repeat: int) -> dict[str, object]:
        return {
            "contender": contender, "items": 10, "repeat": repeat, "items_per_s": rate,
            "cpu_ms_per_request": 1000 / rate, "windows": [rate] * 3, "cpu_windows": [],
            "peak_mb": 1.0, "endpoint_cpu_share": 0.3, "first_reply_s": 0.1,
        }  # fmt: skip

    ours, loop = CONTENDERS
    results = [run(ours, 300, 0), run(loop, 330, 0), run(loop, 500, 1), run(ours, 200, 1)]
    results += [run(ours, 320, 2), run(loop, 320, 2)]
    metrics = size_metrics(10, results)
    assert metrics["ratios_10"] == pytest.approx([300 / 330, 200 / 500, 1.0])
    assert metrics["ratio_10"] == pytest.approx(300 / 330)


def test_items_have_realistic_answer_sizes() -> None:
    sizes = [len(item.fields["Answer"].encode("utf-8")) for item in scale_items(26)]
    assert min(sizes) >= 1000 and max(sizes) <= 2100


@pytest.mark.parametrize("contender", CONTENDERS)
def test_each_contender_judges_every_item(contender: str) -> None:
    with run_simulator() as sim:
        result = measure_one(contender, 30, sim.base_url)
        assert sim.stats()["requests"] == 30
    assert result["items"] == 30 and result["cpu_ms_per_request"] > 0 and result["peak_mb"] > 0


def test_the_targets_read_the_metrics() -> None:
    metrics = {
        "sizes": [1000, 10000, 100000],
        **{f"ratio_{n}": 0.9 for n in (1000, 10000, 100000)},
        "trend_1000": None, "trend_10000": -0.02, "trend_100000": -0.12, "trends_100000": [-0.12],
        "flat_10000": 0.2, "loop_flat_10000": 0.1, "flat_100000": 0.3, "loop_flat_100000": 0.2,
        "peak_mb_100000": 700.0, "cpu_ms_100000": 2.5,
    }  # fmt: skip
    verdicts = [t.check(metrics) for t in TARGETS if t.benchmark == "scale"]
    assert [v[0] for v in verdicts if v is not None] == [False, True, True]
    shown = verdicts[0][1] if verdicts[0] is not None else ""
    assert "100,000: -12.0 % (-12.0)" in shown and "(loop -20.0 %)" in shown
    metrics["trend_100000"] = -0.08
    flat = next(t for t in TARGETS if t.benchmark == "scale").check(metrics)
    assert flat is not None and flat[0]
