"""Tables the tool writes, and reading them back: one convention for every output.

The convention (README, "Files judgekit writes"): ``.csv`` is comma-separated UTF-8 without a
BOM, CRLF line ends, ``"``-quoting where a cell needs it (RFC 4180), an empty cell for a missing
value, no index column; ``.tsv`` is the same with tabs; ``.parquet`` keeps the column types.
Every file goes through :func:`judgekit.data.atomic.atomic_write`. :func:`read_frame` reads all
three, and also the ``;``-separated CSV files of earlier versions (the separator is detected).

Cells are written as they are: a reply or an answer starting with ``=``, ``+``, ``-`` or ``@``
is kept, since judgekit and every analysis read these files back and an escaped cell would no
longer be the reply that was scored. A spreadsheet may run such a cell as a formula, so writing
one warns (:class:`SpreadsheetFormulaWarning`, Python shows each once) with what to do instead.
"""

from __future__ import annotations

import csv
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from judgekit.data.atomic import atomic_write
from judgekit.data.errors import DataError

#: The field separator of every ``.csv`` file judgekit writes.
CSV_SEPARATOR = ","
#: File types a table can be written as and read back from.
TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".parquet")
#: Columns always read as text (IDs such as ``017`` keep their leading zero).
TEXT_COLUMNS: tuple[str, ...] = ("ID", "item_id", "labeller", "note")
#: What a spreadsheet reads as the start of a formula (OWASP's "CSV injection" list).
_FORMULA_START = re.compile(r"[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class SpreadsheetFormulaWarning(UserWarning):
    """A text cell of a written CSV/TSV starts like a spreadsheet formula (kept as it is)."""


def formula_cells(frame: pd.DataFrame) -> tuple[int, str | None]:
    """How many text cells start like a formula (``= + - @``, tab, CR), and the first's column.

    A cell that is a plain number (``-1``, ``+0.5``) is no formula and is not counted.

    >>> formula_cells(pd.DataFrame({"a": ["=1+1", "-2", "ok"], "b": ["@SUM(A1)", "x", "-x"]}))
    (3, 'a')
    """
    count, first = 0, None
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and not isinstance(values.dtype, pd.StringDtype):
            continue
        text = values.dropna().astype(str)  # a number in an object column reads as one
        suspect = text[text.str.match(_FORMULA_START) & ~text.str.fullmatch(_NUMBER)]
        if len(suspect):
            count += len(suspect)
            first = first if first is not None else str(column)
    return count, first


def table_suffix(path: str | Path) -> str:
    """The lower-case suffix of a table path, checked against :data:`TABLE_SUFFIXES`.

    Raises:
        DataError: For any other suffix (one line naming the file and the accepted types).
    """
    suffix = Path(path).suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError(path, f"a table file must end in {', '.join(TABLE_SUFFIXES)}")
    return suffix


def write_table(frame: pd.DataFrame, path: str | Path, *, encoding: str = "utf-8") -> Path:
    """Write ``frame`` in the file convention above, atomically, without the index.

    Args:
        frame: The table.
        path: Destination ``.csv``, ``.tsv`` or ``.parquet`` file.
        encoding: Text encoding of a delimited file (``"utf-8-sig"`` adds the BOM some Excel
            versions want).

    Returns:
        The destination path.
    """
    if table_suffix(path) == ".parquet":
        return atomic_write(path, lambda staged: frame.to_parquet(staged, index=False))
    formulas, column = formula_cells(frame)
    if formulas:
        warnings.warn(
            f"{path}: {formulas} text cell(s) start with = + - or @ (first in column "
            f"{column!r}), which a spreadsheet may run as formulas; they are written as they "
            "are: import the file with its columns as text, or read the .parquet",
            SpreadsheetFormulaWarning,
            stacklevel=2,
        )
    separator = "\t" if table_suffix(path) == ".tsv" else CSV_SEPARATOR

    def write(staged: Path) -> None:  # streamed: a table of 10^6 rows is never one string
        with staged.open("w", encoding=encoding, newline="") as handle:
            # CRLF as RFC 4180 and Excel have it; it also makes the writer quote a lone "\r".
            writer = csv.writer(handle, delimiter=separator, lineterminator="\r\n")
            writer.writerow([str(c) for c in frame.columns])
            cells = []  # column by column: a missing value (None, NaN, NA) is an empty cell
            for column in range(frame.shape[1]):
                values = frame.iloc[:, column].to_numpy(dtype=object)
                cells.append(np.where(pd.isna(values), "", values))
            writer.writerows(zip(*cells, strict=True))

    return atomic_write(path, write)


def _separator(source: Path, header: str) -> str:
    """Tab for ``.tsv``; else whichever of ``,`` ``;`` tab splits the header most (ties: ``,``)."""
    if source.suffix.lower() == ".tsv":
        return "\t"
    counts = {sep: len(next(csv.reader([header], delimiter=sep), [])) for sep in (",", ";", "\t")}
    return max(counts, key=lambda sep: counts[sep])


def read_frame(
    path: str | Path,
    *,
    required: Sequence[str] = (),
    what: str = "table",
    skip: Sequence[str] = (),
) -> pd.DataFrame:
    """Read a table judgekit wrote (``.csv``, ``.tsv`` or ``.parquet``), with its types.

    Args:
        path: The file.
        required: Columns it must have (those in ``skip`` are not checked).
        what: What the table is, for messages (``"judgments table"``).
        skip: Columns not to load (never parsed into memory from Parquet).

    Raises:
        DataError: If the file is missing, of another type, unreadable or lacks a column.
    """
    source = Path(path)
    suffix = table_suffix(source)
    if not source.is_file():
        raise DataError(source, f"{what} not found")
    try:
        if suffix == ".parquet":
            columns = [c for c in pq.read_schema(source).names if c not in skip] if skip else None
            frame = pd.read_parquet(source, columns=columns)
        else:
            with source.open(encoding="utf-8-sig", newline="") as handle:
                header = handle.readline()
            frame = pd.read_csv(  # from the file: a text copy of it would cost 4 bytes a char
                source,
                encoding="utf-8-sig",
                sep=_separator(source, header),
                dtype={column: str for column in TEXT_COLUMNS},
                keep_default_na=False,
                na_values=[""],
                usecols=(lambda column: column not in skip) if skip else None,
            )
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise DataError(source, f"cannot read this {what}: {error}".splitlines()[0]) from None
    missing = [c for c in required if c not in frame.columns and c not in skip]
    if missing:
        raise DataError(source, f"{what} lacks column(s) {missing}")
    return frame
