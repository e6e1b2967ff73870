"""README's "Share a study" section, run as written, and both HTML pages opened in Chromium.

The study is judged against the simulator first (two runs, so the consistency notebook runs
too); the README's commands then run with no endpoint reachable.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.simulator import SimulatorConfig, run_simulator

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ROWS = [
    ("q1", "What is the capital of Australia?", "Sydney", "Canberra", "model-a", 1),
    ("q2", "How many bones does an adult human have?", "206", "206 bones", "model-b", 4),
    ("q3", "Who painted the Mona Lisa?", "Leonardo da Vinci", "Leonardo da Vinci", "model-a", 4),
    ("q4", "What is the chemical symbol of gold?", "Ag", "Au", "model-b", 1),
    ("q5", "In which year did Apollo 11 land on the Moon?", "1969", "1969", "model-a", 4),
    ("q6", "What is the freezing point of water in Fahrenheit?", "30 F", "32 F", "model-b", 2),
    ("q7", "Which is the longest river in South America?", "The Amazon", "Amazon", "model-a", 4),
    ("q8", "Who proposed general relativity?", "Newton", "Albert Einstein", "model-b", 1),
]


def share_commands() -> list[list[str]]:
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Share a study", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "README's share section has no bash block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def run_cli(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    assert command[0] == "judgekit", command
    return subprocess.run(
        [sys.executable, "-m", "judgekit", *command[1:]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip


def environment(base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    return {
        **env,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "test-canary-share",
        "JUDGEKIT_JUDGE_MODEL": "simulated-judge",
        "PYTHONPATH": os.pathsep.join([str(config.ROOT), env.get("PYTHONPATH", "")]),
        "TQDM_DISABLE": "1",
    }


def open_page(path: Path) -> dict[str, object]:
    """Load a page in Chromium; its text, its images' sizes and every URL it asked for."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    asked: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page()
            page.on("request", lambda request: asked.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            text = page.inner_text("body")
            images = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
            headings = page.eval_on_selector_all("h1", "els => els.map(e => e.textContent)")
        finally:
            browser.close()
    return {"text": text, "images": images, "asked": asked, "headings": headings}


@pytest.mark.notebooks
@pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM}")
def test_share_walkthrough_runs_as_written_and_its_pages_open(tmp_path: Path) -> None:
    frame = pd.DataFrame(ROWS, columns=["ID", "Question", "Answer", "Ref_Answer", "Model", "human"])
    frame.to_csv(tmp_path / "my_items.csv", index=False)
    judge = ["judgekit", "judge", "my_items.csv", "--rubric", "factual_accuracy",
             "--labels-column", "human", "--study", "my_study", "--runs", "2"]  # fmt: skip
    with run_simulator(SimulatorConfig()) as sim:
        done = run_cli(judge, tmp_path, environment(sim.base_url))
        assert done.returncode == 0, done.stderr
    commands = share_commands()
    assert [c[1] for c in commands] == ["report", "export", "verify"]
    offline = environment("http://127.0.0.1:9/v1")  # the discard port: nothing answers
    for command in commands:
        done = run_cli(command, tmp_path, offline)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    assert "verified, every check passed" in done.stdout
    assert "checked: judgments of 1 judge(s) rebuilt offline" in done.stdout
    names = zipfile.ZipFile(tmp_path / "my_study.zip").namelist()
    assert "report/tables/human_agreement/kappa_family.csv" in names
    steps = json.loads(zipfile.ZipFile(tmp_path / "my_study.zip").read("report/steps.json"))
    assert {s["notebook"] for s in steps if not s["skipped"]} >= {"02_human_agreement"}

    for page_path, status in (
        (tmp_path / "my_study" / "report" / "report.html", "Not verified"),
        (tmp_path / "verified.html", "Verified: every check passed."),
    ):
        page = open_page(page_path)
        text = str(page["text"])
        assert status in text
        assert "Study settings" in text and "factual_accuracy" in text
        assert "Does the judge agree with the human?" in text  # notebook 02's own heading
        assert "02_human_agreement" in page["headings"]  # type: ignore[operator]
        images = page["images"]
        assert images and all(int(w) > 0 for w in images), images  # type: ignore[union-attr]
        outside = [u for u in page["asked"] if not u.startswith(("file:", "data:"))]  # type: ignore[union-attr]
        assert outside == [], f"the page loaded {outside}"
        assert "import " not in text, "code cells are left out of the report"
