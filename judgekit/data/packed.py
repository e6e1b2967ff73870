"""Records of a big delimited file held as Arrow text columns while they are read.

``csv`` gives every cell as a Python string (its text plus about 50 bytes); a file's records
held that way are larger than the file, and the table built from them is a second copy.
:class:`PackedRecords` takes the records as they are read and turns every :data:`PIECE` of
them into one Arrow array per column, dropping their Python strings, so what reading holds is
about the file's text once. Only with pandas' Arrow-backed ``str`` (pandas 3; :data:`ARROW_TEXT`)
are the arrays the table's columns as they are; with object columns the records stay a list.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

#: What ``astype(str)`` makes of a text column: pandas 3's Arrow-backed ``str``, else object.
TEXT = pd.Series(["x"], dtype=object).astype(str).dtype
ARROW_TEXT = isinstance(TEXT, pd.StringDtype) and TEXT.storage == "pyarrow"
#: Records turned into Arrow at a time.
PIECE = 8192
#: Python's whitespace (``str.strip``) and decimal digits, as Arrow's RE2 writes them, around
#: what :func:`judgekit.data.tables` reads as a number: a column some cell of which does not
#: match cannot be numeric, and is never turned back into Python strings to be checked.
_SPACE = r"[\t-\r\x{1c}-\x{1f}\x{85}\p{Z}]*"
_NUMBER_LIKE = rf"^{_SPACE}(?:[+-]?\p{{Nd}}+(?:[.,]\p{{Nd}}+)?)?{_SPACE}$"
_TYPE = pa.large_string()


class PackedRecords:
    """The header record as text and the data records' cells as Arrow columns.

    Attributes:
        header: The first record's cells.
        numbers: Each data record's number (its spreadsheet row).
    """

    def __init__(self) -> None:
        self.header: list[str] = []
        self.numbers: list[int] = []
        self._started = False
        self._pending: list[list[str]] = []
        self._columns: list[list[pa.Array]] = []

    def __len__(self) -> int:
        return len(self.numbers) + self._started

    def append(self, entry: tuple[int, list[str]]) -> None:
        """Add the next record (the first is the header)."""
        number, record = entry
        if not self._started:
            self.header, self._started = record, True
            self._columns = [[] for _ in record]
            return
        self.numbers.append(number)
        self._pending.append(record)
        if len(self._pending) == PIECE:
            self._pack()

    def _pack(self) -> None:
        pending, self._pending = self._pending, []
        for position, chunks in enumerate(self._columns):
            cells = [r[position] if position < len(r) else "" for r in pending]
            chunks.append(pa.array(cells, type=_TYPE))

    def column(self, position: int) -> pa.ChunkedArray:
        """The cells at ``position`` of every data record (``""`` where a record is shorter)."""
        if self._pending:
            self._pack()
        return pa.chunked_array(self._columns[position], type=_TYPE)

    def has_text(self, position: int) -> bool:
        """Whether a data record has a cell at ``position`` that is not blank (``str.strip``)."""
        return any(
            cell.strip() for chunk in self.column(position).chunks for cell in chunk.to_pylist()
        )


def number_like(column: pa.ChunkedArray) -> bool:
    """Whether every cell may be a number or blank (a quick test before the exact one)."""
    return bool(pc.all(pc.match_substring_regex(column, _NUMBER_LIKE)).as_py() is not False)


def stripped(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The cells with surrounding whitespace removed as ``str.strip`` removes it."""
    chunks = [
        pa.array([c.strip() for c in chunk.to_pylist()], type=_TYPE) for chunk in column.chunks
    ]
    return pa.chunked_array(chunks, type=_TYPE)


def text_column(column: pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """The cells as the table's ``str`` column, sharing the Arrow arrays."""
    return pd.array(column, dtype=TEXT)
