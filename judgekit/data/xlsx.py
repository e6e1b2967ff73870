"""Reading a worksheet of an xlsx file as text records, with plain-words layout errors."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from judgekit.data.errors import DataError


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def read_xlsx(
    source: Path, sheet: str | None, id_column: str | None = "ID", limit: int | None = None
) -> tuple[str, list[tuple[int, list[str]]]]:
    """The sheet's name and its non-blank rows as text, numbered as Excel shows them.

    With ``limit``, the sheet is read row by row only until the header and ``limit`` data
    rows are in (openpyxl still parses the workbook's shared-strings table when it opens it).

    Raises:
        DataError: For an unreadable workbook, a missing or empty sheet, a header below row 1,
            a first sheet without a table, or a formula cell without a saved value.
    """
    from zipfile import BadZipFile

    import openpyxl

    try:
        book = openpyxl.load_workbook(source, read_only=True, data_only=True)
    except (BadZipFile, OSError, KeyError, ValueError) as error:
        raise DataError(source, f"not a readable xlsx workbook ({error})") from None
    try:
        names = list(book.sheetnames)
        name = names[0] if sheet is None else sheet
        if name not in names:
            listed = ", ".join(f"'{n}'" for n in names)
            raise DataError(source, f"sheet '{name}' not found (the workbook has {listed})")
        rows, records = _read_rows(book[name], limit)
    finally:
        book.close()
    if not records or not any(c.strip() for c in records[0][1]):
        raise DataError(source, f"sheet '{name}' is empty")
    _check_layout(source, name, names if sheet is None else [], records, id_column)
    _check_formulas(source, name, rows)
    return name, records


def _read_rows(
    worksheet: Any, limit: int | None
) -> tuple[list[list[str]], list[tuple[int, list[str]]]]:
    """Every row read (as text) and the non-blank ones numbered, up to ``limit`` data rows."""
    rows: list[list[str]] = []
    records: list[tuple[int, list[str]]] = []
    for number, values in enumerate(worksheet.iter_rows(values_only=True), start=1):
        if limit is not None and len(records) > limit:
            break
        row = [_cell_text(v) for v in values]
        rows.append(row)
        if number == 1 or any(cell.strip() for cell in row):
            records.append((number, row))
    return rows, records


def _check_layout(
    source: Path,
    name: str,
    other_sheets: list[str],
    records: list[tuple[int, list[str]]],
    id_column: str | None,
) -> None:
    """Name the real header row, or the sheet that holds the table, instead of a later error."""
    widths = [sum(1 for cell in record if cell.strip()) for _, record in records]
    if max(widths) < 2 and len(other_sheets) > 1:
        others = ", ".join(f"'{n}'" for n in other_sheets if n != name)
        raise DataError(
            source, f"the first sheet '{name}' holds no table; the workbook also has {others}: "
            "pass --sheet NAME"
        )  # fmt: skip
    if len(records) == 1:
        rest = [n for n in other_sheets if n != name]
        hint = f"the items may be on another sheet: pass --sheet {rest[0]}" if rest else ""
        raise DataError(
            source, f"sheet '{name}' has no data rows below its header"
            + (f"; {hint}" if hint else ""), row=2
        )  # fmt: skip
    header = records[0][1]
    if id_column is None or id_column in (cell.strip() for cell in header):
        return
    for number, record in records[1:10]:
        if id_column in (cell.strip() for cell in record):
            raise DataError(
                source, f"the header ('{id_column}', ...) is on row {number}, not row 1; delete "
                "the rows above it", row=number
            )  # fmt: skip


def _check_formulas(source: Path, name: str, values: list[list[str]]) -> None:
    """Refuse formula cells without a saved value (files written by programs, not by Excel)."""
    if all(cell.strip() for row in values for cell in row):
        return
    import openpyxl

    book = openpyxl.load_workbook(source, read_only=True, data_only=False)
    try:
        for number, row in enumerate(book[name].iter_rows(values_only=True), start=1):
            if number > len(values):  # past the rows read (``read_xlsx(limit=...)``)
                break
            for position, cell in enumerate(row):
                saved = values[number - 1][position] if position < len(values[number - 1]) else ""
                if isinstance(cell, str) and cell.startswith("=") and not saved.strip():
                    raise DataError(
                        source, f"the formula {cell[:40]} has no saved value; open and save the "
                        "file in Excel (or paste values) first", row=number, position=position
                    )  # fmt: skip
    finally:
        book.close()
