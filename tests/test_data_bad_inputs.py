"""The malformed-input corpus: each file either loads as described or fails with one exact line."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from judgekit.data import DataError, read_table

CORPUS = Path(__file__).parent / "bad_inputs"
CASES: list[dict[str, Any]] = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
REQUIRED = ["Question", "Answer", "Ref_Answer"]


def _load_maker() -> Any:
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(case: dict[str, Any], folder: Path = CORPUS) -> Any:
    args = {"required": REQUIRED, **case.get("args", {})}
    return read_table(folder / case["file"], **args)


def test_corpus_is_big_enough_and_every_file_has_a_case() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name not in {"make_corpus.py", "expected.yaml"}}
    assert files == {case["file"] for case in CASES}
    failures = [c for c in CASES if "error" in c]
    successes = [c for c in CASES if "ok" in c]
    assert len(failures) >= 15 and len(successes) >= 8


def test_committed_text_files_are_exactly_what_the_script_writes(tmp_path: Path) -> None:
    maker = _load_maker()
    maker.make_corpus(tmp_path)
    for name in maker.TEXT_FILES:
        assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes(), name
    for name in ("ok_second_sheet.xlsx", "wrong_sheet.xlsx"):
        regenerated = read_table(tmp_path / name, sheet="Items", required=REQUIRED).frame
        committed = read_table(CORPUS / name, sheet="Items", required=REQUIRED).frame
        assert regenerated.equals(committed)


@pytest.mark.parametrize("case", [c for c in CASES if "error" in c], ids=lambda c: c["file"])
def test_bad_file_fails_with_exact_one_line_message(case: dict[str, Any]) -> None:
    expected = case["error"].replace("{path}", str(CORPUS / case["file"]))
    with pytest.raises(DataError) as caught:
        _read(case)
    message = str(caught.value)
    assert message == expected
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)


def _same(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, float):
        return isinstance(actual, float) and math.isclose(actual, wanted)
    return type(actual) is type(wanted) and actual == wanted


@pytest.mark.parametrize("case", [c for c in CASES if "ok" in c], ids=lambda c: c["file"])
def test_good_file_loads_as_described(case: dict[str, Any]) -> None:
    table = _read(case)
    want = case["ok"]
    frame = table.frame
    if "encoding" in want:
        assert table.encoding == want["encoding"]
        assert table.encoding_detected
    if "separator" in want:
        assert table.separator == want["separator"]
        assert table.separator_detected
    assert table.sheet == want.get("sheet")
    assert frame.index.name == "row"
    assert frame.index.tolist() == want["rows"]
    if "ids" in want:
        assert frame["ID"].tolist() == want["ids"]
    if "columns" in want:
        assert frame.columns.tolist() == want["columns"]
    if "first_column" in want:
        assert frame.columns[0] == want["first_column"]
    for column, value in want.get("cells", {}).items():
        assert frame[column].iloc[0] == value
    for column, values in want.get("column_values", {}).items():
        actual = [v.item() if hasattr(v, "item") else v for v in frame[column].tolist()]
        assert len(actual) == len(values)
        assert all(_same(a, w) for a, w in zip(actual, values, strict=True)), (actual, values)


def test_forcing_the_encoding_reads_a_file_detection_rejects(tmp_path: Path) -> None:
    path = tmp_path / "utf16.csv"
    path.write_bytes("ID;Question;Answer;Ref_Answer\n1;Tükör;A;R\n".encode("utf-16-le"))
    with pytest.raises(DataError, match=r"line 1: byte 0x00 at offset 1 is a NUL"):
        read_table(path, required=REQUIRED)
    table = read_table(path, required=REQUIRED, encoding="utf-16-le")
    assert table.encoding == "utf-16-le"
    assert not table.encoding_detected
    assert table.frame["Question"].iloc[0] == "Tükör"


def test_forced_separator_is_reported_as_forced() -> None:
    table = read_table(CORPUS / "ok_hungarian.csv", required=REQUIRED, sep=";")
    assert table.separator == ";"
    assert not table.separator_detected


def test_forcing_utf8_on_a_bom_file_keeps_the_first_header() -> None:
    table = read_table(CORPUS / "ok_bom.csv", required=REQUIRED, encoding="utf-8")
    assert table.encoding == "utf-8" and table.frame.columns[0] == "ID"


def test_a_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"missing\.csv: file not found$"):
        read_table(tmp_path / "missing.csv")
