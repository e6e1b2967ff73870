"""The scale benchmark's measurements, on a few items (the full run is `judgekit bench scale`)."""

from __future__ import annotations

import pytest

from benchmarks.bench_scale import CONTENDERS, _flatness, _windows, measure_one, scale_items
from judgekit.simulator import run_simulator
from judgekit.workflows.bench_targets import TARGETS


def test_windows_of_finished_requests_and_their_flatness() -> None:
    stamps = [0.001 * i for i in range(1, 2001)] + [2.0 + 0.002 * i for i in range(1, 1001)]
    rates = _windows(stamps, 0.0)
    assert [round(r) for r in rates] == [1000, 1000, 500]
    assert _flatness(rates) == pytest.approx(0.5) and _flatness(rates[:1]) is None


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
        "flat_1000": None, "flat_10000": 0.05, "flat_100000": 0.12,
        "peak_mb_100000": 700.0, "cpu_ms_100000": 2.5,
    }  # fmt: skip
    verdicts = [t.check(metrics) for t in TARGETS if t.benchmark == "scale"]
    assert [v[0] for v in verdicts if v is not None] == [False, True, True]
