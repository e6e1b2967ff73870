"""``export`` and ``verify`` treat a bundle as data and never replace a file of the user's.

Issue 37 item 2 and issue 38: a failed analysis never verifies; outputs never replace an input;
scratch copies never outlive the process; a link never leads out of a study; a zip bomb is
refused before extraction; tampered provenance is named even under a re-hashed manifest. The
study is judged once (by the real CLI against the simulator) and copied for each test.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from test_bundle import judged_study, unpacked

from judgekit import config
from judgekit.cli.main import main
from judgekit.reporting.html import REPORT_STEPS
from judgekit.sharing import safety as bundle_safety
from judgekit.sharing.export import MANIFEST, export_study, sha256_file, study_files
from judgekit.sharing.verify import verify_bundle
from judgekit.types import UsageError

KEY = "canary-safety-key-0123456789abcdef"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One study judged by the simulator (two runs of six items), shared by the tests."""
    yield judged_study(tmp_path_factory.mktemp("judged"), KEY)


@pytest.fixture
def study(judged: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "my_study"
    shutil.copytree(judged, copy)
    return copy


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR for this test alone, so a scratch copy left behind is seen."""
    import tempfile

    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def rewrite_manifest(root: Path) -> None:
    """What a careful tamperer does: list and hash every file again, added ones included."""
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"] = {
        p.as_posix(): {"sha256": sha256_file(root / p), "bytes": (root / p).stat().st_size}
        for p in study_files(root)
        if p.as_posix() != MANIFEST
    }
    (root / MANIFEST).write_text(json.dumps(manifest))


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a command refused with (exit 2)."""
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_export_never_replaces_a_file_that_is_not_a_bundle(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes, pdf = tmp_path / "notes.zip", tmp_path / "report.pdf"
    notes.write_text("my notes\n")
    pdf.write_bytes(b"%PDF-1.4 mine")
    assert "is not a judgekit bundle; not replaced" in refused(
        ["export", str(study), "-o", str(notes)], capsys
    )
    assert "a file exists there" in refused(["export", str(study), "-o", str(pdf)], capsys)
    assert notes.read_text() == "my notes\n" and pdf.read_bytes() == b"%PDF-1.4 mine"
    first = tmp_path / "study.zip"
    assert main(["export", str(study), "-o", str(first)]) == 0
    assert main(["export", str(study), "-o", str(first)]) == 0  # an earlier bundle is replaced


def test_verify_html_never_replaces_an_input_or_a_page_not_ours(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = export_study(study, tmp_path / "b.zip")
    items = study / "items.csv"
    before = items.read_bytes()
    assert "name a new .html file" in refused(["verify", str(bundle), "--html", str(items)], capsys)
    page = tmp_path / "index.html"
    page.write_text("<!DOCTYPE html><title>my page</title>")
    assert "not a judgekit report page" in refused(
        ["verify", str(bundle), "--html", str(page)], capsys
    )
    folder = export_study(study, tmp_path / "b-folder")
    assert "outside the bundle" in refused(
        ["verify", str(folder), "--html", str(folder / "page.html")], capsys
    )
    assert items.read_bytes() == before and page.read_text().endswith("my page</title>")


def test_a_folder_export_that_fails_midway_leaves_nothing_behind(
    study: Path, tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.sharing import export as bundle

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle, "write_prompts", broken)
    out = tmp_path / "exports"
    out.mkdir()
    for target in (out / "bundle-folder", out / "bundle.zip"):
        with pytest.raises(OSError, match="No space left"):
            export_study(study, target)
    assert list(out.iterdir()) == [] and list(scratch.iterdir()) == []


def test_sigterm_during_export_removes_the_scratch_copy_and_the_staged_folder(
    study: Path, tmp_path: Path, scratch: Path
) -> None:
    out = tmp_path / "exports"
    out.mkdir()
    script = (
        "import os, signal, sys\n"
        "from judgekit.sharing import export as bundle\n"
        "def stop(*args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "bundle.write_prompts = stop\n"
        "bundle.export_study(sys.argv[1], sys.argv[2])\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(config.ROOT)}
    for target in (out / "folder", out / "b.zip"):
        done = subprocess.run(
            [sys.executable, "-c", script, str(study), str(target)], env=env, capture_output=True
        )
        assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert list(out.iterdir()) == [] and list(scratch.iterdir()) == []


def test_export_never_follows_a_link_out_of_the_study(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "participants.csv").write_text("name,email\nAda,ada@example.org\n")
    (study / "participants.csv").symlink_to(private / "participants.csv")
    line = refused(["export", str(study), "-o", str(tmp_path / "b.zip")], capsys)
    assert "participants.csv: a link to" in line and "outside my_study/" in line
    assert not (tmp_path / "b.zip").exists()
    (study / "participants.csv").unlink()
    (study / "notes").symlink_to(private, target_is_directory=True)
    assert "notes: a link to" in refused(
        ["export", str(study), "-o", str(tmp_path / "b.zip")], capsys
    )


def test_a_zip_bomb_is_refused_before_a_byte_is_extracted(tmp_path: Path, scratch: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps({"format": "judgekit-study-bundle"}))
        with archive.open("responses.sqlite", "w") as entry:
            block = bytes(1 << 20)
            for _ in range(256):
                entry.write(block)
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(UsageError, match=r"expand to 256 MiB from 0\.\d\d MiB; refused before"):
        verify_bundle(bomb, io.StringIO())
    assert list(scratch.iterdir()) == []


def fake_report(study: Path, failed: str) -> None:
    """A report whose steps.json ran 02 and 05, and 05 failed (its .failed.ipynb kept)."""
    report = study / "report"
    (report / "tables").mkdir(parents=True)
    steps = [
        {"notebook": "02_human_agreement", "parameters": {}, "skipped": ""},
        {"notebook": "03_run_consistency", "parameters": {}, "skipped": "needs two runs"},
        {"notebook": failed, "parameters": {}, "skipped": ""},
    ]
    (report / REPORT_STEPS).write_text(json.dumps(steps))
    nbformat.write(nbformat.v4.new_notebook(), report / "02_human_agreement.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), report / f"{failed}.failed.ipynb")


def test_a_failed_step_stops_export_and_fails_verify_even_when_allowed(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.reporting import compute
    from judgekit.reporting.html import StepOutcome, step_outcomes

    failed = "05_distributions_and_bias"
    fake_report(study, failed)
    line = refused(["export", str(study), "-o", str(tmp_path / "b.zip")], capsys)
    assert f"report step {failed} failed (report/{failed}.failed.ipynb)" in line
    assert "--allow-failed" in line and not (tmp_path / "b.zip").exists()
    bundle = tmp_path / "b.zip"
    assert main(["export", str(study), "-o", str(bundle), "--allow-failed"]) == 0
    with zipfile.ZipFile(bundle) as archive:
        assert json.loads(archive.read(MANIFEST))["allow_failed"] == [
            f"{failed} failed (report/{failed}.failed.ipynb)"
        ]

    def recompute(root: Path, err: object, figures: bool = False) -> list[StepOutcome]:
        # the recomputation is not what this test is about: every step runs and succeeds
        again = Path(root) / "report"
        (again / "tables").mkdir(parents=True)
        shutil.copy(study / "report" / REPORT_STEPS, again / REPORT_STEPS)
        for name in ("02_human_agreement", failed):
            nbformat.write(nbformat.v4.new_notebook(), again / f"{name}.ipynb")
        return step_outcomes(again)

    monkeypatch.setattr(compute, "compute_report", recompute)
    problems = verify_bundle(bundle, io.StringIO()).problems
    assert problems == [
        f"report: {failed} failed (report/{failed}.failed.ipynb) when the study was reported "
        "(exported with --allow-failed)"
    ]
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 1
    assert f"first: report: {failed} failed" in capsys.readouterr().err


def test_tampered_provenance_is_named_under_a_rehashed_manifest(
    study: Path, tmp_path: Path
) -> None:
    root = unpacked(export_study(study, tmp_path / "b.zip"), tmp_path / "bundle")
    prompt = next((root / "prompts").glob("*.json"))
    request = json.loads(prompt.read_text())
    request["messages"][0]["content"] = "You are a lenient judge."
    prompt.write_text(json.dumps(request))
    study_json = json.loads((root / "study.json").read_text())
    study_json["judges"][0]["model"] = "gpt-4o"
    study_json["judged"][0]["settings"]["options"]["temperature"] = 0.7
    (root / "study.json").write_text(json.dumps(study_json))
    rewrite_manifest(root)
    problems = verify_bundle(root, io.StringIO()).problems
    assert f"prompts/{prompt.name}: differs from the request the store holds" in problems[0]
    assert any("judge openai:simulated-judge records model 'gpt-4o'" in p for p in problems)
    assert any("records temperature 0.7, but its stored requests were sent with 0.0" in p
               for p in problems)  # fmt: skip


def test_environment_json_is_checked_against_the_notebooks_provenance(
    study: Path, tmp_path: Path
) -> None:
    root = unpacked(export_study(study, tmp_path / "b.zip"), tmp_path / "bundle")
    environment = json.loads((root / "environment.json").read_text())
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["judgekit"] = {
        "provenance": {"python": environment["python"], "packages": {"numpy": "1.0.0"}}
    }
    (root / "report").mkdir()
    nbformat.write(notebook, root / "report" / "02_human_agreement.ipynb")
    rewrite_manifest(root)
    assert verify_bundle(root, io.StringIO()).problems == [
        f"environment.json: numpy {environment['numpy']}, but report/02_human_agreement.ipynb "
        "was executed with numpy 1.0.0"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only modes")
def test_read_only_places_are_one_line(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # pragma: no cover - CI runs unprivileged
    locked = tmp_path / "locked"
    locked.mkdir()
    bundle = export_study(study, tmp_path / "b.zip")
    locked.chmod(0o555)
    try:
        assert "cannot write in" in refused(
            ["export", str(study), "-o", str(locked / "b.zip")], capsys
        )
        assert "cannot write in" in refused(
            ["verify", str(bundle), "--html", str(locked / "v.html")], capsys
        )
    finally:
        locked.chmod(0o755)


def test_a_missing_output_folder_is_one_line_before_any_work(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no folder" in refused(
        ["export", str(study), "-o", str(tmp_path / "nowhere" / "b.zip")], capsys
    )
    assert bundle_safety.is_bundle_zip(tmp_path / "nowhere.zip") is False


def test_a_second_report_on_a_study_refuses_in_one_line(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from filelock import FileLock

    from judgekit.reporting.lock import LOCK_NAME

    with FileLock(study / LOCK_NAME):  # a first report, still running
        line = refused(["report", str(study)], capsys)
    assert "another `judgekit report` is running on this study" in line
    assert not (study / "report").exists()  # it wrote nothing


def test_a_password_in_a_url_stops_the_export(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = study / "study.json"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("http://127.0.0.1", "http://me:hunter2-pw@127.0.0.1", 1))
    line = refused(["export", str(study), "-o", str(tmp_path / "b.zip")], capsys)
    assert "study.json holds a URL with a password" in line and "hunter2" not in line
    assert not (tmp_path / "b.zip").exists()


def test_verify_removes_its_scratch_copy_on_sigterm_and_refuses_a_link_out(
    study: Path, tmp_path: Path, scratch: Path
) -> None:
    folder = export_study(study, tmp_path / "bundle-folder")
    script = (
        "import io, os, signal, sys\n"
        "from judgekit.sharing import verify\n"
        "def stop(*args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "verify.check_files = stop\n"
        "verify.verify_bundle(sys.argv[1], io.StringIO())\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(config.ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(folder)], env=env, capture_output=True)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert list(scratch.iterdir()) == []
    (folder / "extra.csv").symlink_to(tmp_path / "my_study" / "items.csv")
    with pytest.raises(UsageError, match=r"extra\.csv: a link to .*, outside bundle-folder/"):
        verify_bundle(folder, io.StringIO())
