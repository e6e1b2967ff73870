"""Export a study, verify it offline, and catch a changed reply, item or prompt (issue 27).

The study is judged by the real CLI and ``openai`` client against the simulator; every
verification runs with the simulator stopped and the endpoint variables pointing at a closed
port, so a call could not succeed even if one were attempted.
"""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from test_study_walkthrough import ROWS

from judgekit.cli.main import main
from judgekit.sharing.export import MANIFEST, sha256_file
from judgekit.sharing.verify import verify_bundle
from judgekit.simulator import SimulatorConfig, run_simulator

ITEMS = ROWS[:6]  # the README walkthrough's items: questions, answers, references, labels
COLUMNS = ["ID", "Question", "Answer", "Ref_Answer", "Model", "human"]
CANARY = "canary-bundle-key-0123456789abcdef"


def closed_url() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def judge_args(study: Path, items: Path, *extra: str) -> list[str]:
    return [
        "judge", str(items), "--rubric", "factual_accuracy", "--labels-column", "human",
        "--study", str(study), "--runs", "2", *extra,
    ]  # fmt: skip


def judged_study(where: Path, key: str) -> Path:
    """``where/study``: the six items judged twice by a simulator with ``key`` as the API key."""
    items = where / "my_items.csv"
    pd.DataFrame(ITEMS, columns=COLUMNS).to_csv(items, index=False)
    with pytest.MonkeyPatch.context() as patch, run_simulator(SimulatorConfig()) as sim:
        for name, value in (
            ("JUDGEKIT_JUDGE_MODEL", "simulated-judge"),
            ("OPENAI_API_KEY", key),
            ("TQDM_DISABLE", "1"),
            ("OPENAI_BASE_URL", sim.base_url),
        ):
            patch.setenv(name, value)
        assert main(judge_args(where / "study", items)) == 0
    return where / "study"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge reachable: every endpoint variable points at a closed port."""
    for name in ("OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(name, closed_url())
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    frame = pd.DataFrame(
        ITEMS, columns=["ID", "Question", "Answer", "Ref_Answer", "Model", "human"]
    )
    items = tmp_path / "my_items.csv"
    frame.to_csv(items, index=False)
    folder = tmp_path / "my_study"
    monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "simulated-judge")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    with run_simulator(SimulatorConfig()) as sim:
        monkeypatch.setenv("OPENAI_BASE_URL", sim.base_url)
        assert main(judge_args(folder, items)) == 0
        assert len(list(sim.requests)) == len(ITEMS) * 2
    yield folder


def export(study: Path, target: Path) -> Path:
    assert main(["export", str(study), "-o", str(target)]) == 0
    return target


def verified(source: Path) -> list[str]:
    result = verify_bundle(source, io.StringIO())
    return result.problems


def unpacked(bundle: Path, into: Path) -> Path:
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(into)
    return into


def rewrite_manifest(root: Path) -> None:
    """What a careful tamperer does: make every file's sha256 match again."""
    manifest = json.loads((root / MANIFEST).read_text())
    for name in manifest["files"]:
        manifest["files"][name]["sha256"] = sha256_file(root / name)
    (root / MANIFEST).write_text(json.dumps(manifest))


def test_export_then_verify_passes_offline_and_the_bundle_reproduces(
    study: Path, tmp_path: Path, offline: None
) -> None:
    bundle = export(study, tmp_path / "study.zip")
    names = zipfile.ZipFile(bundle).namelist()
    for expected in ("study.json", "items.csv", "judgments.parquet", "responses.sqlite",
                     "human_labels.parquet", "environment.json", MANIFEST):  # fmt: skip
        assert expected in names
    prompts = [n for n in names if n.startswith("prompts/")]
    assert prompts == ["prompts/factual_accuracy--base--simulated-judge.json"]
    sent = json.loads(zipfile.ZipFile(bundle).read(prompts[0]))
    assert sent["messages"][0]["content"].startswith("# Factual accuracy")
    assert verified(bundle) == []
    assert export(study, tmp_path / "again.zip").read_bytes() == bundle.read_bytes()
    assert main(["verify", str(bundle)]) == 0


