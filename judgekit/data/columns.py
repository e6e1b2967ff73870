"""Canonical column names, header aliases, table validation and conversion to items."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.data.errors import DataError, column_letter
from judgekit.types import CANONICAL_COLUMNS, Item, UsageError

#: Headers seen in real files and what they mean. Keys are matched with :func:`alias_key`.
#: Note that the v1 riddle file's ``Justification`` column is the human *score* for reasoning,
#: so only ``Justification2`` (the model's reasoning text) maps to ``Reasoning``.
DEFAULT_ALIASES: Mapping[str, str] = {
    "item id": "ID",
    "Riddle in HUN": "Question",
    "riddle_text": "Question",
    "riddle": "Question",
    "prompt": "Question",
    "Kérdés": "Question",
    "model answer": "Answer",
    "response": "Answer",
    "Válasz": "Answer",
    "Reference answer": "Ref_Answer",
    "reference_answer": "Ref_Answer",
    "golden_answer": "Ref_Answer",
    "expected answer": "Ref_Answer",
    "Referencia válasz": "Ref_Answer",
    "Justification2": "Reasoning",
    "justification text": "Reasoning",
    "Indoklás": "Reasoning",
    "ideal_reasoning_text": "Ref_Reasoning",
    "reference reasoning": "Ref_Reasoning",
    "ideal reasoning": "Ref_Reasoning",
}

#: Columns that are not sent to the judge but give the analysis its context: ``Model`` is the
#: answering model (per-model and self-preference analyses). Headers may alias them too.
CONTEXT_COLUMNS: tuple[str, ...] = ("Model",)
#: Accepted spellings of the context columns (any case, spaces, ``_`` or ``-``).
CONTEXT_ALIASES: Mapping[str, str] = {
    "model": "Model",
    "answer model": "Model",
    "answering model": "Model",
}
#: Every column a header may be renamed to.
TABLE_COLUMNS: tuple[str, ...] = (*CANONICAL_COLUMNS, *CONTEXT_COLUMNS)

#: Headers that look like a rubric's optional column, by the column they probably mean.
LOOKALIKES: dict[str, tuple[str, ...]] = {
    "Ref_Answer": ("reference", "ref", "gold", "expected", "answerkey", "solution", "truth"),
    "Ref_Reasoning": ("refreasoning", "goldreasoning", "expectedreasoning"),
}


def column_map(pairs: Sequence[str]) -> dict[str, str]:
    """``--column-map HEADER=COLUMN`` pairs as read_table's aliases.

    Raises:
        UsageError: For a pair without ``=`` or a column that is not canonical.
    """
    aliases = {}
    for pair in pairs:
        header, sep, column = (part.strip() for part in pair.partition("="))
        if not sep or not header or column not in TABLE_COLUMNS:
            raise UsageError(
                f"--column-map {pair!r}: write HEADER=COLUMN, COLUMN one of "
                f"{', '.join(TABLE_COLUMNS)}"
            )
        aliases[header] = column
    return aliases


def check_lookalikes(headers: Iterable[str], optional: Sequence[str], source: object) -> None:
    """Refuse a header that looks like an optional column a rubric would send, unmapped.

    Args:
        headers: The table's headers (after alias mapping).
        optional: The rubric's optional columns.
        source: The file, for the message.

    Raises:
        UsageError: ``FILE: column 'Reference' would not be sent to the judge: did you mean
            `Ref_Answer`? pass --column-map Reference=Ref_Answer``.
    """
    present = [str(h) for h in headers]
    for column, names in LOOKALIKES.items():
        if column not in optional or column in present:
            continue
        for header in present:
            if alias_key(header) in names:
                raise UsageError(
                    f"{source}: column '{header}' would not be sent to the judge: did you "
                    f"mean `{column}`? pass --column-map {header}={column}"
                )


#: Zero-width and other invisible format characters a judge cannot copy back into an ID.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u202a-\u202e]")


def require_columns(
    frame: pd.DataFrame, columns: Iterable[str], what: str = "input table", *, rows: bool = False
) -> None:
    """Raise a one-line ``ValueError`` naming every column of ``columns`` that ``frame`` lacks.

    Args:
        frame: The table to check.
        columns: The columns it must have.
        what: How the message names the table.
        rows: Also refuse a table without rows (a figure of nothing).
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; present: {list(frame.columns)}")
    if rows and frame.empty:
        raise ValueError(f"{what}: the frame is empty, nothing to plot")


