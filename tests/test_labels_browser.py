"""A person labels in a real JupyterLab, in a real browser: keys, feedback, focus, a resume.

JupyterLab runs on a free port with token auth and its own configuration, runtime, data,
settings and workspace folders; Debian's chromium is driven by playwright (no browser
download). The server is stopped at the end even when the test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from judgekit import config
from judgekit.labels import read_labels_table

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}
LABEL_CELL = """\
import pandas as pd
from judgekit.labels.session import LabellingSession
from judgekit.labels.widget import LabelWidget
from judgekit.rubrics import load_rubric

items = pd.DataFrame({
    "ID": [f"r{i}" for i in range(1, 6)],
    "Question": [f"Melyik találmány a(z) {i}. rejtvény megfejtése?" for i in range(1, 6)],
    "Answer": ["Rubik-kocka", "golyóstoll", "gyufa", "dinamó", "porlasztó"],
    "Ref_Answer": ["Rubik-kocka", "golyóstoll", "biztonsági gyufa", "dinamó", "karburátor"],
})
LabelWidget(LabellingSession(items, load_rubric("riddle_accuracy"), "labels.csv", "tester"))
"""

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM} (CI installs Debian's chromium)"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """A JupyterLab server on a free port in ``tmp_path/work``: yields (base URL, token, work)."""
    work = tmp_path / "work"
    work.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(LABEL_CELL)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, work / "label.ipynb")
    # Never fetch news (there is no internet).
    for name, values in SETTINGS.items():
        target = tmp_path / "settings" / f"{name}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(config.ROOT), os.environ.get("PYTHONPATH", "")]),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={work}",
            "--ServerApp.port_retries=0",
            "--ServerApp.allow_root=True",  # CI containers run as root
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "server.log", "wb"),  # noqa: SIM115 (closed with the process)
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log = (tmp_path / "server.log").read_text(errors="replace")[-2000:]
                    pytest.fail(f"JupyterLab did not start:\n{log}")
                time.sleep(0.3)
        yield base, token, work
    finally:
        _stop(server)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Stop the server and the kernels it started (its own process group)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if server.poll() is None:
            os.killpg(server.pid, sig)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue
    # kernels are in the same session; clean up any left behind
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)


def _api(base: str, token: str, path: str, method: str = "GET", body: object = None) -> object:
    """Call the Jupyter server's REST API and return the decoded JSON (None when empty)."""
    request = urllib.request.Request(
        f"{base}/api/{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        raw = reply.read()
    return json.loads(raw) if raw else None


def _start_kernel(base: str, token: str) -> None:
    """Give the notebook a running kernel before the page opens it (no start-up race)."""
    session = {"path": "label.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
    _api(base, token, "sessions", "POST", session)


def _shut_down_kernels(base: str, token: str) -> None:
    """End every session so nothing of the labelling survives outside ``labels.csv``."""
    sessions = _api(base, token, "sessions")
    assert isinstance(sessions, list) and sessions, "the notebook had no kernel session"
    for session in sessions:
        _api(base, token, f"sessions/{session['id']}", "DELETE")


def _run_first_cell(page) -> None:  # type: ignore[no-untyped-def]
    """Run the notebook's cell with Ctrl+Enter, as a person would, until the widget shows.

    Under load JupyterLab can still be attaching to the kernel when the first keypress
    arrives and drops that run (the prompt stays ``[ ]``); a person presses again.
    """
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=40_000)
    cell = page.locator(".jp-Notebook .jp-Cell").first
    for _attempt in range(3):
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+Enter")
        try:
            cell.locator(".jp-InputPrompt").filter(has_not_text="[ ]").wait_for(timeout=10_000)
            break
        except sync_api.TimeoutError:  # the run was dropped: press again
            continue
    page.locator(".jk-labeller").first.wait_for(timeout=40_000)


def test_widget_takes_the_keys_gives_feedback_and_resumes(jupyterlab, tmp_path) -> None:
    base, token, work = jupyterlab
    started = time.monotonic()
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("dialog", lambda dialog: dialog.accept())
            _start_kernel(base, token)
            page.goto(f"{base}/lab/tree/label.ipynb?token={token}")
            _run_first_cell(page)
            widget = page.locator(".jk-labeller").first
            progress, done = widget.locator(".jk-progress"), widget.locator(".jk-done")
            feedback, focus = widget.locator(".jk-error"), widget.locator(".jk-focus")
            sync_api.expect(progress).to_have_text("Item 1 of 5")
            assert "Rubik-kocka" in widget.inner_text() and "r1" not in widget.inner_text()
            # shown, it has the keyboard: the first digit labels, JupyterLab sees none of it
            sync_api.expect(focus).to_have_text("The labeller has the keyboard.")
            page.keyboard.press("5")
            sync_api.expect(progress).to_have_text("Item 2 of 5")
            page.keyboard.press("4")
            sync_api.expect(feedback).to_have_text("4 is not on the scale (5, 3, 0): nothing saved")
            page.keyboard.press("a")
            sync_api.expect(feedback).to_contain_text("riddle_accuracy has no abstain value")
            page.keyboard.press("s")  # a skip moves on, and is not a label
            sync_api.expect(progress).to_have_text("Item 3 of 5")
            sync_api.expect(done).to_contain_text("1 of 5 labelled by tester · 1 skipped")
            widget.locator(".jk-note").fill("alternative name?")
            page.keyboard.press("Escape")  # back to the keys
            page.keyboard.press("0")
            sync_api.expect(progress).to_have_text("Item 4 of 5")
            assert page.locator(".jp-Notebook .jp-Cell").count() == 1  # no key made a cell
            assert page.locator(".jp-MarkdownCell").count() == 0  # nor a heading
            # the labeller says when it lost the keyboard, and a click gives it back
            page.locator(".jp-Notebook .cm-content").first.click()  # the code editor
            sync_api.expect(focus).to_contain_text("lost the keyboard: click here")
            focus.click()
            sync_api.expect(focus).to_have_text("The labeller has the keyboard.")
            page.screenshot(path=str(tmp_path / "labelled.png"))
            labels = read_labels_table(work / "labels.csv")
            assert list(labels["item_id"]) == ["r1", "r2", "r3"]
            assert list(labels["status"]) == ["ok", "skip", "ok"]
            assert list(labels["score"].fillna(-1)) == [5.0, -1.0, 0.0]
            assert set(labels["labeller"]) == {"tester"}
            assert list(labels["note"]) == ["", "", "alternative name?"]

            _shut_down_kernels(base, token)
            _start_kernel(base, token)
            page.reload()
            _run_first_cell(page)
            # a fresh kernel ran the cell once: the widget can only know the labels from the file
            sync_api.expect(page.locator(".jp-OutputPrompt").first).to_have_text("[1]:")
            assert page.locator(".jk-labeller").count() == 1
            widget = page.locator(".jk-labeller").first
            sync_api.expect(widget.locator(".jk-progress")).to_have_text("Item 4 of 5")
            sync_api.expect(widget.locator(".jk-done")).to_contain_text(
                "2 of 5 labelled by tester · 1 skipped"
            )
            assert "dinamó" in widget.inner_text()
            page.screenshot(path=str(tmp_path / "resumed.png"))
        except Exception:
            page.screenshot(path=str(tmp_path / "failure.png"))  # what the page showed
            raise
        finally:
            browser.close()
    assert len(read_labels_table(work / "labels.csv")) == 3
    assert time.monotonic() - started < 90


def test_a_ten_point_scale_takes_one_typed_score_per_label_and_resumes_unlabelled(
    tmp_path: Path,
) -> None:
    import pandas as pd

    from judgekit.labels.page import LabellingPage
    from judgekit.labels.session import LabellingSession
    from judgekit.rubrics import load_rubric

    items = pd.DataFrame(
        {
            "ID": [f"e{i}" for i in range(1, 6)],
            "Question": [f"How far does answer {i} go?" for i in range(1, 6)],
            "Answer": [f"It goes {i} steps." for i in range(1, 6)],
        }
    )
    rubric = load_rubric("extent_rating")  # 0-10, and its template names the answer first
    assert max(rubric.scale.allowed) == 10
    labels = tmp_path / "labels.csv"
    server = LabellingPage(LabellingSession(items, rubric, labels, "tester"), "study").start()
    try:
        with sync_api.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            page = browser.new_page()
            try:
                page.goto(server.url)
                widget = page.locator(".jk-labeller")
                progress, typed = widget.locator(".jk-progress"), widget.locator(".jk-typed")
                feedback = widget.locator(".jk-error")
                sync_api.expect(progress).to_have_text("Item 1 of 5")
                shown = widget.locator(".jk-item").inner_text()
                assert shown.index("How far does answer 1 go?") < shown.index("It goes 1 steps.")
                sync_api.expect(widget.locator(".jk-help")).to_contain_text(
                    "type the score, Enter saves it (Backspace corrects, Esc clears)"
                )
                page.keyboard.press("1")  # not a label yet: it waits in the visible buffer
                sync_api.expect(typed).to_have_text("Typed: 1 (Enter saves 1)")
                sync_api.expect(progress).to_have_text("Item 1 of 5")
                page.keyboard.press("0")
                sync_api.expect(typed).to_have_text("Typed: 10 (Enter saves 10)")
                page.keyboard.press("5")  # 105 is on no scale: refused, the buffer stays 10
                sync_api.expect(feedback).to_contain_text("105 is not on the scale")
                sync_api.expect(typed).to_have_text("Typed: 10 (Enter saves 10)")
                page.keyboard.press("Enter")
                sync_api.expect(progress).to_have_text("Item 2 of 5")
                sync_api.expect(typed).to_contain_text("nothing yet")
                page.keyboard.press("7")
                page.keyboard.press("Enter")
                sync_api.expect(progress).to_have_text("Item 3 of 5")
                page.keyboard.press("3")
                page.keyboard.press("Backspace")
                page.keyboard.press("4")
                page.keyboard.press("Enter")
                sync_api.expect(progress).to_have_text("Item 4 of 5")
                page.keyboard.press("Enter")  # nothing typed: nothing saved
                sync_api.expect(feedback).to_have_text("type the score first, then Enter")
                page.keyboard.press("ArrowLeft")
                page.keyboard.press("ArrowLeft")
                sync_api.expect(progress).to_have_text("Item 2 of 5")
                page.reload()  # reopens at the first unlabelled item, not the last viewed
                sync_api.expect(progress).to_have_text("Item 4 of 5")
            except Exception:
                page.screenshot(path=str(tmp_path / "failure.png"))
                raise
            finally:
                browser.close()
    finally:
        server.close()
    saved = read_labels_table(labels)
    assert list(saved["score"]) == [10.0, 7.0, 4.0]
    assert list(saved["item_id"]) == ["e1", "e2", "e3"]
