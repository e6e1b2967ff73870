"""Every user mistake is one line on stderr, no traceback, non-zero exit, before any call.

Each case runs the command's own ``main(argv)`` in-process (as the console script does); a few
run the real command in a subprocess too. The endpoint, when one is configured, is a closed
port: a case that got as far as calling it would fail differently ("cannot reach").
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit import config
from judgekit.cli.main import main

ITEMS = "ID,Question,Answer,Ref_Answer,human\n1,Capital of France?,Paris,Paris,4\n2,2+2?,5,4,1\n"
#: (case, arguments after `judgekit`, environment, text the one line must contain)
CASES: list[tuple[str, list[str], dict[str, str], str]] = [
    ("unknown rubric", ["judge", "items.csv", "--rubric", "nope", "--output", "o.csv"], {},
     "--rubric: unknown rubric 'nope'"),
    ("output is the items file", ["--output", "items.csv"], {}, "is the items file"),
    ("output type unknown", ["--output", "o.xlsx"], {}, "must end in .csv, .tsv, .parquet"),
    ("output folder is a file", ["--output", "items.csv/o.csv"], {},
     "--output items.csv/o.csv: items.csv is a file, not a folder; choose another"),
    ("a reference column under another name", ["judge", "reference.csv", "--rubric",
     "factual_accuracy", "--output", "o.csv"], {}, "column 'Reference' would not be sent to the "
     "judge: did you mean `Ref_Answer`? pass --column-map Reference=Ref_Answer"),
    ("column map to no column", ["--output", "o.csv", "--column-map", "Reference=Gold"], {},
     "--column-map 'Reference=Gold': write HEADER=COLUMN"),
    ("xlsx first sheet a header of notes", ["judge", "notes_header.xlsx", "--rubric",
     "factual_accuracy", "--output", "o.csv"], {},
     "sheet 'notes' has no data rows below its header; the items may be on another sheet: "
     "pass --sheet items"),
    ("no output at all", ["--output", ""], {}, "must end in"),
    ("study is a file", ["--study", "items.csv"], {}, "--study items.csv is a file"),
    ("store is a folder", ["--output", "o.csv", "--store", "."], {}, "must end in .sqlite"),
    ("corrupted store", ["--output", "o.csv", "--store", "broken.sqlite"], {},
     "broken.sqlite: not a usable response store"),
    ("offline without a store", ["--output", "o.csv", "--offline"], {}, "--offline answers"),
    ("unknown variant", ["--output", "o.csv", "--variant", "nope"], {}, "unknown variant(s)"),
    ("unknown mode", ["--output", "o.csv", "--mode", "nope"], {}, "unknown mode 'nope'"),
    ("unknown provider", ["--output", "o.csv", "--provider", "nope"], {}, "--provider: unknown"),
    ("provider without a model", ["--output", "o.csv", "--provider", "vllm", "--base-url",
     "http://127.0.0.1:{port}/v1"], {}, "no judge model: pass --model"),
    ("no key", ["--output", "o.csv", "--provider", "openai", "--model", "m"], {},
     "no API key for provider 'openai' at https://api.openai.com/v1: set OPENAI_API_KEY"),
    ("base URL without a key", ["--output", "o.csv", "--base-url", "http://gpu.invalid:8000/v1",
     "--model", "m"], {}, "use provider 'generic' (it sends the prompt unchanged, as plain text)"),
    ("hosted provider without its key", ["--output", "o.csv", "--provider", "gemini", "--model",
     "m"], {"OPENAI_API_KEY": "test-canary"}, "set GEMINI_API_KEY"),
    ("malformed URL", ["--output", "o.csv", "--base-url", "htp:/nowhere", "--model", "m"],
     {"OPENAI_API_KEY": "test-canary"}, "is not an http(s) URL"),
    ("two-character separator", ["--output", "o.csv", "--sep", ";;"], {}, "--sep ';;'"),
    ("zero rpm", ["--output", "o.csv", "--rpm", "0"], {}, "--rpm 0: give a positive number"),
    ("zero limit", ["--output", "o.csv", "--limit", "0"], {}, "--limit 0"),
    ("label column absent", ["--output", "o.csv", "--labels-column", "Human_Score"], {},
     "no label column 'Human_Score'"),
    ("label off the scale", ["judge", "offscale.csv", "--rubric", "factual_accuracy",
     "--output", "o.csv", "--labels-column", "human"], {},
     "row 3, column C 'human': label '7' is not on the factual_accuracy scale (1, 2, 3, 4)"),
    ("items file missing", ["judge", "nope.csv", "--rubric", "factual_accuracy", "--output",
     "o.csv"], {}, "nope.csv: file not found"),
    ("items file is a folder", ["judge", ".", "--rubric", "factual_accuracy", "--output",
     "o.csv"], {}, "is a folder; give the items file inside it"),
    ("a PNG named .csv", ["judge", "picture.csv", "--rubric", "factual_accuracy", "--output",
     "o.csv"], {}, "picture.csv: is a PNG image, not a text table"),
    ("BOM then Windows-1250 bytes", ["judge", "bom.csv", "--rubric", "factual_accuracy",
     "--output", "o.csv"], {}, "byte 0xe9 at offset 27 is not valid utf-8-sig"),
    ("xlsx header on row 3", ["judge", "header3.xlsx", "--rubric", "factual_accuracy",
     "--output", "o.csv"], {}, "the header ('ID', ...) is on row 3, not row 1"),
    ("xlsx whose first sheet is notes", ["judge", "notes.xlsx", "--rubric", "factual_accuracy",
     "--output", "o.csv"], {}, "the first sheet 'notes' holds no table; the workbook also has"),
    ("xlsx formula without a saved value", ["judge", "formula.xlsx", "--rubric",
     "factual_accuracy", "--output", "o.csv"], {}, "has no saved value"),
    ("unknown option", ["--output", "o.csv", "--bogus"], {}, "No such option: --bogus"),
    ("bad number", ["--output", "o.csv", "--runs", "many"], {}, "Invalid value for '--runs'"),
    ("report of a missing folder", ["report", "nowhere"], {}, "no such study folder"),
    ("report of an empty folder", ["report", "."], {}, "no judgments.parquet or judgments.csv"),
    ("unknown rubric to show", ["rubrics", "show", "nope"], {}, "unknown rubric 'nope'"),
    ("judge without a model", ["--output", "o.csv", "--judge", "openai"], {},
     "--judge 'openai': write [NAME=]PROVIDER:MODEL[@BASE_URL]"),
    ("judge of an unknown provider", ["--output", "o.csv", "--judge", "nope:m"], {},
     "--judge 'nope:m': unknown provider 'nope'"),
    ("judge and model both", ["--output", "o.csv", "--judge", "vllm:m", "--model", "m"], {},
     "--judge/--panel name every judge: drop --model"),
    ("two judges, one label", ["--output", "o.csv", "--judge", "vllm:m@http://127.0.0.1:{port}/v1",
     "--judge", "vllm:m@http://127.0.0.1:{port}/v2"], {}, "two judges are labelled 'vllm:m'"),
    ("a panel judge without its key", ["--output", "o.csv", "--judge", "openai:gpt-4.1",
     "--judge", "vllm:m"], {}, "judge openai:gpt-4.1: no API key for provider 'openai'"),
    ("a key in the panel file", ["--output", "o.csv", "--panel", "keyed.yaml"], {},
     "--panel keyed.yaml, judge 1: never write a key here; name its variable with api_key_env"),
    ("study in a folder of the user's files", ["--study", "."], {},
     "--study . holds files judgekit did not write (bom.csv, broken.sqlite"),
    ("label map malformed", ["judge", "offscale.csv", "--rubric", "factual_accuracy", "--output",
     "o.csv", "--labels-column", "human", "--label-map", "7"], {},
     "--label-map '7': write OLD=NEW pairs such as 1=0,4=5"),
    ("no labels, yet a label column", ["--output", "o.csv", "--no-labels", "--labels-column",
     "human"], {}, "--no-labels leaves the labels out: drop --labels-column/--label-map"),
]  # fmt: skip
BASE = ["judge", "items.csv", "--rubric", "factual_accuracy"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mistakes")
    (root / "items.csv").write_text(ITEMS, encoding="utf-8")
    (root / "offscale.csv").write_text("ID,Question,human,Answer\n1,q,4,a\n2,q,7,a\n")
    (root / "broken.sqlite").write_bytes(b"this is not a database" * 100)
    (root / "keyed.yaml").write_text("judges:\n  - judge: openai:gpt-4.1\n    api_key: sk-oops\n")
    (root / "bom.csv").write_bytes(b"\xef\xbb\xbfID,Question,Answer\r\n1,q,\xe9\xe8\r\n")
    (root / "picture.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (root / "reference.csv").write_text("ID,Question,Answer,Reference\n1,q,a,r\n")
    write_workbooks(root)
    return root


def write_workbooks(root: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["My study, spring"])
    book.active.append([])
    for row in (["ID", "Question", "Answer"], ["1", "q", "a"]):
        book.active.append(row)
    book.save(root / "header3.xlsx")
    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active.append(["Notes about the items"])
    items = book.create_sheet("items")
    for row in (["ID", "Question", "Answer"], ["1", "q", "a"]):
        items.append(row)
    book.save(root / "notes.xlsx")
    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active.append(["Notes about the items", "by me"])
    items = book.create_sheet("items")
    for row in (["ID", "Question", "Answer"], ["1", "q", "a"]):
        items.append(row)
    book.save(root / "notes_header.xlsx")
    book = openpyxl.Workbook()
    for row in (["ID", "Question", "Answer"], ["1", "q", '=CONCAT("a", "b")']):
        book.active.append(row)
    book.save(root / "formula.xlsx")


def _argv(args: list[str]) -> list[str]:
    port = closed_port()
    return [a.format(port=port) for a in (args if args[0] in ("judge", "report", "rubrics")
                                          else [*BASE, *args])]  # fmt: skip


def _environment(folder: Path, env: dict[str, str]) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    clean["JUDGEKIT_LOCAL_MODEL"] = str(folder / "no-model.gguf")  # the local judge never starts
    return {**clean, **env}


def _check(case: str, code: int, out: str, err: str, expected: str, folder: Path) -> None:
    assert code != 0, (case, out, err)
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0], lines[0]
    assert not (folder / "o.csv").exists()


@pytest.mark.parametrize(("case", "args", "env", "expected"), CASES, ids=[c[0] for c in CASES])
def test_mistake_is_one_line_without_traceback(
    folder: Path,
    case: str,
    args: list[str],
    env: dict[str, str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "JUDGEKIT_"))]:
        monkeypatch.delenv(name)
    for name, value in _environment(folder, env).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(folder)
    code = main(_argv(args))
    captured = capsys.readouterr()
    _check(case, code, captured.out, captured.err, expected, folder)


#: The cases also run as the real command, in a subprocess (the console script's exit path).
SMOKE = ("unknown rubric", "bad number", "report of a missing folder")


@pytest.mark.parametrize(
    ("case", "args", "env", "expected"), [c for c in CASES if c[0] in SMOKE], ids=SMOKE
)
def test_mistake_as_a_subprocess(
    folder: Path, case: str, args: list[str], env: dict[str, str], expected: str
) -> None:
    clean = _environment(folder, env)
    clean["PYTHONPATH"] = os.pathsep.join([str(config.ROOT), clean.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "judgekit", *_argv(args)],
        cwd=folder,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    _check(case, result.returncode, result.stdout, result.stderr, expected, folder)
