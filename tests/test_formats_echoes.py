"""Echo detection: a reply line copied from an item's text is found, whatever decorates it.

``Echoes.has_line`` first looks for the normalised line in the collapsed text of the items and
builds the set of item lines only for a line found there; these tests hold it to the plain
definition (the normalised line is one of the items' normalised lines) on generated text.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.formats.reply import Echoes, normalise_line
from judgekit.types import ChatRequest

# words, decoration the normaliser strips, and the whitespace it collapses (no-break space too)
ALPHABET = st.sampled_from([*"ab1,:", "*", "_", "`", ">", " ", "\t", "\n", "\u00a0"])
TEXT = st.text(ALPHABET, max_size=40)


def _by_definition(item_texts: list[str], line: str) -> bool:
    lines = {normalise_line(part) for text in item_texts for part in text.split("\n")}
    lines.discard("")
    return normalise_line(line) in lines


def _echoes(item_texts: list[str]) -> Echoes:
    request = ChatRequest(messages=({"role": "user", "content": "x"},), shown=tuple(item_texts))
    return Echoes.from_request(request)


@settings(deadline=None)  # a slow CI machine must not fail a correct answer
@given(st.lists(TEXT, min_size=1, max_size=3), TEXT)
def test_has_line_is_the_definition_for_any_line(item_texts: list[str], line: str) -> None:
    assert _echoes(item_texts).has_line(line) == _by_definition(item_texts, line)


@settings(deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=3), st.data())
def test_a_copied_line_is_found_under_any_decoration(
    item_texts: list[str], data: st.DataObject
) -> None:
    parts = [part for text in item_texts for part in text.split("\n") if normalise_line(part)]
    if not parts:
        return
    copied = data.draw(st.sampled_from(parts))
    decoration = data.draw(st.sampled_from(["", "**", "> ", "`", "  "]))
    line = f"{decoration}{copied}{decoration.strip(' >')}"
    assert _echoes(item_texts).has_line(line)


def test_a_line_seen_only_across_two_items_is_no_copy() -> None:
    echoes = _echoes(["Budapest is", "the capital"])
    assert not echoes.has_line("is the")  # in the collapsed text, but no item's line
    assert echoes.has_line("**Budapest is**")
    assert not echoes.has_line("")
