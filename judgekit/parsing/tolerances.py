"""The fixed vocabulary of parser leniencies recorded in ``ParsedReply.tolerances``.

A tolerance is something the judge did that the rubric did not ask for but that the parser
accepted without guessing (a fence, a header, a different separator). Every name a parser can
record is listed here with a one-line meaning, so a researcher can count and explain them.
"""

from __future__ import annotations

from types import MappingProxyType

TOLERANCE_DESCRIPTIONS = MappingProxyType(
    {
        # text clean-up, any format
        "bom": "the reply started with a byte-order mark, which was removed",
        "crlf": "Windows (CR LF) or old Mac (CR) line endings were converted to LF",
        "line_whitespace": "lines had leading or trailing spaces or tabs",
        "blank_lines": "blank lines between score lines were skipped",
        "markdown_fence": "the answer was wrapped in a ``` code fence",
        "prose": "lines of prose around the score lines were ignored",
        "prose_around_json": "text outside the JSON object was ignored",
        # id_score_lines
        "header_line": "a header line such as 'ID,Accuracy' was skipped",
        "markdown_table": "the lines were rows of a markdown table",
        "list_marker": "a bullet or list number in front of a score line was removed",
        "markdown_emphasis": "markdown emphasis (**, __ or backticks) around the score was removed",
        "id_prefix": "the ID was written with an 'ID' or '#' prefix (e.g. 'ID: 17 - 5')",
        "id_normalised": "an ID matched an expected ID only as a number ('017' vs '17')",
        "id_case": "an ID matched an expected ID only when letter case is ignored",
        "id_as_number": "a JSON record gave the ID as a number instead of a string",
        "separator_semicolon": "';' separated ID and score",
        "separator_colon": "':' separated ID and score",
        "separator_dash": "' - ' separated ID and score",
        "separator_equals": "'=' separated ID and score",
        "separator_arrow": "'->' separated ID and score",
        "separator_pipe": "'|' separated ID and score",
        "separator_tab": "a tab separated ID and score",
        "separator_space": "only whitespace separated ID and score",
        "trailing_separator": "empty CSV columns followed the score ('17;5;;;')",
        "spaced_separator": "the separator had spaces around it ('17, 5')",
        "repeated_identical_line": "an ID was given more than once, always with the same score",
        "bare_json_list": "the JSON form was a bare list instead of {'scores': [...]}",
        # numbers, any format
        "decimal_notation": "a whole score was written with a decimal point ('5.0')",
        "score_as_string": "a JSON score was a string holding a number ('7')",
        "score_out_of_max": "the score was written as a fraction of the scale maximum ('4/4')",
        # rating_json
        "missing_reason": "the JSON had no text 'reason'",
        "reason_before_rating": "'reason' came before 'rating' although the rating must come first",
        "repeated_json": "the same JSON answer appeared more than once",
        "python_dict": "a Python dict literal (single quotes, trailing comma) instead of JSON",
        # score_line
        "score_label_case": "the label was not written exactly 'SCORE:' (e.g. 'Score:')",
        "final_score_label": "the label was 'Final score:'",
        "score_in_brackets": "the score was in square brackets ('SCORE: [3]')",
        "multiple_score_lines": "several SCORE lines or JSON answers; the last one was used",
        "text_after_score": "text followed the last SCORE line",
        # direct_scoring_json
        "criterion_name_case": "a criterion name matched only when case and spacing are ignored",
        "missing_max_score": "a criterion record had no maxScore",
    }
)


class ToleranceLog:
    """Ordered, de-duplicated record of the tolerances one parse used."""

    def __init__(self) -> None:
        self._names: list[str] = []

    def add(self, name: str) -> None:
        """Record a tolerance; unknown names are a programming error."""
        if name not in TOLERANCE_DESCRIPTIONS:
            raise KeyError(f"undocumented tolerance {name!r}")
        if name not in self._names:
            self._names.append(name)

    def as_tuple(self) -> tuple[str, ...]:
        """Return the tolerances in the order they were first used."""
        return tuple(self._names)
