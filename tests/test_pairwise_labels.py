"""Blind pairwise labelling (#33): what the page is sent, and labels mapped back to A/B."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from pairwise_fixture import MODELS, write_pairwise_study

from judgekit.labels import read_labels_table
from judgekit.labels.page import LabellingPage
from judgekit.labels.pair_session import PairLabellingSession, left_is_b
from judgekit.study.folder import load_study
from judgekit.study.labelling import LabelOptions, label_session

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def _session(tmp_path: Path, labeller: str = "cleo") -> PairLabellingSession:
    root = write_pairwise_study(tmp_path / "study", labels=False)
    session, _ = label_session(load_study(root), LabelOptions(labeller=labeller, n=6, seed=2))
    assert isinstance(session, PairLabellingSession)
    return session


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as reply:
        return str(reply.read().decode("utf-8"))


def test_the_page_is_sent_no_model_id_or_verdict(tmp_path: Path) -> None:
    session = _session(tmp_path)
    page = LabellingPage(session, "study").start()
    try:
        sent = _get(page.url) + _get(page.url + "state")
    finally:
        page.close()
    for secret in [*MODELS, *session.ids, "model_a", "Model_A", "verdict", "Answer_A"]:
        assert secret not in sent, secret
    state = json.loads(_get_state(session))
    titles = [f["title"] for f in state["items"][0]["fields"]]
    assert titles == ["Question", "Left answer", "Right answer"]
    assert state["pairwise"] is True and [a["score"] for a in state["scale"]] == [1, 2, 0]


def _get_state(session: PairLabellingSession) -> str:
    return json.dumps(session.state())


def test_sides_are_seeded_per_labeller_and_mapped_back_to_a_b(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert session.swapped == [left_is_b(2, "cleo", i) for i in session.ids]
    other = [left_is_b(2, "dan", i) for i in session.ids]
    items = pd.read_csv(session.path.parent / "items.csv").set_index("ID")
    for k, item in enumerate(session.ids):
        left = session.fields[k][1]["text"]
        expected = items.loc[item, "Answer_B" if session.swapped[k] else "Answer_A"]
        assert left == expected
    session.record(0, "ok", 1)  # left
    session.record(1, "ok", 2)  # right
    session.record(2, "ok", 0)  # tie
    session.record(3, "skip", None)
    with pytest.raises(ValueError, match="no abstain value"):
        session.record(4, "abstain", None)
    saved = read_labels_table(session.path).set_index("item_id")
    flip = dict(zip(session.ids, session.swapped, strict=True))
    first, second, third = session.ids[:3]
    assert saved.loc[first, "verdict"] == ("b" if flip[first] else "a")
    assert saved.loc[second, "verdict"] == ("a" if flip[second] else "b")
    assert saved.loc[third, "verdict"] == "tie"
    assert saved["score"].isna().all()
    # the study reads them back as pairwise labels, and a new session resumes them
    study = load_study(session.path.parent)
    assert len(study.pair_labels()) == 3
    again = _session_again(session)
    assert again.labelled[first]["score"] == 1 and again.resume_position() == 4
    assert other != session.swapped or len(set(other)) == 1  # another labeller's own coins


def _session_again(session: PairLabellingSession) -> PairLabellingSession:
    study = load_study(session.path.parent)
    return label_session(study, LabelOptions(labeller="cleo", seed=2))[0]  # type: ignore[return-value]


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM}")
def test_a_labeller_chooses_sides_with_the_keys_in_a_real_browser(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    session = _session(tmp_path)
    server = LabellingPage(session, "pairwise study").start()
    try:
        with sync_api.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            page = browser.new_page()
            try:
                page.goto(server.url)
                widget = page.locator(".jk-labeller")
                progress = widget.locator(".jk-progress")
                sync_api.expect(progress).to_have_text("Item 1 of 6")
                text = widget.locator(".jk-item").inner_text()
                assert "Left answer" in text and "Right answer" in text
                assert not any(model in page.content() for model in MODELS)
                sync_api.expect(widget.locator(".jk-help")).to_contain_text("1 or l left")
                page.keyboard.press("l")
                sync_api.expect(progress).to_have_text("Item 2 of 6")
                page.keyboard.press("r")
                sync_api.expect(progress).to_have_text("Item 3 of 6")
                page.keyboard.press("t")
                sync_api.expect(progress).to_have_text("Item 4 of 6")
                page.keyboard.press("a")  # the rubric has no abstain value: nothing saved
                sync_api.expect(widget.locator(".jk-error")).to_contain_text("no abstain value")
                page.keyboard.press("ArrowLeft")
                sync_api.expect(widget.locator(".jk-current")).to_have_text("Your label: a tie")
                page.reload()
                sync_api.expect(progress).to_have_text("Item 4 of 6")
            except Exception:
                page.screenshot(path=str(tmp_path / "failure.png"))
                raise
            finally:
                browser.close()
    finally:
        server.close()
    saved = read_labels_table(session.path).set_index("item_id")
    ids, flip = session.ids, session.swapped
    assert saved.loc[ids[0], "verdict"] == ("b" if flip[0] else "a")
    assert saved.loc[ids[1], "verdict"] == ("a" if flip[1] else "b")
    assert saved.loc[ids[2], "verdict"] == "tie"
