"""The scale benchmark's measurements, on a few items (the full run is `judgekit bench scale`)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from benchmarks._scale_clients import run_judge, run_loop, write_items
from benchmarks._scale_measure import Trace, overlap_quarters, overlap_rates, quarters
from benchmarks.bench_scale import headline, measure_pair
from judgekit.cli.bench_targets import TARGETS
from judgekit.simulator import SimulatorConfig, run_simulator


def _trace(name: str, count: int, rate: float, cpu_ms: list[float], start: float) -> Trace:
    """A client answered at ``rate``/s from ``start`` on, costing ``cpu_ms[i]`` per request in
    its i-th half; ticked every 10 requests."""
    trace, cpu, t = Trace(name, count), 1.0, start
    trace.samples.append((0.0, 0, 0.5))
    for answered in range(1, count + 1):
        cpu += cpu_ms[answered * len(cpu_ms) // (count + 1)] / 1000
        t += 1 / rate
        if answered % 10 == 0 or answered == 1:
            trace.samples.append((t, answered, cpu))
    trace.first_reply_s = start + 1 / rate
    return trace


def test_quarters_see_the_cpu_per_request_grow() -> None:
    flat = quarters(_trace("flat", 400, 100.0, [2.0], 0.0))
    assert flat == pytest.approx([2.0] * 4, rel=0.01)
    growing = quarters(_trace("growing", 400, 100.0, [2.0, 3.0], 0.0))
    assert growing == pytest.approx([2.0, 2.0, 3.0, 3.0], rel=0.02)


def test_rates_are_counted_while_both_clients_run() -> None:
    fast = _trace("fast", 400, 200.0, [1.0], 0.5)  # answered 0.5-2.5 s
    slow = _trace("slow", 400, 100.0, [1.0], 1.0)  # 1.0-5.0 s, alone after 2.5 s
    rates, seconds = overlap_rates([fast, slow])
    assert rates == pytest.approx([200.0, 100.0], rel=0.02) and seconds == pytest.approx(1.5, 0.01)
    late = _trace("late", 400, 100.0, [1.0], 3.0)  # starts after fast is done: no overlap
    rates, seconds = overlap_rates([fast, late])
    assert rates == pytest.approx([200.0, 100.0], rel=0.03) and seconds == 0.0


def test_quarters_of_the_overlap_are_the_same_moments_for_both() -> None:
    ours = _trace("ours", 400, 100.0, [2.0, 3.0], 0.0)  # 0-4 s, dearer from request 200 on
    loop = _trace("loop", 800, 100.0, [1.0], 0.0)  # 0-8 s: the overlap is 0-4 s
    ours_q, loop_q = overlap_quarters([ours, loop])
    assert ours_q == pytest.approx([2.0, 2.0, 3.0, 3.0], rel=0.05)
    assert loop_q == pytest.approx([1.0] * 4, rel=0.05)
    late = _trace("late", 400, 100.0, [1.0], 9.0)
    assert overlap_quarters([loop, late]) == [[], []]


def test_the_loop_sends_what_judgekit_sends(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.csv", 3)
    with items.open(encoding="utf-8") as rows:
        assert [row["ID"] for row in csv.DictReader(rows)] == ["S000000", "S000001", "S000002"]
    bodies: dict[str, list[dict[str, Any]]] = {}
    for output in ("plain", "json_schema"):
        for name, client in (("loop", run_loop), ("judge", run_judge)):
            with run_simulator(SimulatorConfig()) as sim:
                client(items, sim.base_url, output)
                bodies[f"{name} {output}"] = sorted(
                    (r.body for r in sim.requests), key=lambda b: str(b["messages"])
                )
    for output in ("plain", "json_schema"):
        loop, ours = bodies[f"loop {output}"], bodies[f"judge {output}"]
        assert len(loop) == len(ours) == 3
        for a, b in zip(loop, ours, strict=True):
            assert a["messages"] == b["messages"]
            assert a.get("response_format") == b.get("response_format")
    assert "response_format" not in bodies["loop plain"][0]
    assert bodies["loop json_schema"][0]["response_format"]["type"] == "json_schema"


@pytest.mark.slow  # four processes: two clients, two simulators
@pytest.mark.parametrize(("contender", "output"), [("CLI", "json_schema"), ("judge()", "plain")])
def test_a_pair_judges_every_item_and_is_measured(
    tmp_path: Path, contender: str, output: str
) -> None:
    items = write_items(tmp_path / "items.csv", 40)
    pair = measure_pair(contender, output, 40, items, tmp_path)
    assert pair["ours"]["client"] == contender and pair["loop"]["client"] == "loop"
    for side in (pair["ours"], pair["loop"]):
        assert side["cpu_ms_per_request"] > 0 and side["items_per_s"] > 0
        assert side["peak_mb"] > 20 and 0 < side["first_reply_mb"] <= side["peak_mb"]
        assert len(side["quarters_ms"]) == 4 and side["first_reply_s"] < side["seconds"]
    assert pair["quarter_ratios"] in ([], pytest.approx([1.0, *pair["quarter_ratios"][1:]]))
    assert pair["cpu_ratio"] > 0 and pair["rate_ratio"] > 0
    assert len(pair["load"]) == 2 and not (tmp_path / "study").exists()


def _pair(contender: str, output: str, items: int, cpu: float, quarter: float) -> dict[str, Any]:
    ours = {"peak_vs_file": 2.0, "first_reply_mb": 100.0}
    return {
        "contender": contender, "output": output, "items": items, "items_mb": 160.0,
        "cpu_ratio": cpu, "rate_ratio": 1 / cpu, "ours": ours,
        "quarter_ratios": [1.0, 1.0, quarter, 1.0], "own_quarter_ratios": [1.0, 1.0, 1.2, 1.0],
        "loop_quarter_ratios": [1.0, 0.95, 1.0, 1.0],
    }  # fmt: skip


def test_the_targets_read_the_medians_of_the_pairs() -> None:
    pairs = [
        _pair("CLI", "plain", 10_000, 1.05, 1.04),
        _pair("CLI", "plain", 10_000, 1.30, 1.02),
        _pair("CLI", "plain", 10_000, 1.08, 1.03),
        _pair("CLI", "json_schema", 10_000, 1.09, 0.88),
        _pair("judge()", "plain", 1_000, 1.50, 1.5),  # 10^3: no target
    ]
    kinds = headline(pairs)
    assert kinds["10000/plain/CLI"]["cpu_ratio"] == pytest.approx(1.08)
    assert kinds["10000/json_schema/CLI"]["worst_quarter"] == pytest.approx(0.12)
    metrics = {"sizes": [1_000, 10_000], "kinds": kinds, "pairs": pairs}
    cpu, flat, peak, first = (t.check(metrics) for t in TARGETS if t.benchmark == "scale")
    assert cpu is not None and cpu[0] and "CLI plain 10,000: 1.08×" in cpu[1]
    assert flat is not None and not flat[0] and "12.0 % (own 20.0 %, its loop's 5.0 %)" in flat[1]
    assert peak is None and first is None  # measured at 10^5 only
    big = headline([_pair("CLI", "plain", 100_000, 1.2, 1.0)])
    cpu, flat, peak, first = (t.check({"kinds": big}) for t in TARGETS if t.benchmark == "scale")
    assert cpu is not None and not cpu[0] and flat is not None and flat[0]
    assert peak is not None and peak[0] and "CLI plain 100,000: 2.00×" in peak[1]
    assert first is not None and first[0] and "CLI plain 100,000: 0.6" in first[1]
