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
        "reasoning_block": "a <think>/<thinking>/<reasoning> block (or the text before a lone "
        "closing tag) was left unread: it is the judge's reasoning, not its answer",
        "echoed_text_ignored": "a line or JSON object copied from the request (an item's own "
        "text or the prompt's format example) was not read as a score",
        "fullwidth_characters": "full-width digits or a full-width comma/colon were read as ASCII",
        "score_comment": "a worded comment followed the score ('3 (mostly correct)', '3 - close')",
        # id_score_lines
        "header_line": "a header line such as 'ID,Accuracy' named the columns",
        "header_columns_swapped": "the header put the score column before the ID ('Score,ID'); "
        "rows were read in that order",
        "table_extra_columns": "a markdown table had more columns than ID and score (a comment)",
        "pairs_on_one_line": "several 'ID,score' pairs on one line, separated by ';'",
        "labelled_pair": "each pair was written with labels ('ID: 12, Score: 5')",
        "json_id_map": "the JSON gave scores as an object keyed by ID ({'12': 5})",
        "markdown_table": "the lines were rows of a markdown table",
        "list_marker": "a bullet or list number in front of a score line was removed",
        "markdown_emphasis": "markdown emphasis (**, __ or backticks) around the score was removed",
        "id_prefix": "the ID was written with an 'ID', 'Item', 'Row' or '#' prefix ('Row 17: 5')",
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
        "plain_rating_line": "no JSON, but one rating in plain text ('Rating: N', 'I rate it "
        "7/10')",
        # JSON, any format
        "json_key_case": "a JSON key matched only when case is ignored ('Score', 'ID')",
        "json_wrapped": "the JSON answer was wrapped in one outer key ({'evaluation': {...}})",
        "json_in_list": "the JSON answer was the only element of a list",
        "json_comment": "the JSON held // comments, which were ignored",
        # score_line
        "score_label_case": "the label was not written exactly 'SCORE:' (e.g. 'Score:')",
        "final_score_label": "the label was 'Final score:' (or 'Overall score:', 'Total score:')",
        "score_in_brackets": "the score was in square brackets ('SCORE: [3]', 'Rating: [[3]]')",
        "rating_key_synonym": "the JSON gave the rating under 'score' instead of 'rating'",
        "result_tag": "the score followed Prometheus' '[RESULT]' tag instead of 'SCORE:'",
        "score_label_synonym": "the label was 'Grade:' or 'Rating:' instead of 'SCORE:'",
        "trailing_period": "a period followed the score ('SCORE: 3.')",
        "line_decoration": "the SCORE line carried a heading or quote mark ('### SCORE: 4')",
        "multiple_score_lines": "several SCORE lines or JSON answers, all with the same value",
        "score_closes_paragraph": "the score closed a paragraph of prose ('... is low. "
        "Rating: [[2]]') instead of standing on its own line",
        "score_in_sentence": "the rubric's double-bracketed marker was read inside a sentence "
        "('I would rate it [[6]].', '評価は[[7]]です。')",
        "score_label_language": "the label was written in another language ('総合点', '评分')",
        "bare_score": "the whole reply was the score ('[[8]]', '[4]', '7')",
        "rating_in_prose": "no marker, but one first-person rating phrase ('I would rate the "
        "response a 9 out of 10')",
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
