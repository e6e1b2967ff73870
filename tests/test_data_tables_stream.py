"""A streamed read of an items file gives what reading it whole gives: table, choices, errors.

The stream (judgekit.data.delimited's ``_streamed``, Arrow columns in judgekit.data.packed) is
run with pieces of a few bytes and records, so that every boundary (a line end, a quoted line
break, a multi-byte character, a piece of records) falls inside the small files below; reading
whole is the same read with the stream turned off.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgekit.data.delimited as delimited
import judgekit.data.packed as packed
from judgekit.data import DataError, read_table

PLAIN = (
    "ID;Question;Answer;Score;Code;Notes\r\n"
    ' 007 ;Melyik?;"Első sor; ""idézet""\n17,5\r\nvége";3,5;017;ő ű\r\n'
    ";;;;;\r\n"
    "\r\n"
    "x2;Mi az?;Rubik-kocka;4;018;\r\n"
    'x3;"Hosszú ' + "á" * 40 + '";válasz;-2;019;"a,b"\r\n'
)

CASES: dict[str, tuple[bytes, str, dict[str, Any]]] = {
    "utf-8, BOM, CRLF, quoted breaks, blank records": (
        codecs.BOM_UTF8 + PLAIN.encode("utf-8"),
        ".csv",
        {},
    ),
    "Windows-1250": (PLAIN.encode("cp1250"), ".csv", {}),
    "UTF-16 with a BOM": (PLAIN.encode("utf-16"), ".csv", {}),
    "utf-8 forced on a BOM": (codecs.BOM_UTF8 + PLAIN.encode(), ".csv", {"encoding": "utf-8"}),
    "tab, unquoted": ('ID\tAnswer\tNum\n1\t"a"b\t\u00a05\n2\tc\t\u0665\n'.encode(), ".tsv", {}),
    "numbers, decimal comma": (b"ID,Answer,N,M\n1,a,1,2.5\n2,b,-3,\n", ".csv", {}),
    "headerless empty column": (b"ID,,Answer\n1,,a\n2, ,b\n", ".csv", {}),
    "aliases": ("item id;Válasz\nA;x\n".encode(), ".csv", {"aliases": {"Válasz": "Answer"}}),
    "limit": (b"ID,Answer\n1,a\n2,b\n\n3,c\n", ".csv", {"limit": 2}),  # within one piece
    "header longer than a piece": (
        ("ID,Answer," + ",".join(f"c{i}" for i in range(40)) + "\n1,a" + ",x" * 40 + "\n").encode(),
        ".csv",
        {},
    ),
    # errors
    "forced separator, one column": (PLAIN.encode(), ".csv", {"sep": ","}),
    "uneven record, then a quote left open": (
        b'ID,Answer\n1,a,extra\n2,b\n3,"open\n4,c\n',
        ".csv",
        {},
    ),
    "uneven record": (b"ID,Answer\n1,a\n2\n3,c,d\n", ".csv", {}),
    "a headerless column with values": (b"ID,,Answer\n1,,a\n2,z,b\n", ".csv", {}),
    "duplicate ID": (b"ID,Answer\n1,a\n 1 ,b\n", ".csv", {"required": ["Answer"]}),
    "NUL without a BOM": (b"ID,Answer\n1,a\x00\n", ".csv", {}),
    "neither UTF-8 nor Windows-1250": (b"ID,Answer\n1,\xe9\x01\n", ".csv", {}),
    "not valid as forced": (b"ID,Answer\n1,\xff\n", ".csv", {"encoding": "utf-8"}),
    "unknown encoding": (b"ID,Answer\n1,a\n", ".csv", {"encoding": "no-such"}),
    "blank": (b" \r\n\n", ".csv", {}),
    "a PNG named .csv": (b"\x89PNG\r\n\x1a\n" + b"0" * 10, ".csv", {}),
    "no data rows": (b"ID,Answer\n\n;\n", ".csv", {}),
}


#: Cases whose file the stream must leave to the whole read (it cannot vouch for them).
READ_WHOLE = {
    "header longer than a piece", "NUL without a BOM", "neither UTF-8 nor Windows-1250",
    "not valid as forced", "unknown encoding", "blank", "a PNG named .csv",
}  # fmt: skip


def _read(path: Path, streamed: bool, options: dict[str, Any], took: list[bool] | None = None):
    """What read_table gives (its table's parts) or the error it raises, as comparable values.

    ``took`` gets whether the stream read the file (it did not leave it to the whole read).
    """
    stream = delimited._streamed

    def noted(*args: Any) -> Any:
        result = None
        try:
            result = stream(*args)
        except DataError:
            result = "raised"  # the stream read far enough to find the error itself
            raise
        finally:
            if took is not None:
                took.append(result is not None)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(delimited, "_HEAD_BYTES", 48)
        patch.setattr(packed, "PIECE", 2)
        patch.setattr(delimited, "_streamed", noted if streamed else lambda *args: None)
        try:
            table = read_table(path, **options)
        except DataError as error:
            return "error", str(error)
    frame = table.frame
    return "table", (
        list(frame.columns), [repr(row) for row in frame.itertuples()], # NaN, NA: by repr
        frame.dtypes.astype(str).tolist(), frame.index.name,
        table.encoding, table.separator, table.encoding_detected, table.renamed,
    )  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_streamed_read_is_the_whole_read(tmp_path: Path, name: str) -> None:
    data, suffix, options = CASES[name]
    path = tmp_path / f"items{suffix}"
    path.write_bytes(data)
    whole, took = _read(path, False, options), []
    assert _read(path, True, options, took) == whole
    assert took == [name not in READ_WHOLE]
    if name == "limit":
        assert whole[0] == "table" and len(whole[1][1]) == 2


def test_a_big_file_is_read_as_a_stream(tmp_path: Path) -> None:
    """Past a piece, the records go to Arrow columns (not a list of Python strings)."""
    path = tmp_path / "items.csv"
    path.write_text("ID,Answer\n" + "".join(f"{i},válasz {i}\n" for i in range(50)), "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(delimited, "_HEAD_BYTES", 32)
        records, encoding, sep = delimited.read_delimited(path, None, None, True, None)
    assert (encoding, sep) == ("utf-8", ",")
    assert isinstance(records, packed.PackedRecords) == packed.ARROW_TEXT
    assert read_table(path).frame["Answer"].tolist() == [f"válasz {i}" for i in range(50)]


cells = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.tuples(cells, cells), min_size=1, max_size=8))
def test_any_text_reads_the_same_streamed(tmp_path: Path, rows: list[tuple[str, str]]) -> None:
    path = tmp_path / "items.csv"
    frame = pd.DataFrame(rows, columns=["Answer", "Other"])
    frame.insert(0, "ID", [f"i{n}" for n in range(len(rows))])
    frame.to_csv(path, index=False, sep=";")
    assert _read(path, True, {}) == _read(path, False, {})
