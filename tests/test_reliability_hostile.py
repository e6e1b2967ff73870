"""Reliability suite, hostile endpoints and careless commands (issue 38): no key or password is
kept, no output replaces an input, every crash is one line before any call where possible.

Endpoints are the simulator or a tiny server on 127.0.0.1, reached through the real ``openai``
client; every command goes through the CLI's ``main`` as a user would type it.
"""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from json_endpoint import JsonEndpoint

from judgekit.cli.main import main
from judgekit.data import atomic, read_frame, write_table
from judgekit.data.frames import SpreadsheetFormulaWarning
from judgekit.engine import JudgeCallError, OpenAIJudge, ResponseStore
from judgekit.engine.client import SERVER_ERROR_LIMIT
from judgekit.engine.providers import hide_url_credentials, url_credentials
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import ChatRequest, Status, UsageError


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """The client hanging up (a timeout) is the point of some tests."""


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = _Quiet(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _items(folder: Path, n: int, name: str = "items.csv") -> Path:
    path = folder / name
    rows = "".join(f"{i},Riddle {i}?,Answer {i},Ref {i}\n" for i in range(1, n + 1))
    path.write_text("ID,Question,Answer,Ref_Answer\n" + rows, encoding="utf-8")
    return path


def _judge(items: Path, base_url: str, *extra: str, provider: str = "simulator") -> list[str]:
    return [
        "judge", str(items), "--rubric", "riddle_accuracy", "--model", "sim-judge",
        "--base-url", base_url, "--provider", provider, "--batch-size", "1", *extra,
    ]  # fmt: skip


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1]


def _files_containing(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


# --- secrets stay out ---------------------------------------------------------------------


def test_a_password_in_the_base_url_is_refused_before_any_call_and_kept_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    password = f"pw-{secrets.token_hex(8)}"
    with run_simulator() as sim:
        with_password = sim.base_url.replace("http://", f"http://judge:{password}@")
        code = main(_judge(_items(tmp_path, 3), with_password, "--study", str(tmp_path / "s")))
        served = sim.stats()["requests"]
    last = _one_line(capsys)
    assert code == 2 and served == 0
    assert "user name or password" in last and "JUDGEKIT_SIMULATOR_API_KEY" in last
    assert password not in last and "[credentials]" in last
    assert _files_containing(tmp_path, password.encode()) == []
    # the export's secret scan finds such URLs in any text, and they can be shown without it
    text = f'{{"base_url": "{with_password}"}}'
    assert url_credentials(text) == [f"http://judge:{password}@"]
    assert password not in hide_url_credentials(text)
    assert url_credentials(f'{{"base_url": "{sim.base_url}"}}') == []


def _completion(content: str, **message: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, **message}
    return {"id": "c1", "model": "m", "choices": [{"message": message, "finish_reason": "stop"}]}


class _EchoesTheKey(JsonEndpoint):
    """Answers with a score, then repeats the bearer token it was sent (a debugging proxy)."""

    def answer(self) -> tuple[int, dict[str, Any]]:
        key = self.headers["Authorization"].removeprefix("Bearer ")
        return 200, _completion(f"1,4\n(debug: your key is {key})", reasoning_content=f"k={key}")


@pytest.fixture
def echo_endpoint() -> Iterator[str]:
    yield from _serve(_EchoesTheKey)


def test_a_reply_that_echoes_the_key_is_scrubbed_before_it_is_stored_or_written(
    tmp_path: Path, echo_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = f"canary-{secrets.token_hex(12)}"  # no sk- prefix: only its value can find it
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    store = tmp_path / "s.sqlite"
    extra = ("--output", str(tmp_path / "j.csv"), "--store", str(store), "--max-unscored", "1")
    code = main(_judge(_items(tmp_path, 1), echo_endpoint, *extra, provider="generic"))
    assert code == 0
    assert _files_containing(tmp_path, canary.encode()) == []
    with ResponseStore.open_readonly(store) as opened:
        rows = list(opened.rows())
    assert rows and all("your key is [key]" in row["reply_text"] for row in rows)
    assert all(row["reasoning"] == "k=[key]" for row in rows)
    assert len(read_frame(tmp_path / "j.csv")) == 1


# --- no output replaces an input or another output -------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--output", "x.csv", "--id-score-csv", "x.csv"), "--id-score-csv x.csv is also --output"),
        (("--study", "s", "--output", "s/items.csv"), "a file the study s writes itself"),
        (("--study", "s", "--id-score-csv", "s/judgments.csv"), "a file the study s writes"),
        (("--study", "s", "--output", "s/scores/x.csv"), "a file the study s writes itself"),
        (("--output", "x.csv", "--write-requests", "x.csv"), "is also --output"),
        (("--output", "x.csv", "--id-score-csv", "s/../x.csv"), "is also --output"),
        (("--study", "s", "--output", "s/report/t.csv"), "a file the study s writes itself"),
    ],
)
def test_an_output_that_is_an_input_or_another_output_is_refused_before_any_call(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    items = _items(tmp_path, 2)
    with run_simulator() as sim:
        assert main(_judge(Path("items.csv"), sim.base_url, "--study", "s")) == 0
        before = {p: p.read_bytes() for p in [items, *(tmp_path / "s").rglob("*")] if p.is_file()}
        served = sim.stats()["requests"]
        capsys.readouterr()
        code = main(_judge(Path("items.csv"), sim.base_url, *flags))
        assert sim.stats()["requests"] == served
    last = _one_line(capsys)
    assert code == 2 and message in last, last
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "x.csv").exists()


