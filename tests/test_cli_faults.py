"""Faults at scale end in one line: an HTML reply, a full disk under the store or the table."""

from __future__ import annotations

import errno
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.engine import store as store_module
from judgekit.engine import store_writer
from judgekit.judging import run as judge_run
from judgekit.simulator import run_simulator


class _LoginPage(BaseHTTPRequestHandler):
    """A proxy's login wall: HTTP 200 with an HTML page for every request."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"<html><body><h1>Please sign in</h1></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Silent."""


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """The client hanging up is not this test's subject."""


@pytest.fixture
def login_page() -> Iterator[str]:
    server = _QuietServer(("127.0.0.1", 0), _LoginPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _items(folder: Path, n: int) -> Path:
    path = folder / "items.csv"
    rows = "".join(f"{i},Riddle {i}?,Answer {i},Ref {i}\n" for i in range(1, n + 1))
    path.write_text("ID,Question,Answer,Ref_Answer\n" + rows, encoding="utf-8")
    return path


def _judge(items: Path, output: Path, base_url: str, *extra: str) -> list[str]:
    return [
        "judge", str(items), "--rubric", "riddle_accuracy", "--output", str(output),
        "--model", "sim-judge", "--base-url", base_url, "--provider", "simulator",
        "--batch-size", "1", *extra,
    ]  # fmt: skip


def _last_line(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    err = capsys.readouterr().err
    return err.strip().splitlines()[-1], err


def test_an_html_page_for_a_reply_is_one_line_and_leaves_no_temporary_store(
    tmp_path: Path, login_page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.csv"
    code = main(_judge(_items(tmp_path, 3), output, login_page, "--max-retries", "0"))
    last, err = _last_line(capsys)
    assert code == 1 and "Traceback" not in err
    assert last.startswith("error: sim-judge: call failed") and "text/html" in last
    assert login_page in last and "not a chat completion" in last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.csv"]  # nothing left behind


def test_a_full_disk_under_the_table_keeps_the_replies_and_a_rerun_pays_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    items, output = _items(tmp_path, 5), tmp_path / "out.csv"
    store = tmp_path / f".{output.name}.responses.sqlite"

    def full(frame: object, path: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with run_simulator() as sim:
        monkeypatch.setattr(judge_run, "write_judgments", full)
        code = main(_judge(items, output, sim.base_url))
        last, err = _last_line(capsys)
        assert code == 1 and "Traceback" not in err
        assert last == (
            f"error: cannot write {output} (No space left on device); the 5 replies are kept "
            f"in {store}: free space and rerun the same command, which replays them without a "
            "call"
        )
        monkeypatch.undo()
        answered = sim.stats()["requests"]
        assert main(_judge(items, output, sim.base_url)) == 0
        assert sim.stats()["requests"] == answered  # replayed, not paid again
    assert output.is_file() and not store.exists()


def test_a_full_disk_under_the_store_names_the_store_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    connect = store_writer.connect

    def room_for_a_few_pages(path: Path) -> sqlite3.Connection:
        db = connect(path)  # the writer thread's connection
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 8}")  # SQLite's own SQLITE_FULL
        return db

    monkeypatch.setattr(store_writer, "connect", room_for_a_few_pages)
    store, output = tmp_path / "s.sqlite", tmp_path / "out.csv"
    with run_simulator() as sim:
        code = main(_judge(_items(tmp_path, 200), output, sim.base_url, "--store", str(store)))
    last, err = _last_line(capsys)
    assert code == 1 and "Traceback" not in err
    assert last.startswith(f"error: {store}: cannot write the response store (database or disk")
    assert not output.exists()
    monkeypatch.undo()
    with store_module.ResponseStore.open_readonly(store) as kept:
        assert kept.counts()["ok"] > 0  # what was stored before the disk filled is kept