def test_a_key_never_enters_a_bundle(study: Path, tmp_path: Path, offline: None) -> None:
    bundle = export(study, tmp_path / "study.zip")
    with zipfile.ZipFile(bundle) as archive:
        assert all(CANARY.encode() not in archive.read(name) for name in archive.namelist())
    (study / "notes.txt").write_text(f"my key is {CANARY}\n")
    with pytest.raises(Exception, match=r"notes.txt holds the value of \$OPENAI_API_KEY"):
        from judgekit.sharing.export import export_study

        export_study(study, tmp_path / "leak.zip")
    assert not (tmp_path / "leak.zip").exists()


def test_a_tampered_reply_is_named_even_under_a_rewritten_manifest(
    study: Path, tmp_path: Path, offline: None
) -> None:
    root = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "bundle")
    with sqlite3.connect(root / "responses.sqlite") as store:
        request_hash, text = store.execute(
            "SELECT request_hash, reply_text FROM requests ORDER BY request_hash LIMIT 1"
        ).fetchone()
        reply = json.loads(text)
        reply["score"] = 4 if reply["score"] != 4 else 1
        store.execute(
            "UPDATE requests SET reply_text=? WHERE request_hash=?",
            (json.dumps(reply), request_hash),
        )
    problems = verified(root)
    assert "responses.sqlite: changed since export (sha256 differs from the manifest)" in problems
    assert any(f"stored reply to request {request_hash[:12]}" in p for p in problems)
    judge = "judgments (factual_accuracy, openai:simulated-judge)"  # the judge's default label
    assert any(p.startswith(f"{judge}: column 'score'") for p in problems), problems
    rewrite_manifest(root)
    problems = verified(root)
    assert not any("sha256" in p for p in problems)
    assert any(f"stored reply to request {request_hash[:12]}" in p for p in problems)


def test_a_changed_item_is_named(study: Path, tmp_path: Path, offline: None) -> None:
    root = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "bundle")
    items = pd.read_csv(root / "items.csv", dtype=str)
    items.loc[items["ID"] == "f4", "Answer"] = "Au"
    items.to_csv(root / "items.csv", index=False)
    rewrite_manifest(root)
    problems = verified(root)
    assert "items.csv: item f4 changed since export" in problems
    missing = [p for p in problems if "is not in the store" in p]
    assert len(missing) == 1, problems
    assert "an item or the prompt changed since judging" in missing[0], missing[0]
    assert (
        "message 2 (user), line 4: now '<Answer>Au</Answer>', stored '<Answer>Ag</Answer>'"
        in (missing[0])
    )


def test_a_changed_prompt_is_named(
    study: Path, tmp_path: Path, offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "bundle")
    prompt = next((root / "prompts").glob("*.json"))
    original = prompt.read_text()
    prompt.write_text(original.replace("fact-checker", "fact checker"))
    assert f"prompts/{prompt.name}: changed since export (sha256 differs from the manifest)" in (
        verified(root)
    )
    prompt.write_text(original)
    from judgekit.sharing import replay
    from judgekit.study.own_prompt import load_any_rubric

    def edited_rubric(*args):  # the same rubric, one word of its instructions changed
        rubric = load_any_rubric(*args)
        render = rubric.render

        def reworded(*args, **kwargs):
            messages = render(*args, **kwargs)
            messages[0] = {**messages[0], "content": messages[0]["content"].replace(
                "fact-checker", "fact checker")}  # fmt: skip
            return messages

        monkeypatch.setattr(rubric, "render", reworded)
        return rubric

    monkeypatch.setattr(replay, "load_any_rubric", edited_rubric)
    missing = [p for p in verified(root) if "is not in the store" in p]
    assert missing and "the prompt changed" in missing[0] and "message 1 (system)" in missing[0]
    assert "fact checker" in missing[0], missing[0]