# --- a newer store is refused by every reader ------------------------------------------------


def test_a_store_of_a_newer_schema_is_refused_by_every_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s"
    items = _items(tmp_path, 2)
    with run_simulator() as sim:
        assert main(_judge(items, sim.base_url, "--study", str(study))) == 0
        with sqlite3.connect(study / "responses.sqlite") as db:
            db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        db.close()
        readers = {
            "--offline": _judge(items, sim.base_url, "--study", str(study), "--offline"),
            "status": ["status", str(study), "--no-live"],
            "export": ["export", str(study), "-o", str(tmp_path / "b.zip")],
        }
        for name, command in readers.items():
            capsys.readouterr()
            code = main(command)
            last = _one_line(capsys)
            assert code == 2, (name, last)
            assert "schema 99 is newer than this judgekit's" in last, (name, last)
    with pytest.raises(UsageError, match="upgrade judgekit"):
        ResponseStore.open_readonly(study / "responses.sqlite")
    assert not (tmp_path / "b.zip").exists()


# --- text a file system or a store cannot hold -----------------------------------------------


class _LoneSurrogate(JsonEndpoint):
    r"""Every reply's text ends in a lone surrogate (JSON's ``"\ud800"``)."""

    def answer(self) -> tuple[int, dict[str, Any]]:
        return 200, _completion("1,3\n\ud800")


def test_a_lone_surrogate_in_a_reply_is_stored_escaped_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    extra = ("--output", str(tmp_path / "j.csv"), "--store", str(store), "--max-reasks", "0")
    for url in _serve(_LoneSurrogate):
        command = _judge(_items(tmp_path, 3), url, *extra, provider="generic")
        code = main([*command, "--max-unscored", "3"])
    _one_line(capsys)
    assert code == 0
    with ResponseStore.open_readonly(store) as opened:
        assert opened.counts() == {"pending": 0, "ok": 3, "error": 0}
        assert all(row["reply_text"].endswith("\\ud800") for row in opened.rows())
    table = read_frame(tmp_path / "j.csv")
    assert set(table["item_id"]) == {"1", "2", "3"}
    assert set(table["status"]) <= {s.value for s in Status}


def test_a_file_or_folder_name_that_is_not_utf8_is_one_line_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / os.fsdecode(b"caf\xe9")  # Latin-1 bytes: no UTF-8 text
    folder.mkdir()
    items = _items(folder, 2)
    with run_simulator() as sim:
        for flags in (("--study", str(folder / "s")), ("--output", str(tmp_path / "j.csv"))):
            items_arg = items if flags[0] == "--study" else _items(tmp_path, 2, "ok.csv")
            target = folder / "x.csv" if flags[0] == "--output" else None
            more = ("--output", str(target)) if target is not None else flags
            code = main(_judge(items_arg, sim.base_url, *more))
            last = _one_line(capsys)
            assert code == 2 and "not UTF-8" in last and "caf\\xe9" in last, last
        assert sim.stats()["requests"] == 0
    assert sorted(p.name for p in folder.iterdir()) == ["items.csv"]


def test_an_id_with_a_comma_is_refused_in_one_line_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    items.write_text('ID,Question,Answer,Ref_Answer\n"7,8",Q?,A,A\n9,Q?,A,A\n', encoding="utf-8")
    with run_simulator() as sim:
        code = main(_judge(items, sim.base_url, "--output", str(tmp_path / "j.csv")))
        served = sim.stats()["requests"]
    last = _one_line(capsys)
    assert code == 2 and served == 0
    assert "item ID '7,8' contains a comma" in last and "'7-8'" in last


# --- endpoints that never finish, or never succeed -------------------------------------------


