"""``judgekit label`` on a fresh study, in a real browser: blind, keyboard-first, resumable.

The study is judged by the simulator behind the real ``openai`` client; the command runs as a
subprocess (as a researcher runs it) and Debian's chromium, driven by playwright, is the
labeller. The page must reveal nothing of the judge (scores, reasons, which items were chosen
for disagreement) nor which model wrote an answer, and no item ID (IDs here name the model).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.data import read_frame
from judgekit.labels import read_labels_table
from judgekit.simulator import SimulatorConfig, run_simulator

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
MODELS = ("alpha-7b", "beta-13b", "gamma-70b")

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
needs_chromium = pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM}")


def _env(base_url: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(config.ROOT), env.get("PYTHONPATH", "")])
    env["TQDM_DISABLE"] = "1"
    if base_url:
        env |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-canary-label"}
        env["JUDGEKIT_JUDGE_MODEL"] = "sim-judge"
    return env


def judged_study(folder: Path, n: int = 12, name: str = "study") -> Path:
    """A study of ``n`` answers by three models (IDs name the model), judged twice."""
    rows = [
        {
            "ID": f"{MODELS[i % 3]}-q{i}",
            "Question": f"Which city is number {i} on the list?",
            "Answer": f"City {i}",
            "Ref_Answer": f"City {i}",
            "Model": MODELS[i % 3],
            "human": 1 + i % 4,
        }
        for i in range(n)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "items.csv", index=False)
    command = [
        sys.executable, "-m", "judgekit", "judge", "items.csv", "--rubric", "factual_accuracy",
        "--labels-column", "human", "--study", name, "--variant", "base",
        "--variant", "paraphrase_1",
    ]  # fmt: skip
    with run_simulator(SimulatorConfig(noise_rate=0.4, seed=5)) as sim:
        done = subprocess.run(
            command, cwd=folder, env=_env(sim.base_url), capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    return folder / name


def start_label(
    study: Path, labeller: str, command: list[str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``judgekit label`` as a subprocess; returns it and the page address it printed."""
    args = command or ["judgekit", "label", str(study), "--labeller", labeller]
    server = subprocess.Popen(
        [sys.executable, "-m", "judgekit", *args[1:], "--no-browser"],
        cwd=study.parent,
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as under a background job or nohup: Ctrl-C must stop it all the same
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert server.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = server.stderr.readline()
        if line.startswith("open http"):
            return server, line.split()[1]
        if not line and server.poll() is not None:
            break
    server.kill()
    pytest.fail(f"judgekit label did not print its address: {server.stderr.read()}")


def stop(server: subprocess.Popen[str]) -> str:
    """Ctrl-C, as the labeller stops it; returns what it printed."""
    os.killpg(server.pid, signal.SIGINT)
    _, err = server.communicate(timeout=20)
    assert server.returncode == 0, err
    return err


def judge_secrets(study: Path) -> list[str]:
    """Strings that would give the judge or the answering model away."""
    judgments = pd.read_parquet(study / "judgments.parquet")
    plan = pd.read_csv(study / "labelling_plan.csv")
    reasons = [r for r in judgments["reason"].dropna().astype(str) if len(r) > 12]
    return [
        *MODELS, "sim-judge", "judge", "disagreement", "stratified", "stratum",
        *plan["stratum"].astype(str), *plan["item_id"].astype(str), *reasons,
    ]  # fmt: skip


@needs_chromium
def test_label_command_blind_keyboard_first_and_resumable(tmp_path: Path) -> None:
    study = judged_study(tmp_path)
    server, url = start_label(study, "ana")
    try:
        with sync_api.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            page = browser.new_page()
            try:
                page.goto(url)
                widget = page.locator(".jk-labeller")
                progress, feedback = widget.locator(".jk-progress"), widget.locator(".jk-error")
                sync_api.expect(progress).to_have_text("Item 1 of 12")
                sync_api.expect(widget.locator(".jk-focus")).to_have_text(
                    "The labeller has the keyboard."
                )
                text = page.inner_text("body")
                state = page.evaluate("fetch('state').then((reply) => reply.text())")
                for secret in judge_secrets(study):
                    assert secret not in text, f"the page shows {secret!r}"
                    assert secret not in state, f"the page was sent {secret!r}"
                assert set(json.loads(state)) == {
                    "items", "scale", "abstain", "labelled", "labeller", "rubric_name",
                    "position", "error",
                }  # fmt: skip

                page.keyboard.press("4")  # no click first: the page took the keyboard
                sync_api.expect(progress).to_have_text("Item 2 of 12")
                page.keyboard.press("7")
                off_scale = "7 is not on the scale (4, 3, 2, 1): nothing saved"
                sync_api.expect(feedback).to_have_text(off_scale)
                page.keyboard.press("a")
                sync_api.expect(feedback).to_contain_text("factual_accuracy has no abstain value")
                page.keyboard.press("x")
                sync_api.expect(feedback).to_contain_text("x is not a key of the labeller")
                sync_api.expect(progress).to_have_text("Item 2 of 12")
                page.keyboard.press("s")  # a skip moves on but is not a label
                sync_api.expect(progress).to_have_text("Item 3 of 12")
                done = widget.locator(".jk-done")
                sync_api.expect(done).to_contain_text("1 of 12 labelled by ana · 1 skipped")

                page.reload()  # the server kept the position and the labels
                sync_api.expect(progress).to_have_text("Item 3 of 12")
                sync_api.expect(done).to_contain_text("1 of 12 labelled")
                page.keyboard.press("2")
                sync_api.expect(progress).to_have_text("Item 4 of 12")
                printed = stop(server)
                assert "stopped: 2 of 12 labelled by ana, 1 skipped" in printed
                page.keyboard.press("3")  # the server is gone: the page says so
                sync_api.expect(feedback).to_contain_text("labelling server is not running")

                server, url = start_label(study, "ana")  # resumes from labels.csv
                page.goto(url)
                sync_api.expect(progress).to_have_text("Item 4 of 12")
                sync_api.expect(done).to_contain_text("2 of 12 labelled by ana · 1 skipped")
            except Exception:
                page.screenshot(path=str(tmp_path / "failure.png"))
                raise
            finally:
                browser.close()
    finally:
        if server.poll() is None:
            stop(server)
    labels = read_labels_table(study / "labels.csv")
    plan = pd.read_csv(study / "labelling_plan.csv")
    assert list(labels["status"]) == ["ok", "skip", "ok"]
    assert list(labels["item_id"]) == list(plan["item_id"].astype(str)[:3])
    assert list(labels["score"].fillna(-1)) == [4.0, -1.0, 2.0]
    assert set(labels["labeller"]) == {"ana"}


def readme_labelling_commands() -> list[list[str]]:
    """The bash block of docs/labelling.md's "Labelling blind" section, one command per line."""
    readme = (config.ROOT / "docs" / "labelling.md").read_text(encoding="utf-8")
    section = readme.split("### Labelling blind", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/labelling.md's labelling section has no bash block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def _checkout_outputs() -> set[tuple[str, float]]:
    folders = [config.ROOT / "figures", config.ROOT / "runs"]
    return {(str(p), p.stat().st_mtime) for f in folders if f.is_dir() for p in f.rglob("*")}


@needs_chromium
@pytest.mark.notebooks
def test_readme_labelling_walkthrough_runs_as_written(tmp_path: Path) -> None:
    commands = readme_labelling_commands()
    assert [c[:2] for c in commands] == [["judgekit", "label"]] * 2 + [["judgekit", "report"]]
    study = judged_study(tmp_path, name=commands[0][2])
    before = _checkout_outputs()
    keys = {"ana": "4444443444", "bela": "4434443414"}  # two people, differing on three items
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            for command in commands[:2]:
                labeller = command[command.index("--labeller") + 1]
                server, url = start_label(study, labeller, command)
                try:
                    page = browser.new_page()
                    page.goto(url)
                    progress = page.locator(".jk-progress")
                    sync_api.expect(progress).to_have_text("Item 1 of 12")
                    for position, key in enumerate(keys[labeller], start=2):
                        page.keyboard.press(key)
                        sync_api.expect(progress).to_have_text(f"Item {position} of 12")
                    page.close()
                finally:
                    stop(server)
        finally:
            browser.close()
    report = subprocess.run(
        [sys.executable, "-m", "judgekit", *commands[2][1:]],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "running 08_human_labels" in report.stderr
    tables = study / "report/tables/human_labels"
    versus = read_frame(tables / "judge_vs_human.csv")
    assert sorted(versus["human_labels"]) == ["ana", "bela", "column human"]
    assert versus.set_index("human_labels").loc[["ana", "bela"], "n"].tolist() == [10, 10]
    between = read_frame(tables / "inter_human_agreement.csv")
    pairs = set(zip(between["rater_a"], between["rater_b"], strict=True))
    assert {("ana", "bela"), ("ana", "column human"), ("bela", "column human")} <= pairs
    conflicts = read_frame(tables / "label_conflicts.csv")
    assert len(conflicts) >= 3  # ana and bela differ on three items, the column on others
    assert (study / "report/figures/labels_planner.png").is_file()
    family = read_frame(study / "report/tables/human_agreement/kappa_family.csv")
    assert set(family["human_labels"]) == {"column human (items file, 12 labels)"}
    assert _checkout_outputs() == before, "the labelling wrote into the checkout"
