"""``judgekit judge`` runs each of the engine's checks once: the options per judge, the items once.

The CLI checks everything before a server starts or a call is paid; the engine then does not
check again (a real run), and a dry run's previews are its checks (no separate pass).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli.main import main
from judgekit.engine import JudgeOptions, runner
from judgekit.judging import judge as cli_judge
from judgekit.simulator import SimulatorConfig, run_simulator


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of ``JudgeOptions.check`` and ``check_items``, wherever they are called from."""
    calls: Counter[str] = Counter()
    check, check_items = JudgeOptions.check, runner.check_items

    def counted_check(self: JudgeOptions, *args: Any) -> None:
        calls["options"] += 1
        check(self, *args)

    def counted_items(*args: Any) -> None:
        calls["items"] += 1
        check_items(*args)

    monkeypatch.setattr(JudgeOptions, "check", counted_check)
    for module in (runner, cli_judge):
        monkeypatch.setattr(module, "check_items", counted_items)
    return calls


@pytest.fixture
def simulator() -> Iterator[str]:
    with run_simulator(SimulatorConfig()) as sim:
        yield sim.base_url


def _judge(items: Path, out: Path, url: str, *extra: str) -> None:
    argv = ["judge", str(items), "--rubric", "riddle_accuracy", "--output", str(out), *extra]
    assert main(argv) == 0


@pytest.mark.parametrize("dry_run", [False, True])
def test_one_judge_checks_options_and_items_once(
    counted: Counter[str], simulator: str, items_csv: Path, tmp_path: Path, dry_run: bool
) -> None:
    endpoint = ["--base-url", simulator, "--provider", "simulator", "--model", "sim"]
    _judge(items_csv, tmp_path / "out.csv", simulator, *endpoint, *["--dry-run"] * dry_run)
    assert (tmp_path / "out.csv").exists() is not dry_run
    assert counted == {"options": 1, "items": 1}


def test_a_panel_checks_each_judges_options_once_and_the_items_once(
    counted: Counter[str], simulator: str, items_csv: Path, tmp_path: Path
) -> None:
    judges = ["--judge", f"a=simulator:sim@{simulator}", "--judge", f"b=simulator:sim@{simulator}"]
    _judge(items_csv, tmp_path / "out.csv", simulator, *judges)
    assert counted == {"options": 2, "items": 1}