def alias_key(header: str) -> str:
    """Return the form headers are compared in: case-folded, without spaces, ``_`` or ``-``."""
    return re.sub(r"[\s_\-]+", "", str(header).casefold())


def _alias_lookup(aliases: Mapping[str, str] | None) -> dict[str, str]:
    lookup = {alias_key(name): name for name in TABLE_COLUMNS}
    for mapping in (DEFAULT_ALIASES, CONTEXT_ALIASES, aliases or {}):
        for alias, canonical in mapping.items():
            if canonical not in TABLE_COLUMNS:
                raise ValueError(
                    f"alias {alias!r} points to {canonical!r}, which is not one of "
                    f"{', '.join(TABLE_COLUMNS)}"
                )
            lookup[alias_key(alias)] = canonical
    return lookup


def canonical_headers(
    headers: Sequence[str], *, source: str, aliases: Mapping[str, str] | None = None
) -> list[str]:
    """Rename headers that are aliases of canonical columns; keep the others as written.

    Args:
        headers: Header cells in file order.
        source: File name (or label) used in error messages.
        aliases: Extra ``{header: canonical column}`` pairs; they win over the defaults.

    Returns:
        The new header list, same length and order.

    Raises:
        DataError: If two headers map onto the same canonical column, or a header repeats.
        ValueError: If an alias points to a name that is not a canonical column.
    """
    lookup = _alias_lookup(aliases)
    renamed: list[str] = []
    first_position: dict[str, int] = {}
    for position, header in enumerate(headers):
        name = lookup.get(alias_key(header), header.strip())
        if name in first_position:
            earlier = first_position[name]
            other = f"column {column_letter(earlier)} '{headers[earlier]}'"
            kind = "canonical column" if name in CANONICAL_COLUMNS else "column"
            problem = (
                f"maps to {kind} '{name}', as does {other}"
                if name in CANONICAL_COLUMNS or header.strip() != headers[earlier].strip()
                else f"repeats the header of {other}"
            )
            raise DataError(source, problem, row=1, column=header, position=position)
        first_position[name] = position
        renamed.append(name)
    return renamed


def is_empty(value: Any) -> bool:
    """Return True for a missing value or text that is only whitespace."""
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def row_label(frame: pd.DataFrame, position: int) -> int | str:
    """Name a row: its spreadsheet row if the frame came from a file, else its 1-based record."""
    if frame.index.name == "row":
        return int(frame.index[position])
    return f"record {position + 1}"


def validate_frame(
    frame: pd.DataFrame,
    required: Sequence[str],
    *,
    source: str,
    id_column: str = "ID",
    allow_empty: bool = False,
) -> None:
    """Check that a table can be judged with a rubric needing ``required`` columns.

    Checks, in this order: every required column (and the ID column) exists; every ID is
    non-empty and unique; no required cell is empty (unless ``allow_empty``).

    Args:
        frame: The table; if its index is named ``row`` it holds spreadsheet row numbers.
        required: Column names the rubric reads.
        source: File name (or label) used in error messages.
        id_column: Name of the ID column.
        allow_empty: Accept empty cells in required columns (IDs must still be filled).

    Raises:
        DataError: For the first problem found, naming row and column.
    """
    columns = [str(c) for c in frame.columns]
    needed = [id_column, *(c for c in required if c != id_column)]
    for name in needed:
        if name not in columns:
            raise DataError(
                source,
                f"required column '{name}' is missing (columns found: {', '.join(columns)}); "
                f"if one of them holds it, pass --column-map HEADER={name}",
                row=1 if frame.index.name == "row" else None,
            )
    id_position = columns.index(id_column)
    seen: dict[str, int] = {}
    for position, value in enumerate(frame[id_column].tolist()):
        text = str(value).strip()
        problem = "empty ID" if is_empty(value) else _id_problem(text, seen, frame)
        if problem:
            raise DataError(
                source,
                problem,
                row=row_label(frame, position),
                column=id_column,
                position=id_position,
            )
        seen[text] = position
    if allow_empty:
        return
    checked = [(columns.index(c), c) for c in needed if c != id_column]
    for position, record in enumerate(frame[[c for _, c in checked]].itertuples(index=False)):
        for (column_position, name), value in zip(checked, record, strict=True):
            if is_empty(value):
                raise DataError(
                    source,
                    "empty cell in a required column",
                    row=row_label(frame, position),
                    column=name,
                    position=column_position,
                )


