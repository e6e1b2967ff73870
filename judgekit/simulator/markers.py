"""The score marker a prompt shows, found in its text and written through the reader's marker.

A real judge sees only the request, so the simulator finds how the prompt asks for the score
in the prompt's text (outside the items): MT-Bench's ``"[[rating]]", for example:
"Rating: [[5]]"``, Prometheus' ``[RESULT] (an integer ...)``, ``{"score": <1-5>}``, ``SCORE: N``,
``Final rating: [1/2/3]``, or the line the format reminder shows (``the line Rating: [[N]]``).
What it finds is turned into a ``score_marker`` (``Rating: [[N]]``) and read by
:func:`judgekit.formats.markers.parse_marker`, the reader's own, whose
:meth:`~judgekit.formats.markers.ScoreMarker.shown` writes the score: the simulator writes
exactly the form the reader is told to expect.
"""

from __future__ import annotations

import re

from judgekit.formats.markers import ScoreMarker, parse_marker

#: What stands for the number in a prompt's example: N, digits, ``<1-5>``, ``[1/2/3]``, ...
_SLOT = r"(?:N|-?\d+(?:\.\d+)?|<[^<>\n]{1,40}>|\[[\d/ ,.-]{1,40}\]|\([^()\n]{1,80}\)|X)"
_WORD = r"(?i:score|rating|grade|verdict|result|mark|points)"
#: Tried in this order; the first form found in the prompt is the marker.
_FORMS = (
    # "Rating: [[5]]", "[[rating]]", "[[N]]", "Rating: [[[1/2/3]]]" (a rendered scale)
    re.compile(
        r"(?P<label>(?<![\w\[])(?:[A-Z][A-Za-z]* )?[A-Za-z]+:\s*)?"
        r"\[\[(?P<slot>-?\d+|N|[A-Za-z_ ]{1,20}|\[[\d/ ,]+\])\]\]"
    ),
    re.compile(r"(?P<label>\[RESULT\])\s*" + _SLOT + "?"),
    # '{"score": N}', '{"score": <1-5>}': a JSON key alone in its object
    re.compile(r'\{\s*"(?P<key>[A-Za-z_][\w ]{0,30})"\s*:\s*' + _SLOT + r"\s*\}"),
    # "Helpfulness: N": any label before a literal N (the format reminder's "the line ...")
    re.compile(r"(?P<label>(?<![\w])(?:[A-Z][A-Za-z]* )?[A-Z][A-Za-z]*):[ \t]*N(?![\w])"),
    # "SCORE: 7", "Final score: <1-10>", "Overall rating: [1/2/3/4]"
    re.compile(r"(?P<label>(?<![\w])(?:[A-Z][A-Za-z]* )?" + _WORD + r")\s*:\s*" + _SLOT),
)


def find_marker(instructions: str) -> tuple[ScoreMarker | None, bool]:
    """The score marker the prompt shows (``None``: none), and whether it asks for one score.

    For ``[[...]]`` the first form with a label and a number (the prompt's example, such as
    ``Rating: [[5]]``) wins over a bare ``[[rating]]``. ``[[N]]``, ``[RESULT]`` and
    ``{"key": N}`` ask for one score; ``Label: N`` does when its number is a slot (``N``,
    ``<1-5>``, ``[1/2/3]``), not a worked example's digit (``Score: 5 (correct)`` is an anchor
    of a batched prompt too).

    Examples:
        >>> def shown(text):
        ...     marker, one = find_marker(text)
        ...     return (marker.text if marker else None), one
        >>> shown('format: "[[rating]]", for example: "Rating: [[5]]".')
        ('Rating: [[N]]', True)
        >>> shown("Then write [RESULT] (an integer from 1 to 5).")
        ('[RESULT] N', True)
        >>> shown('Reply {"score": <1-5>} only.')
        ('{"score": N}', True)
        >>> shown("End with the line Final score: N")
        ('Final score: N', True)
        >>> shown("then the line Helpfulness: N on its own line")
        ('Helpfulness: N', True)
        >>> shown("Score: 5 (correct; a typo is irrelevant)")
        ('Score: N', False)
        >>> shown("The answer says Result: 42. End with Final score: <1-5>")
        ('Final score: N', True)
        >>> shown("Rate each item on one line: ID,score")
        (None, False)
    """
    brackets = list(_FORMS[0].finditer(instructions))
    if brackets:
        example = next((m for m in brackets if m["label"] and m["slot"][-1].isdigit()), None)
        found = example or next((m for m in brackets if m["label"]), brackets[0])
        label = (found["label"] or "").strip()
        return _parsed(f"{label} [[N]]".strip()), True
    for form in _FORMS[1:]:
        matches = list(form.finditer(instructions))
        if not matches:
            continue
        # a slot (N, <1-5>) over a number, which may be an example's or an answer's ("Result: 42")
        match = next((m for m in matches if not _numeric(m)), matches[0])
        if "key" in match.groupdict():
            return _parsed(f'{{"{match["key"]}": N}}'), True
        label = match["label"].strip()
        if label.startswith("["):
            return _parsed(f"{label} N"), True
        return _parsed(f"{label}: N"), not _numeric(match)
    return None, False


def _numeric(match: re.Match[str]) -> bool:
    """Whether a marker's number is a number (not a slot such as ``N`` or ``<1-5>``)."""
    end = match.end("label") if "label" in match.groupdict() else match.end("key") + 1
    slot = match.group()[end - match.start() :].lstrip(' \t:"')
    return slot[:1].isdigit() or slot.startswith("-")


def _parsed(text: str) -> ScoreMarker | None:
    """The marker as the reader reads it (``None`` if the reader could not read it)."""
    try:
        return parse_marker(text)
    except ValueError:
        return None
