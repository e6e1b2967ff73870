"""``report --html`` shows only notebooks the report ran, sanitised, readable at 1280 px.

Issue 38: a ``<script>`` or ``onerror=`` in a notebook's output, a stray notebook dropped into
``report/`` and a stale one from an earlier plan never reach the page. Issue 37 item 7: the page
was 3,097 px wide; here a wide table and long settings values stay inside 1280 px in Chromium.
The notebooks are written directly (nothing executes); only the conversion is under test.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from judgekit.reporting.html import REPORT_STEPS, sanitise, write_html_report

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: A 1x1 PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()
HOSTILE = (
    "<p>kappa 0.61</p><script>window.pwned = 1</script>"
    '<img src="x" onerror="window.pwned = 2"><a href="javascript:window.pwned = 3">link</a>'
    '<div onmouseover="window.pwned = 4">hover</div><iframe src="https://example.org"></iframe>'
    '<svg><script>window.pwned = 5</script></svg><img src="data:text/html;base64,PHNjcmlwdD4=">'
)


def notebook(*outputs: dict[str, object], text: str = "") -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook()
    book.cells.append(nbformat.v4.new_markdown_cell(text or "# Results"))
    cell = nbformat.v4.new_code_cell("display(table)")
    cell.outputs = [nbformat.v4.new_output("display_data", data=o) for o in outputs]
    book.cells.append(cell)
    return book


def study(tmp_path: Path) -> Path:
    """A study folder whose report ran 02, skipped 03 and failed 05."""
    root = tmp_path / "study"
    report = root / "report"
    report.mkdir(parents=True)
    long_path = "/home/researcher/" + "very-long-folder-name-" * 12 + "items.csv"
    (root / "study.json").write_text(
        json.dumps({"judgekit": "0.1.0", "items_file": long_path, "command": "judge " * 80})
    )
    steps = [
        {"notebook": "02_human_agreement", "parameters": {}, "skipped": "", "covers": []},
        {"notebook": "03_run_consistency", "parameters": {}, "skipped": "needs two runs"},
        {"notebook": "05_distributions_and_bias", "parameters": {}, "skipped": ""},
    ]
    (report / REPORT_STEPS).write_text(json.dumps(steps))
    wide = pd.DataFrame([[f"value-{i}-{j}" for j in range(40)] for i in range(3)])
    nbformat.write(
        notebook(
            {"text/html": HOSTILE},
            {"text/html": wide.to_html()},
            {"image/png": PIXEL, "text/plain": "<Figure>"},
            {"text/plain": "x" * 3000},
        ),
        report / "02_human_agreement.ipynb",
    )
    nbformat.write(notebook(text="STALE"), report / "03_run_consistency.ipynb")
    nbformat.write(notebook(text="FAILED"), report / "05_distributions_and_bias.failed.ipynb")
    nbformat.write(notebook({"text/html": "<b>STRAY</b>"}), report / "99_stray.ipynb")
    return root


def test_the_page_holds_only_what_ran_and_nothing_that_runs(tmp_path: Path) -> None:
    page = write_html_report(study(tmp_path)).read_text(encoding="utf-8")
    assert "kappa 0.61" in page and "value-2-39" in page and "data:image/png;base64," in page
    for bad in ("<script", "onerror", "onmouseover", "javascript:", "<iframe", "pwned",
                "data:text/html", "STALE", "STRAY", "FAILED"):  # fmt: skip
        assert bad not in page, bad
    assert "05_distributions_and_bias</code> failed: report/05_distributions_and_bias" in page
    assert "03_run_consistency</code>: needs two runs" in page


def test_sanitise_keeps_tables_and_inline_images() -> None:
    image = f'<img src="data:image/png;base64,{PIXEL}">'
    kept = sanitise(f'<table class="dataframe"><tr><td>1</td></tr></table>{image}')
    assert kept == f'<table class="dataframe"><tbody><tr><td>1</td></tr></tbody></table>{image}'
    assert sanitise('<a href="https://doi.org/10.1/x" onclick="x()">ref</a>') == (
        '<a href="https://doi.org/10.1/x">ref</a>'
    )


@pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM}")
def test_the_page_reads_at_1280_px_and_runs_no_script(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    path = write_html_report(study(tmp_path))
    asked: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: asked.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            page.hover("text=hover")
            width = page.evaluate("document.documentElement.scrollWidth")
            pwned = page.evaluate("window.pwned === undefined ? null : window.pwned")
            settings_right = page.eval_on_selector(
                "table.settings", "t => t.getBoundingClientRect().right"
            )
            page.screenshot(path=str(tmp_path / "page.png"))
        finally:
            browser.close()
    assert width <= 1280 and settings_right <= 1280
    assert pwned is None
    assert asked == [path.as_uri()]


@pytest.mark.notebooks
def test_an_earlier_runs_outcome_never_passes_for_this_ones(tmp_path: Path) -> None:
    from judgekit.reporting.notebooks import NotebookRun, execute
    from judgekit.study.errors import RunFailed

    source = nbformat.v4.new_notebook()
    source.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    parameters = nbformat.v4.new_code_cell("fail: bool = False")
    parameters.metadata["tags"] = ["parameters"]
    source.cells += [parameters, nbformat.v4.new_code_cell("assert not fail")]
    nbformat.write(source, tmp_path / "source.ipynb")
    report = tmp_path / "report"
    report.mkdir()
    nbformat.write(notebook(text="OLD FAILURE"), report / "02_x.failed.ipynb")
    execute(NotebookRun("02_x", tmp_path / "source.ipynb", {}), report)
    assert sorted(p.name for p in report.iterdir()) == ["02_x.ipynb"]
    with pytest.raises(RunFailed, match=r"02_x\.failed\.ipynb"):
        execute(NotebookRun("02_x", tmp_path / "source.ipynb", {"fail": True}), report)
    assert sorted(p.name for p in report.iterdir()) == ["02_x.failed.ipynb"]