def test_a_bundle_moved_and_a_server_on_a_new_port_replay_with_zero_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame(
        ITEMS, columns=["ID", "Question", "Answer", "Ref_Answer", "Model", "human"]
    )
    frame.to_csv(tmp_path / "my_items.csv", index=False)
    monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "simulated-judge")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    named = ("--endpoint-name", "lab-vllm")
    study = tmp_path / "lab_study"
    with run_simulator(SimulatorConfig()) as first:
        args = judge_args(study, tmp_path / "my_items.csv", "--base-url", first.base_url, *named)
        assert main(args) == 0
        assert len(list(first.requests)) == len(ITEMS) * 2
    moved = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "elsewhere" / "study")
    with run_simulator(SimulatorConfig()) as second:  # the same server, now on another port
        again = judge_args(moved, moved / "items.csv", "--base-url", second.base_url, *named)
        assert main(again) == 0
        assert list(second.requests) == [], "a named endpoint on a new port paid again"
        unnamed = judge_args(moved, moved / "items.csv", "--base-url", second.base_url)
        assert main(unnamed) == 0
        assert len(list(second.requests)) == len(ITEMS) * 2, "the URL is the identity otherwise"


def _no_network_available() -> bool:
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _no_network_available(), reason="cannot make a network namespace here")
def test_verify_needs_no_network_at_all(study: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from judgekit import config

    bundle = export(study, tmp_path / "study.zip")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(config.ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(  # a new network namespace: not even loopback is up
        ["unshare", "-n", sys.executable, "-m", "judgekit", "verify", str(bundle)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified, every check passed" in done.stdout


def test_a_number_that_moved_with_a_library_version_is_reported_as_such(
    study: Path, tmp_path: Path, offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.sharing import verify

    root = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "bundle")
    environment = json.loads((root / "environment.json").read_text())
    environment["statsmodels"] = "0.13.0"  # as if exported on a machine with an older one
    (root / "environment.json").write_text(json.dumps(environment))
    rewrite_manifest(root)
    assert verified(root) == [], "a version alone is not a difference"
    moved = "report/tables/human_agreement/kappa_family.csv: column 'estimate': 1 cell(s) differ"
    monkeypatch.setattr(verify, "check_report", lambda root, err, allowed=(), **_: [moved])
    result = verify_bundle(root, io.StringIO())
    assert result.library_changes == [
        f"statsmodels 0.13.0 -> {verify.library_versions()['statsmodels']}"
    ]
    assert result.problems[-1].startswith(
        "numbers differ in report/tables/human_agreement/kappa_family.csv and these libraries "
        "differ from the exporting machine's: statsmodels 0.13.0 -> "
    )


def test_a_researchers_own_prompt_travels_in_the_study_and_its_change_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit import config

    own = config.ROOT / "tests" / "fixtures" / "own_prompt"
    prompt = tmp_path / "my_prompt.txt"  # the researcher's files, outside the study
    prompt.write_bytes((own / "mt_bench_single.txt").read_bytes())
    prompt.with_suffix(".yaml").write_bytes((own / "mt_bench_single.yaml").read_bytes())
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    study = tmp_path / "own_study"
    with run_simulator(SimulatorConfig()) as sim:
        args = ["judge", str(own / "items.csv"), "--rubric", str(prompt), "--provider",
                "generic", "--base-url", sim.base_url, "--model", "my-judge", "--labels-column",
                "Human", "--study", str(study), "--max-unscored", "99"]  # fmt: skip
        assert main(args) == 0
    kept = sorted((study / "rubrics").rglob("*"))
    assert [p.name for p in kept if p.is_file()] == ["my_prompt.txt", "my_prompt.yaml"]
    prompt.write_text("edited after judging\n")  # the study keeps the prompt it judged with
    monkeypatch.setenv("OPENAI_BASE_URL", closed_url())
    root = unpacked(export(study, tmp_path / "study.zip"), tmp_path / "bundle")
    assert verified(root) == []
    copy = next(p for p in (root / "rubrics").rglob("my_prompt.txt"))
    copy.write_text(copy.read_text().replace("an impartial judge", "a strict judge"))
    rewrite_manifest(root)
    missing = [p for p in verified(root) if "is not in the store" in p]
    assert missing and "now 'Please act as a strict judge" in missing[0], missing
