"""The one error type of the data layer: bad input, named by file, row and column."""

from __future__ import annotations

from pathlib import Path

from judgekit.types import UsageError


def column_letter(position: int) -> str:
    """Return the spreadsheet letter of a 0-based column position (0 -> A, 26 -> AA)."""
    letters = ""
    number = position + 1
    while number:
        number, remainder = divmod(number - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


def _one_line(text: str) -> str:
    """Keep user text on one line: line breaks are shown as the two characters backslash, n."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


class DataError(UsageError):
    """A table that cannot be used as given; the message is one line.

    The message reads ``<file>: row <r>, column <letter> '<header>': <problem>``, leaving out
    the parts that do not apply. Rows are numbered as a spreadsheet shows them: the header
    is row 1, so the first data row is row 2.

    Attributes:
        source: The file (or a label for an in-memory table) the problem is in.
        problem: What is wrong, in words.
        row: Spreadsheet row number, if the problem is in one row.
        column: Header of the column, if the problem is in one column.
        position: 0-based position of that column, shown as a spreadsheet letter.
    """

    def __init__(
        self,
        source: str | Path,
        problem: str,
        *,
        row: int | str | None = None,
        column: str | None = None,
        position: int | None = None,
    ) -> None:
        self.source = str(source)
        self.problem = problem
        self.row = row
        self.column = column
        self.position = position
        super().__init__(self._compose())

    def _compose(self) -> str:
        where: list[str] = []
        if self.row is not None:
            where.append(f"row {self.row}" if isinstance(self.row, int) else str(self.row))
        if self.column is not None or self.position is not None:
            parts = [column_letter(self.position)] if self.position is not None else []
            if self.column is not None:
                parts.append(f"'{_one_line(self.column)}'")
            where.append("column " + " ".join(parts))
        location = f": {', '.join(where)}" if where else ""
        return f"{self.source}{location}: {_one_line(self.problem)}"