class _Drip(BaseHTTPRequestHandler):
    """HTTP 200 and a promised body, then one byte every 0.2 s for up to 60 s."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "300")
        self.end_headers()
        for _ in range(300):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        """Silent."""


def test_timeout_bounds_the_whole_attempt_of_an_endpoint_that_drips() -> None:
    request = ChatRequest(messages=({"role": "user", "content": "1"},), options={})
    for url in _serve(_Drip):
        judge = OpenAIJudge("m", base_url=url, provider="simulator", max_retries=0, timeout_s=1)
        started = time.monotonic()
        with pytest.raises(JudgeCallError) as caught:
            asyncio.run(judge.complete(request))
        elapsed = time.monotonic() - started
    assert elapsed < 15  # the body would take 60 s; each byte comes well within 1 s
    assert "timeout_s=1" in str(caught.value) and caught.value.fatal


def test_a_storm_of_server_errors_before_any_success_stops_the_run_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = _items(tmp_path, 24)
    with run_simulator(SimulatorConfig(error_500_rate=1.0)) as sim:
        extra = ("--output", str(tmp_path / "j.csv"), "--max-retries", "2")
        code = main(_judge(items, sim.base_url, *extra))
        posts = sim.stats()["requests"]
    last = _one_line(capsys)
    assert code == 1
    assert f"{SERVER_ERROR_LIMIT} server errors (HTTP 500)" in last
    assert "nothing has succeeded on this endpoint, so the run stops" in last
    # 72 POSTs before (3 per row); now the limit plus what was in flight (8 at once)
    assert posts <= SERVER_ERROR_LIMIT + 8


class _Refused(JsonEndpoint):
    status = 401

    def answer(self) -> tuple[int, dict[str, Any]]:
        return self.status, {"error": {"message": "Incorrect API key provided", "type": "auth"}}


class _Forbidden(_Refused):
    status = 403


@pytest.mark.parametrize("handler", [_Refused, _Forbidden])
def test_a_refused_key_names_its_variable(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    handler: type[JsonEndpoint],
) -> None:
    canary = f"canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    for url in _serve(handler):
        output = ("--output", str(tmp_path / "j.csv"))
        code = main(_judge(_items(tmp_path, 2), url, *output, provider="generic"))
    last = _one_line(capsys)
    assert code == 1 and str(handler.status) in last
    assert f"the key in OPENAI_API_KEY was refused by {url}" in last
    assert canary not in last


# --- read-only places and hostile settings files ---------------------------------------------


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_a_read_only_study_folder_is_one_line_for_label(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    code: int,
) -> None:
    study = tmp_path / "s"
    with run_simulator() as sim:
        assert main(_judge(_items(tmp_path, 4), sim.base_url, "--study", str(study))) == 0

    def read_only(*args: object, dir: Path, **kwargs: object) -> tuple[int, str]:
        raise OSError(code, os.strerror(code), str(dir))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", read_only)  # every atomic write
    capsys.readouterr()
    exit_code = main(["label", str(study), "--labeller", "ana", "--no-browser"])
    last = _one_line(capsys)
    assert exit_code == 2
    assert last.startswith(f"error: cannot write {study} ({os.strerror(code)})"), last


def test_a_python_tag_in_a_simulator_config_is_refused_and_never_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "sim.yaml"
    config.write_text('seed: !!python/object/apply:os.system ["touch ran"]\n', encoding="utf-8")
    assert main(["simulate", "--config", str(config)]) == 2
    last = _one_line(capsys)
    assert last.startswith(f"error: {config}: not a plain YAML settings file"), last
    assert not (tmp_path / "ran").exists()


# --- files judgekit writes --------------------------------------------------------------------


def test_a_csv_cell_a_spreadsheet_would_run_is_kept_and_warned_about(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"item_id": ["1", "2"], "raw_reply": ['=HYPERLINK("http://x","ok")', "-1"]}
    )
    with pytest.warns(SpreadsheetFormulaWarning, match=r"1 text cell\(s\).*'raw_reply'"):
        write_table(frame, tmp_path / "t.csv")
    assert read_frame(tmp_path / "t.csv")["raw_reply"].tolist() == frame["raw_reply"].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_table(frame.iloc[1:], tmp_path / "plain.csv")  # a negative number is no formula
        write_table(frame, tmp_path / "t.parquet")  # no spreadsheet opens Parquet


def test_a_rerun_under_umask_022_keeps_private_study_files_private(tmp_path: Path) -> None:
    study = tmp_path / "s"
    items = _items(tmp_path, 3)
    previous = os.umask(0o022)
    try:
        with run_simulator() as sim:
            assert main(_judge(items, sim.base_url, "--study", str(study))) == 0
            private = [p for p in study.rglob("*") if p.is_file()]
            for path in private:
                path.chmod(0o600)
            assert main(_judge(items, sim.base_url, "--study", str(study), "--runs", "2")) == 0
    finally:
        os.umask(previous)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in private} == {
        p.name: oct(0o600) for p in private
    }
    new = tmp_path / "new.csv"
    atomic.atomic_write_text(new, "x")
    assert oct(new.stat().st_mode & 0o777) == oct(0o644)


def test_a_batch_result_that_echoes_the_key_is_scrubbed_before_it_is_stored() -> None:
    from judgekit.engine.batch_files import reply_from_result

    secret = "sk-batch-" + "x" * 24
    line = {
        "custom_id": "req-1",
        "response": {
            "status_code": 200,
            "request_id": "r1",
            "body": {
                "id": "c1",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": f"SCORE: 3 (key {secret})"},
                    }
                ],
            },
        },
    }
    reply, error = reply_from_result(line, secret)
    assert error is None and reply is not None
    assert secret not in reply.text and reply.text == "SCORE: 3 (key [key])"
    unscrubbed, _ = reply_from_result(line)
    assert unscrubbed is not None and secret in unscrubbed.text  # the scrub is what removes it
