"""Reading and writing tables, aliases, validation and items (judgekit.data)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.data import (
    DEFAULT_ALIASES,
    TABLE_SUFFIXES,
    DataError,
    alias_key,
    canonical_headers,
    items_from_frame,
    read_frame,
    read_table,
    validate_frame,
    write_table,
)
from judgekit.data.errors import column_letter
from judgekit.types import CANONICAL_COLUMNS, Item

TRICKY_ANSWER = 'Első sor; "idézet"\n17,5\n18,0\r\nvége;'

# Cell text: any printable text, including separators, quotes and line breaks.
cell_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
).filter(lambda s: s.strip() != "")
ids = st.text(alphabet="0123456789ABCxyz-_", min_size=1, max_size=6)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_write_then_read_returns_the_same_text(tmp_path: Path, data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=1, max_value=6))
    row_ids = data.draw(st.lists(ids, min_size=n, max_size=n, unique=True))
    frame = pd.DataFrame(
        {
            "ID": row_ids,
            "Question": data.draw(st.lists(cell_text, min_size=n, max_size=n)),
            "Answer": data.draw(st.lists(cell_text, min_size=n, max_size=n)),
        }
    )
    frame.loc[0, "Answer"] = TRICKY_ANSWER
    path = tmp_path / "round.csv"
    write_table(frame, path)
    table = read_table(path, required=["Question", "Answer"], sep=",")
    assert table.frame["ID"].tolist() == row_ids
    assert table.frame["Question"].tolist() == frame["Question"].tolist()
    assert table.frame["Answer"].tolist() == frame["Answer"].tolist()
    assert table.frame.index.tolist() == list(range(2, n + 2))


def test_detection_finds_separator_and_encoding_of_written_file(tmp_path: Path) -> None:
    frame = pd.DataFrame({"ID": ["017"], "Question": ["Mi ez; az?"], "Answer": [TRICKY_ANSWER]})
    for encoding in ("utf-8", "utf-8-sig", "cp1250"):
        path = write_table(frame, tmp_path / f"{encoding}.csv", encoding=encoding)
        table = read_table(path, required=["Question", "Answer"])
        assert (table.encoding, table.separator) == (encoding, ",")
        assert table.frame["ID"].tolist() == ["017"]
        assert table.frame["Answer"].iloc[0] == TRICKY_ANSWER


def test_write_table_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    frame = pd.DataFrame({"ID": ["1"], "Question": ["q"]})
    write_table(frame, tmp_path / "t.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    not_in_cp1250 = pd.DataFrame({"ID": ["1"], "Question": ["日本"]})
    with pytest.raises(UnicodeEncodeError):
        write_table(not_in_cp1250, tmp_path / "t.csv", encoding="cp1250")
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    assert (tmp_path / "t.csv").read_bytes() == b"ID,Question\r\n1,q\r\n"


def test_xlsx_numbers_become_text_in_canonical_columns(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["ID", "Question", "Answer", "Score"])
    sheet.append([17, "Mikor?", 1848, 4.5])
    sheet.append(["018", "Hol?", "Pest", 3])
    book.save(tmp_path / "t.xlsx")
    table = read_table(tmp_path / "t.xlsx", required=["Question", "Answer"])
    assert table.sheet == "Sheet"
    assert table.encoding is None and table.separator is None
    assert table.frame["ID"].tolist() == ["17", "018"]
    assert table.frame["Answer"].tolist() == ["1848", "Pest"]
    assert table.frame["Score"].tolist() == [4.5, 3.0]


def test_alias_key_ignores_case_spaces_and_underscores() -> None:
    assert alias_key(" Reference  answer ") == alias_key("reference_answer") == "referenceanswer"


def test_default_aliases_cover_the_original_study_headers() -> None:
    headers = ["ID", "Riddle in HUN", "Answer", "Reference answer", "Justification2",
               "ideal_reasoning_text", "Justification", "Topic"]  # fmt: skip
    renamed = canonical_headers(headers, source="x.csv")
    assert renamed == ["ID", "Question", "Answer", "Ref_Answer", "Reasoning", "Ref_Reasoning",
                       "Justification", "Topic"]  # fmt: skip
    assert set(DEFAULT_ALIASES.values()) <= set(CANONICAL_COLUMNS)


def test_user_aliases_win_and_must_name_canonical_columns() -> None:
    renamed = canonical_headers(["Azonosító", "Felelet"], source="x.csv",
                                aliases={"azonosító": "ID", "FELELET": "Answer"})  # fmt: skip
    assert renamed == ["ID", "Answer"]
    with pytest.raises(ValueError, match="not one of"):
        canonical_headers(["x"], source="x.csv", aliases={"x": "Score"})


def test_user_alias_collision_names_both_columns(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("ID;Kérdés;Question\n1;a;b\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_table(path)
    assert str(caught.value) == (
        f"{path}: row 1, column C 'Question': maps to canonical column 'Question', "
        "as does column B 'Kérdés'"
    )


def test_items_from_frame_splits_fields_and_meta(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text(
        "ID;Question;Answer;Model;Human_Accuracy\n 017 ;Q1;A1;m-a;5\n18;Q2;A2;m-b;\n",
        encoding="utf-8",
    )
    frame = read_table(path, required=["Question", "Answer"]).frame
    items = items_from_frame(frame, ["Question", "Answer"], source="items.csv")
    assert items[0] == Item(
        id="017",
        fields={"Question": "Q1", "Answer": "A1"},
        meta={"Model": "m-a", "Human_Accuracy": 5, "source_row": 2, "source": "items.csv"},
    )
    assert items[1].meta["Human_Accuracy"] is None
    assert type(items[0].meta["Human_Accuracy"]) is int


def test_items_from_frame_validates_in_memory_frames() -> None:
    frame = pd.DataFrame({"ID": ["1", "2", "1"], "Answer": ["a", "b", "c"]})
    with pytest.raises(DataError) as caught:
        items_from_frame(frame, ["Answer"], source="memory")
    assert (
        str(caught.value) == "memory: record 3, column A 'ID': duplicate ID '1' (also in record 1)"
    )
    frame = pd.DataFrame({"ID": ["1", "2"], "Answer": ["a", None]})
    with pytest.raises(DataError, match=r"^<table>: record 2, column B 'Answer': empty cell"):
        items_from_frame(frame, ["Answer"])
    items = items_from_frame(frame, ["Answer"], allow_empty=True)
    assert items[1].fields == {"Answer": ""}
    with pytest.raises(DataError, match="required column 'Question' is missing"):
        items_from_frame(frame, ["Question"])


def test_optional_columns_may_be_absent_or_empty() -> None:
    frame = pd.DataFrame({"ID": ["1", "2"], "Question": ["q1", "q2"], "Context": ["c", ""]})
    items = items_from_frame(
        frame, ["Question", "Context", "Answer"], optional=["Context", "Answer"]
    )
    assert [i.fields for i in items] == [
        {"Question": "q1", "Context": "c"},
        {"Question": "q2", "Context": ""},
    ]
    with pytest.raises(DataError, match="empty cell"):
        items_from_frame(frame, ["Question", "Context"])


def test_validate_frame_checks_in_documented_order() -> None:
    frame = pd.DataFrame({"ID": ["", "1"], "Answer": [None, "x"]})
    with pytest.raises(DataError, match="empty ID"):  # IDs before cells
        validate_frame(frame, ["Answer"], source="m")


def test_error_message_stays_on_one_line() -> None:
    error = DataError("f.csv", "bad\nthing", row=3, column="Multi\nline", position=27)
    assert str(error) == "f.csv: row 3, column AB 'Multi\\nline': bad\\nthing"
    assert (column_letter(0), column_letter(25), column_letter(26), column_letter(701)) == (
        "A", "Z", "AA", "ZZ"
    )  # fmt: skip


def test_non_numeric_extra_columns_stay_text(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("ID;Question;Label;Mixed\n1;q;5;5\n2;q;3;n/a\n", encoding="utf-8")
    frame = read_table(path).frame
    assert frame["Label"].tolist() == [5, 3]
    assert frame["Mixed"].tolist() == ["5", "n/a"]


def test_a_200_kb_cell_loads_from_csv(tmp_path: Path) -> None:
    long_answer = "szó " * 50_000  # 200 KB, beyond csv's default field size limit
    frame = pd.DataFrame({"ID": ["1", "2"], "Question": ["q1", "q2"], "Answer": [long_answer, "a"]})
    path = write_table(frame, tmp_path / "big.csv")
    table = read_table(path, required=["Question", "Answer"])
    assert table.frame["Answer"].iloc[0] == long_answer
    assert read_frame(path)["Answer"].iloc[0] == long_answer


def test_written_files_honour_the_umask(tmp_path: Path) -> None:
    frame = pd.DataFrame({"ID": ["1"], "score": [2.0]})
    previous = os.umask(0o022)
    try:
        paths = [write_table(frame, tmp_path / f"t{suffix}") for suffix in TABLE_SUFFIXES]
    finally:
        os.umask(previous)
    assert {oct(path.stat().st_mode & 0o777) for path in paths} == {oct(0o644)}


def test_every_table_the_tool_writes_reads_back_with_its_values(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"item_id": ["017", "2"], "score": [3.0, float("nan")], "note": ["a;b", ""]}
    )
    for suffix in TABLE_SUFFIXES:
        back = read_frame(write_table(frame, tmp_path / f"t{suffix}"))
        assert back["item_id"].tolist() == ["017", "2"]
        assert back["score"].iloc[0] == 3.0 and pd.isna(back["score"].iloc[1])
        assert back["note"].iloc[0] == "a;b"


def test_earlier_semicolon_tables_still_read(tmp_path: Path) -> None:
    (tmp_path / "old.csv").write_text("item_id;score\r\n017;3\r\n", encoding="utf-8")
    assert read_frame(tmp_path / "old.csv")["item_id"].tolist() == ["017"]


def test_unknown_table_type_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"must end in \.csv, \.tsv, \.parquet"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.xls")


def test_limit_reads_only_the_rows_it_needs(tmp_path: Path) -> None:
    """A 20 MB file read with limit=10 costs a 1 MiB piece, not the file (quoted newlines too)."""
    import tracemalloc

    answer = 'line one\nline two, "quoted"; ' + "x" * 2000
    rows = [f'{i};"Question {i}?";"{answer.replace(chr(34), chr(34) * 2)}"' for i in range(9000)]
    path = tmp_path / "big.csv"
    path.write_text("ID;Question;Answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert path.stat().st_size > 18_000_000
    tracemalloc.start()
    head = read_table(path, required=["Question", "Answer"], limit=10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    whole = read_table(path, required=["Question", "Answer"])
    pd.testing.assert_frame_equal(head.frame, whole.frame.head(10))
    assert peak < 12_000_000, f"peak {peak / 1e6:.0f} MB"
    # a limit past the end reads the whole file; a cut inside a quoted cell is read again
    assert len(read_table(path, limit=10_000).frame) == 9000
    assert len(read_table(path, limit=460).frame) == 460


def test_limit_reads_a_worksheet_only_up_to_its_rows(tmp_path: Path) -> None:
    """An xlsx sheet read with limit=10 stops after row 11: memory of ten rows, not 3,000."""
    import tracemalloc

    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("items")
    sheet.append(["ID", "Question", "Answer"])
    for i in range(3000):
        sheet.append([f"Q{i:04d}", f"Question {i}?", f"{i} " + "válasz " * 400])
    sheet.append(["Q0001", "a duplicate ID far below the rows read", "x"])
    path = tmp_path / "big.xlsx"
    book.save(path)
    tracemalloc.start()
    head = read_table(path, required=["Question", "Answer"], limit=10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert head.frame["ID"].tolist() == [f"Q{i:04d}" for i in range(10)]
    assert peak < 3_000_000, f"peak {peak / 1e6:.1f} MB"
    with pytest.raises(DataError, match="Q0001"):  # the whole sheet is read, and checked
        read_table(path, required=["Question", "Answer"])
    assert len(read_table(path, required=["Question"], limit=2999).frame) == 2999
