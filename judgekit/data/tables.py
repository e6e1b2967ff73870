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

import codecs
import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgekit.data.columns import canonical_headers, validate_frame
from judgekit.data.errors import DataError, column_letter
from judgekit.data.xlsx import read_xlsx
from judgekit.types import CANONICAL_COLUMNS

#: Separators tried when none is given, in order of preference.
SEPARATORS: tuple[str, ...] = (";", "\t", ",")
DELIMITED_SUFFIXES = (".csv", ".tsv", ".txt")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
_SEPARATOR_NAMES = {";": "';'", "\t": "tab", ",": "','", "|": "'|'"}
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_LEADING_ZERO = re.compile(r"[+-]?0\d")
#: File signatures of binary files that sometimes get a .csv name by mistake.
BINARY_SIGNATURES: Mapping[bytes, str] = {
    b"\x89PNG\r\n\x1a\n": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF-": "a PDF document",
    b"PK\x03\x04": "a zip archive (an xlsx file? give it the .xlsx name)",
    b"\xd0\xcf\x11\xe0": "an old Excel/Office file (.xls; save it as .xlsx)",
    b"SQLite format 3\x00": "an SQLite database",
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


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
    if suffix in EXCEL_SUFFIXES:
        sheet_name, records = read_xlsx(source, sheet, id_column, limit)
        used_encoding, used_sep = None, None
    elif suffix in DELIMITED_SUFFIXES:
        if sheet is not None:
            raise DataError(source, f"sheet '{sheet}' was asked for, but this is not an xlsx file")
        quoted = quoting if quoting is not None else suffix != ".tsv"
        records, used_encoding, used_sep = _read_delimited(source, encoding, sep, quoted, limit)
        sheet_name = None
    else:
        raise DataError(source, f"unsupported file type '{suffix}' (use .csv, .tsv or .xlsx)")
    frame = _build_frame(source, records, aliases, id_column)
    written = [h.strip() for h in records[0][1] if h.strip()]
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


#: First piece of a delimited file read for ``read_table(limit=...)``.
_HEAD_BYTES = 1 << 20


def _read_delimited(
    source: Path, encoding: str | None, sep: str | None, quoted: bool, limit: int | None
) -> tuple[list[tuple[int, list[str]]], str, str]:
    """The header and data records of a delimited file (the first ``limit`` data records).

    With a limit, pieces of the file's start, cut after their last newline, are read until
    one holds more than ``limit`` data records (so the first ``limit`` are whole; the rest of
    the piece is never parsed); a piece too short for that, or whose cut splits a character,
    is read again larger. The whole file is read when it is not larger than the piece, and
    then every error is reported as usual.
    """
    total = source.stat().st_size
    size = _HEAD_BYTES
    while True:
        whole = limit is None or size >= total
        if whole:
            data = source.read_bytes()
        else:
            with source.open("rb") as handle:
                data = handle.read(size)
            data = data[: data.rfind(b"\n") + 1]
        try:
            text, used_encoding = _decode(source, data, encoding)
            text = text.removeprefix("\ufeff")  # a BOM left by a forced "utf-8"
            used_sep = sep if sep is not None else _detect_separator(source, text)
            records = _split_records(
                source, text, used_sep, forced=sep is not None, quoted=quoted,
                stop=None if limit is None else limit + 1,
            )  # fmt: skip
        except DataError:
            if whole:
                raise
            size *= 4
            continue
        if limit is None:
            return records, used_encoding, used_sep
        if whole or len(records) > limit + 1:
            return records[: limit + 1], used_encoding, used_sep
        size *= 4


def _decode(source: Path, data: bytes, encoding: str | None) -> tuple[str, str]:
    if not data.strip():
        raise DataError(source, "file is empty")
    if encoding is not None:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as error:
            raise _decode_error(source, data, error.start, f"is not valid {encoding}") from None
        except LookupError:
            raise DataError(source, f"unknown encoding '{encoding}'") from None
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(name), name
            except UnicodeDecodeError as error:
                # utf-8-sig counts offsets after the BOM it strips; utf-16 counts from byte 0
                offset = error.start + (len(bom) if name == "utf-8-sig" else 0)
                raise _decode_error(source, data, offset, f"is not valid {name}") from None
    for signature, kind in BINARY_SIGNATURES.items():
        if data.startswith(signature):
            raise DataError(source, f"is {kind}, not a text table; export it as .csv or .xlsx")
    if b"\x00" in data:
        nul = data.index(b"\x00")
        raise _decode_error(
            source, data, nul, "is a NUL (UTF-16 without a BOM?); pass encoding=..."
        )
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    neither = "is neither UTF-8 nor Windows-1250; pass encoding=... to force one"
    try:
        text = data.decode("cp1250")
    except UnicodeDecodeError as error:
        raise _decode_error(source, data, error.start, neither) from None
    control = _CONTROL.search(text)
    if control:  # Windows-1250 is one byte per character, so the offsets agree
        raise _decode_error(source, data, control.start(), neither)
    return text, "cp1250"


def _decode_error(source: Path, data: bytes, offset: int, what: str) -> DataError:
    line = data.count(b"\n", 0, offset) + 1
    return DataError(
        source,
        f"byte 0x{data[offset]:02x} at offset {offset} {what}",
        row=f"line {line}",
    )


def _first_record(text: str, sep: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    except csv.Error:
        return []


def _detect_separator(source: Path, text: str) -> str:
    if not text.strip().lstrip("\ufeff"):
        raise DataError(source, "file is empty")
    order = ("\t", ";", ",") if source.suffix.lower() == ".tsv" else SEPARATORS
    counts = {sep: len(_first_record(text, sep)) for sep in order}
    best = max(order, key=lambda sep: counts[sep])
    if counts[best] < 2:
        header = text.splitlines()[0][:60]
        raise DataError(
            source,
            f"the header '{header}' is a single column; separate columns with ';', tab or ',' "
            "(or pass sep=...)",
            row=1,
        )
    return best


def _split_records(
    source: Path, text: str, sep: str, *, forced: bool, quoted: bool, stop: int | None = None
) -> list[tuple[int, list[str]]]:
    """The non-blank records (the header first), at most ``stop`` + 1 of them when given."""
    if not text.strip():
        raise DataError(source, "file is empty")
    stream = io.StringIO(text, newline="")
    # csv's default 128 KiB cell limit refuses long answers; no cell can exceed the whole text.
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    if quoted:
        reader = csv.reader(stream, delimiter=sep, strict=True)
    else:
        reader = csv.reader(stream, delimiter=sep, strict=True, quoting=csv.QUOTE_NONE)
    records: list[tuple[int, list[str]]] = []
    number = 0
    try:
        for number, record in enumerate(reader, start=1):
            if number == 1 or any(cell.strip() for cell in record):
                records.append((number, record))
            if stop is not None and len(records) > stop:
                break  # what follows is never parsed (a piece may end inside a quoted cell)
    except csv.Error as error:
        raise DataError(
            source,
            f"a quoted cell is not closed properly ({error}; reading stopped at line "
            f"{reader.line_num})",
            row=number + 1,
        ) from None
    if forced and len(records[0][1]) < 2:
        others = [s for s in SEPARATORS if s != sep and len(_first_record(text, s)) > 1]
        hint = f"; the header splits with {_SEPARATOR_NAMES[others[0]]}" if others else ""
        raise DataError(
            source,
            f"separator {_SEPARATOR_NAMES.get(sep, repr(sep))} gives a single column{hint}",
            row=1,
        )
    width = len(records[0][1])
    for number, record in records[1:]:
        if len(record) != width:
            position = min(len(record), width)
            hint = f" (an unquoted {_SEPARATOR_NAMES.get(sep, repr(sep))} in a cell?)"
            raise DataError(
                source,
                f"has {len(record)} fields but the header has {width}"
                + (hint if len(record) > width else ""),
                row=number,
                position=position,
            )
    return records


def _build_frame(
    source: Path,
    records: list[tuple[int, list[str]]],
    aliases: Mapping[str, str] | None,
    id_column: str | None,
) -> pd.DataFrame:
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
    data = {
        name: [r[p] if p < len(r) else "" for _, r in body]
        for name, p in zip(names, keep, strict=True)
    }
    frame = pd.DataFrame(data, index=pd.Index([n for n, _ in body], name="row"), dtype=object)
    for name in names:
        if name == id_column:
            frame[name] = frame[name].str.strip()
        if name not in CANONICAL_COLUMNS and name != id_column:
            frame[name] = _maybe_numeric(frame[name])
        if frame[name].dtype == object:
            frame[name] = frame[name].astype(str)
    return frame


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
    text, _ = _decode(source, source.read_bytes(), None)
    text = text.removeprefix("\ufeff")
    separator = _detect_separator(source, text)
    records = _split_records(
        source, text, separator, forced=False, quoted=source.suffix.lower() != ".tsv"
    )
    header = [name.strip() for name in records[0][1]]
    rows = [cells + [""] * (len(header) - len(cells)) for _, cells in records[1:]]
    return pd.DataFrame([row[: len(header)] for row in rows], columns=header, dtype=object)


__all__ = ["SEPARATORS", "Table", "column_letter", "read_table", "read_text_table"]
