"""docs/sharing.md ("Share a study"), run as written, and both HTML pages opened in Chromium.

The study is judged against the simulator first (two runs, so the consistency notebook runs
too); the page's commands then run with no endpoint reachable.
"""

from __future__ import annotations

import json
import re
import shlex
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from test_study_walkthrough import ROWS, environment, run_cli

from judgekit import config
from judgekit.simulator import SimulatorConfig, run_simulator

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def share_commands() -> list[list[str]]:
    readme = (config.ROOT / "docs" / "sharing.md").read_text(encoding="utf-8")
    section = readme.split("# Share a study", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/sharing.md has no bash block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def open_page(path: Path) -> dict[str, object]:
    """Load a page in Chromium; its text, its images' sizes and every URL it asked for."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    asked: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: asked.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            text = page.inner_text("body")
            images = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
            headings = page.eval_on_selector_all("h1", "els => els.map(e => e.textContent)")
            width = page.evaluate("document.documentElement.scrollWidth")
        finally:
            browser.close()
    return {"text": text, "images": images, "asked": asked, "headings": headings, "width": width}


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
        assert int(page["width"]) <= 1280, f"{page_path} is {page['width']} px wide at 1280"  # type: ignore[call-overload]