def _id_problem(text: str, seen: dict[str, int], frame: pd.DataFrame) -> str:
    """What is wrong with one non-empty ID (empty when nothing): invisible or repeated."""
    invisible = _INVISIBLE.search(text)
    if invisible:
        return (
            f"ID {text!r} contains an invisible character (U+{ord(invisible.group()):04X}); "
            "delete it so the judge can write the ID back"
        )
    if text in seen:
        return f"duplicate ID '{text}' (also in {_row_words(row_label(frame, seen[text]))})"
    return ""


def _row_words(label: int | str) -> str:
    return f"row {label}" if isinstance(label, int) else label


def _plain(value: Any) -> Any:
    """Turn numpy/pandas scalars into plain Python values (missing -> None)."""
    if is_empty(value) and not isinstance(value, str):
        return None
    item = getattr(value, "item", None)
    return item() if callable(item) else value


#: Rows turned into Python records at a time (all at once would hold every cell twice).
_ROWS = 8192


def _records(frame: pd.DataFrame) -> Iterator[tuple[Any, dict[Any, Any]]]:
    """Each row's index label and ``to_dict("records")`` record, a few thousand at a time."""
    for start in range(0, len(frame), _ROWS):
        piece = frame.iloc[start : start + _ROWS]
        yield from zip(piece.index, piece.to_dict("records"), strict=True)


def items_from_frame(
    df: pd.DataFrame,
    columns: Sequence[str],
    *,
    id_column: str = "ID",
    source: str | None = None,
    allow_empty: bool = False,
    optional: Sequence[str] = (),
) -> list[Item]:
    """Turn a validated table into items, in row order.

    Args:
        df: The table (canonical column names).
        columns: The rubric's input columns; they become ``Item.fields`` as text.
        id_column: Column holding the item IDs (kept as text, surrounding spaces removed).
        source: File name or dataset label, used in errors and stored as ``meta["source"]``.
        allow_empty: Accept empty cells in ``columns`` (they become "").
        optional: Those of ``columns`` that may be absent or empty (a rubric's
            ``optional_columns``); present ones become fields, empty cells become "".

    Returns:
        One item per row. ``meta`` holds every other column as a plain Python value, plus
        ``source_row`` (the spreadsheet row) when the frame's index is named ``row``.

    Raises:
        DataError: As :func:`validate_frame`.
    """
    label = source or "<table>"
    required = [c for c in columns if c not in optional]
    validate_frame(df, required, source=label, id_column=id_column, allow_empty=allow_empty)
    field_names = [c for c in dict.fromkeys(columns) if c in required or c in df.columns]
    meta_names = [c for c in df.columns if c not in field_names and c != id_column]
    from_file = df.index.name == "row"
    items = []
    for index, record in _records(df):
        fields = {c: "" if is_empty(record[c]) else str(record[c]) for c in field_names}
        if id_column in fields:
            fields[id_column] = fields[id_column].strip()
        meta: dict[str, Any] = {str(c): _plain(record[c]) for c in meta_names}
        if from_file:
            meta["source_row"] = int(str(index))
        if source is not None:
            meta["source"] = source
        items.append(Item(id=str(record[id_column]).strip(), fields=fields, meta=meta))
    return items
