"""Reading ``ID,score`` lines: the shapes a judge writes one score per item in plain text.

A line is a score line only if, after removing list markers, table pipes and emphasis, it is
*just* an ID, one separator and a number (optionally ``/max`` and a worded comment such as
``(partially correct)``). IDs are found two ways: an expected ID the line starts with (so IDs
with spaces, accents or slashes such as ``Q 1``, ``kérdés-1``, ``4/a`` are read), else any
word-like token (a foreign ID). A header naming the columns (``ID,Score`` or ``Score,ID``, in
a table or on its own line) sets the column order; rows are never read against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judgekit.formats.common import NUMBER_PATTERN, text_number
from judgekit.formats.ids import IdMatcher
from judgekit.formats.tolerances import ToleranceLog

_ID = r"(?P<id>\w(?:[\w.\-/]*\w)?)"
_SEP = r"(?P<sep>\s*[,;:=|\t]\s*|\s+[-–—]\s+|\s*(?:->|→)\s*|\s+)"
_COMMENT = r"(?P<comment>\s*\([^()\d\n]*\)|\s+[-–—]\s+[^\W\d][^\d\n]*)?"
_SCORE = (
    rf"(?P<score>{NUMBER_PATTERN})(?:\s*/\s*(?P<den>\d+))?(?P<trail>\s*[,;]+(?=\s*$))?{_COMMENT}"
)
_PLAIN = re.compile(rf"{_ID}{_SEP}{_SCORE}")
_PREFIXED = re.compile(rf"(?:(?:id|item|row)\s*[:#.]?\s*|#\s*){_ID}{_SEP}{_SCORE}", re.I)
_LABELLED = re.compile(
    rf"(?:id|item|row)\s*[:#]?\s*{_ID}\s*[,;]\s*(?:score|rating|grade)\s*[:=]\s*{_SCORE}", re.I
)
_TAIL = re.compile(rf"{_SEP}{_SCORE}")
_SCORE_FIRST = re.compile(rf"(?P<score>{NUMBER_PATTERN}){_SEP}{_ID}")
_WORDS = r"[^\W\d][\w ]*?"
_HEADER = re.compile(rf"(?P<a>{_WORDS}|#)\s*[,;:|\t]\s*(?P<b>{_WORDS}|#)\s*")
_ID_WORDS = frozenset({"id", "item", "item id", "itemid", "item_id", "row", "#", "question"})
_SCORE_WORDS = frozenset(
    {"score", "scores", "rating", "grade", "points", "value", "accuracy", "reasoning", "grammar"}
)
#: Words judges put before a number that are labels, never foreign IDs (``Score: 5``).
LABEL_WORDS = frozenset(
    {"score", "scores", "rating", "total", "id", "accuracy", "justification", "grammar", "row"}
)
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")
_LIST_MARKER = re.compile(r"(?:[-*•·+]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*+|__|`+")
_SEPARATOR_TOLERANCE = {
    ";": "separator_semicolon",
    ":": "separator_colon",
    "=": "separator_equals",
    "|": "separator_pipe",
    "-": "separator_dash",
    "–": "separator_dash",
    "—": "separator_dash",
    "->": "separator_arrow",
    "→": "separator_arrow",
}


@dataclass(frozen=True)
class LineScore:
    """One ``ID, score`` pair read from a line (the ID as written)."""

    written_id: str
    item_id: str | None
    value: float
    out_of: int | None


@dataclass
class Columns:
    """The column order a header set: score first or ID first; table cells by position."""

    score_first: bool = False
    id_cell: int | None = None
    score_cell: int | None = None


def table_rule(line: str) -> bool:
    """Whether a line is a markdown table's ``|---|---|`` rule."""
    return bool(_TABLE_RULE.fullmatch(line))


def read_header(line: str, columns: Columns, log: ToleranceLog) -> bool:
    """If ``line`` is a header naming an ID and a score column, set ``columns`` from it."""
    cells = _cells(line)
    if cells is not None:
        names = [_EMPHASIS.sub("", c).strip().casefold() for c in cells]
    else:
        match = _HEADER.fullmatch(_EMPHASIS.sub("", line))
        if match is None:
            return False
        names = [match["a"].strip().casefold(), match["b"].strip().casefold()]
    id_cells = [n for n, name in enumerate(names) if name in _ID_WORDS]
    score_cells = [n for n, name in enumerate(names) if name not in _ID_WORDS]
    if len(id_cells) != 1 or not score_cells:
        return False
    if cells is None and names[0] not in _ID_WORDS and names[0] not in _SCORE_WORDS:
        return False
    named = [n for n in score_cells if names[n] in _SCORE_WORDS]
    score_cell = named[0] if named else score_cells[0]
    columns.id_cell, columns.score_cell = id_cells[0], score_cell
    columns.score_first = score_cell < id_cells[0]
    log.add("header_line")
    if cells is not None:
        log.add("markdown_table")
    if columns.score_first:
        log.add("header_columns_swapped")
    return True


