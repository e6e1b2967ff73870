"""Delimited text tables read into records: encoding and separator found, then split by ``csv``.

A whole file is read as a stream (:func:`read_delimited`): its encoding is chosen by decoding
it piece by piece, its separator from its first piece, and its records are split from the file
as ``csv`` reads it, so reading holds the records and never the file's bytes or its decoded
text as well (``io.StringIO`` over a text keeps four bytes per character). A file the stream
cannot vouch for (empty, binary, undecodable, a header longer than a piece) is read whole as
before, which reports its error; so both ways give the same records and the same errors.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

from judgekit.data.errors import DataError
from judgekit.data.packed import ARROW_TEXT, PackedRecords

#: Separators tried when none is given, in order of preference.
SEPARATORS: tuple[str, ...] = (";", "\t", ",")
_SEPARATOR_NAMES = {";": "';'", "\t": "tab", ",": "','", "|": "'|'"}
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
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: Records of a delimited file: (record number, header = 1, its cells); the header first.
Records = list[tuple[int, list[str]]]

#: First piece of a delimited file read for ``read_table(limit=...)``.
_HEAD_BYTES = 1 << 20


def read_delimited(
    source: Path, encoding: str | None, sep: str | None, quoted: bool, limit: int | None
) -> tuple[Records | PackedRecords, str, str]:
    """The header and data records of a delimited file (the first ``limit`` data records).

    A whole file is streamed (:func:`_streamed`) unless it must be read whole. With a limit,
    pieces of the file's start, cut after their last newline, are read until
    one holds more than ``limit`` data records (so the first ``limit`` are whole; the rest of
    the piece is never parsed); a piece too short for that, or whose cut splits a character,
    is read again larger. The whole file is read when it is not larger than the piece, and
    then every error is reported as usual.
    """
    total = source.stat().st_size
    if limit is None or total <= _HEAD_BYTES:
        stop = None if limit is None else limit + 1
        streamed = _streamed(source, encoding, sep, quoted, stop)
        if streamed is not None:
            return streamed
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
            text, used_encoding = decode_text(source, data, encoding)
            text = text.removeprefix("\ufeff")  # a BOM left by a forced "utf-8"
            used_sep = sep if sep is not None else detect_separator(source, text)
            records = split_records(
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


def decode_text(source: Path, data: bytes, encoding: str | None) -> tuple[str, str]:
    """The text of ``data`` and its encoding: ``encoding``, else the module's try-order.

    Raises:
        DataError: For empty or binary data, or data that does not decode (offset and line).
    """
    if not data.strip():
        raise DataError(source, "file is empty")
    if encoding is not None:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as error:
            raise _decode_error(source, data, error.start, f"is not valid {encoding}") from None
        except LookupError:
            raise DataError(source, f"unknown encoding '{encoding}'") from None
    for bom, name in _BOMS:
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


def detect_separator(source: Path, text: str) -> str:
    """The separator that splits the header record into the most columns.

    Ties go by :data:`SEPARATORS`' order (tab first for ``.tsv``).

    Raises:
        DataError: For an empty text or a header that no separator splits.
    """
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


def split_records(
    source: Path, text: str, sep: str, *, forced: bool, quoted: bool, stop: int | None = None
) -> Records:
    """The non-blank records (the header first), at most ``stop`` + 1 of them when given."""
    if not text.strip():
        raise DataError(source, "file is empty")
    lines = io.StringIO(text, newline="")
    records = _parse(source, lines, len(text), text, sep, forced=forced, quoted=quoted, stop=stop)
    assert isinstance(records, list)
    return records


def _parse(
    source: Path,
    lines: Iterable[str],
    size: int,
    head: str,
    sep: str,
    *,
    forced: bool,
    quoted: bool,
    stop: int | None,
    into: PackedRecords | None = None,
) -> Records | PackedRecords:
    """The records of ``lines``, as :func:`split_records` describes (``into`` these, if given).

    ``size`` bounds their characters; ``head`` is their start, holding their whole first record.
    A record of another width than the header's is reported once every record is read, as a
    quote left open is reported first.
    """
    # csv's default 128 KiB cell limit refuses long answers; no cell can exceed the whole text.
    csv.field_size_limit(max(csv.field_size_limit(), size))
    if quoted:
        reader = csv.reader(lines, delimiter=sep, strict=True)
    else:
        reader = csv.reader(lines, delimiter=sep, strict=True, quoting=csv.QUOTE_NONE)
    records: Records | PackedRecords = [] if into is None else into
    header: list[str] = []
    uneven: tuple[int, int] | None = None  # the first data record's number and width, if uneven
    number = 0
    try:
        for number, record in enumerate(reader, start=1):
            if number == 1:
                header = record
            elif not any(cell.strip() for cell in record):
                continue
            elif uneven is None and len(record) != len(header):
                uneven = (number, len(record))
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
    if forced and len(header) < 2:
        others = [s for s in SEPARATORS if s != sep and len(_first_record(head, s)) > 1]
        hint = f"; the header splits with {_SEPARATOR_NAMES[others[0]]}" if others else ""
        raise DataError(
            source,
            f"separator {_SEPARATOR_NAMES.get(sep, repr(sep))} gives a single column{hint}",
            row=1,
        )
    if uneven is not None:
        number, fields = uneven
        width = len(header)
        hint = f" (an unquoted {_SEPARATOR_NAMES.get(sep, repr(sep))} in a cell?)"
        raise DataError(
            source,
            f"has {fields} fields but the header has {width}" + (hint if fields > width else ""),
            row=number,
            position=min(fields, width),
        )
    return records


def _streamed(
    source: Path, encoding: str | None, sep: str | None, quoted: bool, stop: int | None
) -> tuple[Records | PackedRecords, str, str] | None:
    """:func:`read_delimited` of the whole file, streamed; None when it must be read whole.

    The encoding is the one :func:`decode_text` would choose (:func:`_stream_encoding`); the
    separator is detected on the first :data:`_HEAD_BYTES` characters, when every candidate's
    header record ends inside them (so it is the whole text's header record).
    """
    used_encoding = _stream_encoding(source, encoding)
    if used_encoding is None:
        return None
    with source.open(encoding=used_encoding, newline="") as handle:
        head = handle.read(_HEAD_BYTES).removeprefix("\ufeff")  # a BOM a forced utf-8 keeps
        whole = not handle.read(1)
    if not head.strip():
        return None
    if not whole and not all(_header_ends(head, s) for s in {*SEPARATORS, sep or ","}):
        return None
    used_sep = sep if sep is not None else detect_separator(source, head)
    size = source.stat().st_size  # bytes: never fewer than the characters they decode to
    packed = PackedRecords() if ARROW_TEXT and stop is None else None
    with source.open(encoding=used_encoding, newline="") as handle:
        records = _parse(
            source, _without_bom(handle), size, head, used_sep,
            forced=sep is not None, quoted=quoted, stop=stop, into=packed,
        )  # fmt: skip
    if isinstance(records, list) and stop is not None:
        records = records[:stop]  # as a limited read of a whole file keeps them
    return records, used_encoding, used_sep


def _header_ends(head: str, sep: str) -> bool:
    """Whether the first record ``csv`` reads from ``head`` ends before ``head`` does."""
    stream = io.StringIO(head, newline="")
    try:
        next(csv.reader(stream, delimiter=sep))
    except (csv.Error, StopIteration):
        return False
    return stream.tell() < len(head)


def _without_bom(handle: TextIO) -> Iterator[str]:
    first = handle.readline()
    yield first.removeprefix("\ufeff")
    yield from handle


def _stream_encoding(source: Path, encoding: str | None) -> str | None:
    """The encoding :func:`decode_text` chooses for the file, found piece by piece.

    None when :func:`decode_text` must see the whole file: it is blank, binary, holds a NUL (with
    no BOM) or does not decode; the error it then raises names the offset.
    """
    with source.open("rb") as handle:
        start = handle.read(_HEAD_BYTES)
    if not start.strip():
        return None
    if encoding is not None:
        return encoding if _decodes(source, encoding) else None
    for bom, name in _BOMS:
        if start.startswith(bom):
            return name if _decodes(source, name) else None
    if any(start.startswith(signature) for signature in BINARY_SIGNATURES):
        return None
    for name in ("utf-8", "cp1250"):
        if _decodes(source, name, plain=True):
            return name
    return None


def _decodes(source: Path, encoding: str, *, plain: bool = False) -> bool:
    """Whether the whole file decodes as ``encoding``.

    ``plain``: and holds no NUL (nor, in Windows-1250, a control character).
    """
    try:
        decoder = codecs.getincrementaldecoder(encoding)()
    except LookupError:
        return False
    with source.open("rb") as handle:
        while True:
            piece = handle.read(_HEAD_BYTES)
            if plain and b"\x00" in piece:
                return False
            try:
                text = decoder.decode(piece, final=not piece)
            except UnicodeDecodeError:
                return False
            if plain and encoding == "cp1250" and _CONTROL.search(text):
                return False
            if not piece:
                return True
