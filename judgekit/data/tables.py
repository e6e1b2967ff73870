"""Read the user's item tables from CSV, TSV and XLSX, whatever Excel saved them as.

Hungarian Excel reads and writes ``;``-separated text (UTF-8, a BOM is fine, or Windows-1250
when saved on Windows); other locales write ``,``. What judgekit itself writes follows one
convention, see :mod:`judgekit.data.frames`.

Encoding is found by a strict try-order (a BOM decides; else UTF-8; else Windows-1250, and
only if the text then has no control characters). The separator is the one of ``;``, tab,
``,`` that splits the header row into the most columns (ties: ``;`` first, tab first for
``.tsv``). Both choices are reported on the returned :class:`Table` and both can be forced.

Cells are kept as text. Canonical columns and the ID stay text exactly; only other columns
whose every non-empty cell is a number (``5``, ``-2``, ``3.5`` or the decimal comma ``3,5``)
become numeric, and not if any cell has a leading zero (``017`` stays text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from judgekit.data.columns import canonical_headers, validate_frame
from judgekit.data.delimited import (
    SEPARATORS,
    Records,
    decode_text,
    detect_separator,
    read_delimited,
    split_records,
)
from judgekit.data.errors import DataError, column_letter
from judgekit.data.packed import (
    ARROW_TEXT,
    PIECE,
    TEXT,
    PackedRecords,
    number_like,
    stripped,
    text_column,
)
from judgekit.data.xlsx import read_xlsx
from judgekit.types import CANONICAL_COLUMNS

DELIMITED_SUFFIXES = (".csv", ".tsv", ".txt")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_LEADING_ZERO = re.compile(r"[+-]?0\d")


@dataclass(frozen=True)
class Table:
    """A table read from a file, with what was found out about the file.

    Attributes:
        frame: The data; the index (named ``row``) holds spreadsheet row numbers (header = 1).
        path: The file read.
        encoding: Text encoding used (None for xlsx).
        separator: Field separator used (None for xlsx).
        sheet: Worksheet read (None for delimited text).
        encoding_detected: True if the encoding was detected rather than forced.
        separator_detected: True if the separator was detected rather than forced.
        renamed: ``(header, canonical column)`` for every header read under another name.
    """

    frame: pd.DataFrame
    path: Path
    encoding: str | None
    separator: str | None
    sheet: str | None
    encoding_detected: bool = False
    separator_detected: bool = False
    renamed: tuple[tuple[str, str], ...] = ()


def read_table(
    path: str | Path,
    *,
    required: Sequence[str] = (),
    aliases: Mapping[str, str] | None = None,
    id_column: str | None = "ID",
    encoding: str | None = None,
    sep: str | None = None,
    sheet: str | None = None,
    quoting: bool | None = None,
    allow_empty: bool = False,
    limit: int | None = None,
) -> Table:
    """Read, canonicalise and validate one table file.

    Args:
        path: A ``.csv``, ``.tsv``, ``.txt``, ``.xlsx`` or ``.xlsm`` file.
        required: Columns a rubric needs (its ``required_columns``). When given, the ID column
            is required too and no required cell may be empty.
        aliases: Extra ``{header: canonical column}`` pairs (matched ignoring case and spaces).
        id_column: Name of the ID column (after alias mapping); its cells are stripped and
            must be non-empty and unique. None reads a table whose rows have no own ID.
        encoding: Force a text encoding (e.g. ``"cp1250"``) instead of detecting it.
        sep: Force a separator instead of detecting it.
        sheet: Worksheet to read from an xlsx file (default: the first one).
        quoting: Whether ``"`` quotes fields (CSV rules). Default: yes, except for ``.tsv``
            files, whose cells are taken literally (tab-separated values have no quoting).
        allow_empty: Accept empty cells in required columns.
        limit: Read only the first ``limit`` rows: a delimited file is read from its start
            in growing pieces (1 MiB, then four times more) until they hold that many rows,
            a worksheet row by row until it has them, so a big file costs what the rows used
            cost; rows after them are not checked.

    Returns:
        The table. IDs are stripped of surrounding whitespace and kept as text.

    Raises:
        DataError: With a one-line message naming file, row and column; nothing is returned.
    """
    source = Path(path)
    suffix = source.suffix.lower()
    if source.is_dir():
        raise DataError(source, "is a folder; give the items file inside it")
    if not source.is_file():
        raise DataError(source, "file not found")
    records: Records | PackedRecords
    if suffix in EXCEL_SUFFIXES:
        sheet_name, records = read_xlsx(source, sheet, id_column, limit)
        used_encoding, used_sep = None, None
    elif suffix in DELIMITED_SUFFIXES:
        if sheet is not None:
            raise DataError(source, f"sheet '{sheet}' was asked for, but this is not an xlsx file")
        quoted = quoting if quoting is not None else suffix != ".tsv"
        records, used_encoding, used_sep = read_delimited(source, encoding, sep, quoted, limit)
        sheet_name = None
    else:
        raise DataError(source, f"unsupported file type '{suffix}' (use .csv, .tsv or .xlsx)")
    frame = _build_frame(source, records, aliases, id_column)
    header = records.header if isinstance(records, PackedRecords) else records[0][1]
    written = [h.strip() for h in header if h.strip()]
    renamed = tuple((h, c) for h, c in zip(written, frame.columns, strict=True) if h != c)
    if id_column is not None and (required or id_column in frame.columns):
        validate_frame(
            frame, required, source=str(source), id_column=id_column, allow_empty=allow_empty
        )
    return Table(
        frame=frame,
        path=source,
        encoding=used_encoding,
        separator=used_sep,
        sheet=sheet_name,
        encoding_detected=used_encoding is not None and encoding is None,
        separator_detected=used_sep is not None and sep is None,
        renamed=renamed,
    )


def _build_frame(
    source: Path,
    records: Records | PackedRecords,
    aliases: Mapping[str, str] | None,
    id_column: str | None,
) -> pd.DataFrame:
    if isinstance(records, PackedRecords):
        return _packed_frame(source, records, aliases, id_column)
    header = records[0][1]
    body = records[1:]
    keep: list[int] = []
    for position, name in enumerate(header):
        if name.strip():
            keep.append(position)
        elif any(position < len(r) and r[position].strip() for _, r in body):
            raise DataError(source, "the column has values but no header", row=1, position=position)
    if not body:
        raise DataError(source, "the header has no data rows below it", row=2)
    names = canonical_headers([header[p] for p in keep], source=str(source), aliases=aliases)
    index = pd.Index([n for n, _ in body], name="row")
    columns: dict[str, pd.Series] = {}
    for name, position in zip(names, keep, strict=True):
        if name not in CANONICAL_COLUMNS and name != id_column:
            cells = [r[position] if position < len(r) else "" for _, r in body]
            numeric = _maybe_numeric(pd.Series(cells, index=index, dtype=object))
            del cells
            if numeric.dtype != object:
                columns[name] = numeric
                continue
        text = _text_cells(body, position, strip=name == id_column)
        columns[name] = pd.Series(text, index=index, copy=False)
    return pd.DataFrame(columns, index=index, copy=False)


def _packed_frame(
    source: Path,
    packed: PackedRecords,
    aliases: Mapping[str, str] | None,
    id_column: str | None,
) -> pd.DataFrame:
    """:func:`_build_frame` of records read into Arrow columns: the same checks and columns."""
    keep: list[int] = []
    for position, name in enumerate(packed.header):
        if name.strip():
            keep.append(position)
        elif packed.has_text(position):
            raise DataError(source, "the column has values but no header", row=1, position=position)
    if not packed.numbers:
        raise DataError(source, "the header has no data rows below it", row=2)
    names = canonical_headers([packed.header[p] for p in keep], source=str(source), aliases=aliases)
    index = pd.Index(packed.numbers, name="row")
    columns: dict[str, pd.Series] = {}
    for name, position in zip(names, keep, strict=True):
        cells = packed.column(position)
        if name not in CANONICAL_COLUMNS and name != id_column and number_like(cells):
            numeric = _maybe_numeric(pd.Series(cells.to_pylist(), index=index, dtype=object))
            if numeric.dtype != object:
                columns[name] = numeric
                continue
        text = text_column(stripped(cells) if name == id_column else cells)
        columns[name] = pd.Series(text, index=index, copy=False)
    return pd.DataFrame(columns, index=index, copy=False)


def _text_cells(body: Records, position: int, *, strip: bool) -> Any:
    """One column's cells as ``astype(str)`` makes them (an ID column's stripped).

    In Arrow, each piece of :data:`PIECE` cells is copied and then dropped from the records,
    so the column's text is never held twice.
    """
    if not ARROW_TEXT:
        cells = [r[position] if position < len(r) else "" for _, r in body]
        return pd.array([c.strip() for c in cells] if strip else cells, dtype=object)
    pieces = []
    for start in range(0, len(body), PIECE):
        cells = []
        for _, record in body[start : start + PIECE]:
            cell = record[position] if position < len(record) else ""
            if position < len(record):
                record[position] = ""  # the Arrow copy holds it now
            cells.append(cell.strip() if strip else cell)
        pieces.append(pa.array(cells, type=pa.large_string()))
    return pd.array(pa.chunked_array(pieces, type=pa.large_string()), dtype=TEXT)


def _maybe_numeric(column: pd.Series) -> pd.Series:
    filled = [v.strip() for v in column if v.strip()]
    if not filled or any(_LEADING_ZERO.match(v) for v in filled):
        return column
    if not all(_NUMBER.fullmatch(v) for v in filled):
        return column
    stripped = column.str.strip().replace("", None)
    if all(_INTEGER.fullmatch(v) for v in filled):
        return stripped.astype("Int64")
    return stripped.str.replace(",", ".", regex=False).astype("float64")


def read_text_table(path: str | Path, *, what: str = "table") -> pd.DataFrame:
    """A delimited file judgekit reads back, decoded and split as tolerantly as an items file.

    The encoding (UTF-8 with or without a BOM, UTF-16, Windows-1250/1252) and the separator
    (``,`` ``;`` tab) are detected as :func:`read_table` detects them, so a table saved again
    by a spreadsheet in any locale reads the same. Headers are kept as written (no canonical
    names) and every cell is text.

    Raises:
        DataError: If the file is missing, empty or cannot be decoded (naming it and ``what``).
    """
    source = Path(path)
    if not source.is_file():
        raise DataError(source, f"{what} not found")
    text, _ = decode_text(source, source.read_bytes(), None)
    text = text.removeprefix("\ufeff")
    separator = detect_separator(source, text)
    records = split_records(
        source, text, separator, forced=False, quoted=source.suffix.lower() != ".tsv"
    )
    header = [name.strip() for name in records[0][1]]
    rows = [cells + [""] * (len(header) - len(cells)) for _, cells in records[1:]]
    return pd.DataFrame([row[: len(header)] for row in rows], columns=header, dtype=object)


__all__ = ["SEPARATORS", "Table", "column_letter", "read_table", "read_text_table"]