def read_line(
    line: str, matcher: IdMatcher, columns: Columns, log: ToleranceLog
) -> list[LineScore]:
    """The scores a line gives (empty when it is prose)."""
    cells = _cells(line)
    if cells is not None and len(cells) > 2 and columns.id_cell is None:
        columns.id_cell, columns.score_cell = 0, 1  # no header: ID, score, then comments
    if cells is not None and columns.id_cell is not None and columns.score_cell is not None:
        found = _table_row(cells, matcher, columns, log)
        return [found] if found else []
    for candidate, decorations in _variants(line):
        found = _pair(candidate, matcher, columns, log)
        if found is not None:
            for name in decorations:
                log.add(name)
            return [found]
    parts = [part.strip() for part in line.split(";")]
    if len(parts) > 1 and all(parts):
        scratch = ToleranceLog()
        pairs = [_pair(part, matcher, columns, scratch) for part in parts]
        if all(pair is not None for pair in pairs):
            for name in (*scratch.as_tuple(), "pairs_on_one_line"):
                log.add(name)
            return [pair for pair in pairs if pair is not None]
    return []


def _cells(line: str) -> list[str] | None:
    """The cells of a markdown table row, or None."""
    if len(line) > 1 and line.startswith("|") and line.endswith("|"):
        return [cell.strip() for cell in line[1:-1].split("|")]
    return None


def _table_row(
    cells: list[str], matcher: IdMatcher, columns: Columns, log: ToleranceLog
) -> LineScore | None:
    """A score read from the header's ID and score cells."""
    assert columns.id_cell is not None and columns.score_cell is not None
    if max(columns.id_cell, columns.score_cell) >= len(cells):
        return None
    written = _EMPHASIS.sub("", cells[columns.id_cell]).strip()
    score_text = _EMPHASIS.sub("", cells[columns.score_cell]).strip()
    score = re.fullmatch(_SCORE, score_text)
    if score is None or not written:
        return None
    item_id, id_tolerance = matcher.match(written)
    if item_id is None and not matcher.shaped(written):
        return None
    log.add("markdown_table")
    if len(cells) > 2:
        log.add("table_extra_columns")
    if id_tolerance:
        log.add(id_tolerance)
    return _score(written, item_id, score, log)


def _pair(
    candidate: str, matcher: IdMatcher, columns: Columns, log: ToleranceLog
) -> LineScore | None:
    """A score if ``candidate`` is exactly an ID, a separator and a number; else None."""
    if columns.score_first:
        match = _SCORE_FIRST.fullmatch(candidate)
        if match is None:
            return None
        item_id, id_tolerance = matcher.match(match["id"])
        if item_id is None and not matcher.shaped(match["id"]):
            return None
        _note(match, id_tolerance, log)
        return _score(match["id"], item_id, match, log)
    expected = _expected_prefix(candidate, matcher)
    if expected is not None:
        written, match = expected
        item_id, id_tolerance = matcher.match(written)
        _note(match, id_tolerance, log)
        return _score(written, item_id, match, log)
    patterns = ((_LABELLED, "labelled_pair"), (_PLAIN, None), (_PREFIXED, "id_prefix"))
    for pattern, tolerance in patterns:
        match = pattern.fullmatch(candidate)
        if match is None:
            continue
        item_id, id_tolerance = matcher.match(match["id"])
        if item_id is None and (
            not matcher.shaped(match["id"]) or match["id"].casefold() in LABEL_WORDS
        ):
            continue
        if tolerance:
            log.add(tolerance)
        _note(match, id_tolerance, log)
        return _score(match["id"], item_id, match, log)
    return None


def _expected_prefix(candidate: str, matcher: IdMatcher) -> tuple[str, re.Match[str]] | None:
    """An expected ID the candidate starts with (longest first), followed by a score."""
    for length, by_folded in matcher.by_length:
        written = candidate[:length]
        if written.casefold() in by_folded:
            tail = _TAIL.fullmatch(candidate[length:])
            if tail is not None:
                return written, tail
    return None


def _note(match: re.Match[str], id_tolerance: str | None, log: ToleranceLog) -> None:
    """Record the ID, separator, trailing-separator and comment leniencies of a pair."""
    if id_tolerance:
        log.add(id_tolerance)
    separator = match.groupdict().get("sep")
    symbol = (separator or ",").strip()
    if separator is None:
        pass
    elif not symbol:
        log.add("separator_tab" if "\t" in separator else "separator_space")
    else:
        if symbol in _SEPARATOR_TOLERANCE:
            log.add(_SEPARATOR_TOLERANCE[symbol])
        if symbol in ",;:=" and symbol != separator:
            log.add("spaced_separator")
    if match.groupdict().get("trail"):
        log.add("trailing_separator")
    if match.groupdict().get("comment"):
        log.add("score_comment")


def _score(written: str, item_id: str | None, match: re.Match[str], log: ToleranceLog) -> LineScore:
    den = match.groupdict().get("den")
    return LineScore(written, item_id, text_number(match["score"], log), int(den) if den else None)


def _variants(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """The line as written, then with table pipes, list marker and emphasis removed."""
    decorations: list[str] = []
    bare = line
    cells = _cells(bare)
    if cells is not None:
        bare = " | ".join(cells)
        decorations.append("markdown_table")
    marker = _LIST_MARKER.match(bare)
    if marker:
        bare = bare[marker.end() :]
        decorations.append("list_marker")
    plain = _EMPHASIS.sub("", bare).strip()
    if plain != bare:
        bare = plain
        decorations.append("markdown_emphasis")
    variants: list[tuple[str, tuple[str, ...]]] = [(line, ())]
    if bare != line:
        variants.append((bare, tuple(decorations)))
    return variants
