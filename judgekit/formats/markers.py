"""The score marker: how a rubric's prompt asks the judge to write its score.

A rubric declares it in ``config.yaml`` as ``score_marker``, written the way the prompt shows
it with ``N`` for the number: ``SCORE: N`` (the default of ``score_line``), MT-Bench's
``Rating: [[N]]`` or ``[[N]]``, Prometheus' ``[RESULT] N``, ``FINAL SCORE: N``, or a JSON key
``{"score": N}``. The ``score_line`` reader then reads that marker wherever a careful reader
takes it as the verdict (``docs/parsing.md``), not only alone on its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FORM = (
    "write it as the prompt shows it, with N for the number: 'SCORE: N', 'Rating: [[N]]', "
    "'[[N]]', '[RESULT] N' or '{\"score\": N}'"
)
_JSON = re.compile(r'\{\s*"(?P<key>[^"\n]+)"\s*:\s*N\s*\}')
_PREFIX = re.compile(r"(?P<label>.*?)\s*(?P<sep>[:=：]?)\s*(?P<open>\[{0,2})")
_LABEL = re.compile(r"[^\W\d_](?:[\w .'-]*\w)?|\[[A-Za-z]+\]")
_NUMBER = re.compile(r"(?<![A-Za-z])N(?![A-Za-z])")


@dataclass(frozen=True)
class ScoreMarker:
    """A parsed ``score_marker``.

    Attributes:
        text: The marker as configured (``Rating: [[N]]``).
        label: The label before the number (``Rating``, ``[RESULT]``), or ``""``.
        brackets: How many square brackets enclose the number (0, 1 or 2).
        json_key: The JSON key holding the score, for a ``{"key": N}`` marker.
    """

    text: str
    label: str = ""
    brackets: int = 0
    json_key: str | None = None

    def shown(self, values: str) -> str:
        """The marker with ``N`` replaced by ``values`` (``Rating: [[1/2/3]]``, ``RATING: 4``)."""
        return _NUMBER.sub(lambda _: values, self.text, count=1)


def parse_marker(text: str) -> ScoreMarker:
    """Read a ``score_marker`` setting.

    Raises:
        ValueError: One line naming the setting and how to write it.
    """
    marker = text.strip()
    json_form = _JSON.fullmatch(marker)
    if json_form:
        return ScoreMarker(marker, json_key=json_form["key"].strip())
    parts = _NUMBER.split(marker)
    if len(parts) != 2:
        raise ValueError(f"score_marker {text!r} needs exactly one N for the number; {_FORM}")
    prefix, suffix = parts
    match = _PREFIX.fullmatch(prefix)
    opened = len(match["open"]) if match else 0
    label = match["label"].strip() if match else prefix
    if (
        match is None
        or suffix.strip() != "]" * opened
        or not (label or opened)
        or (label and not _LABEL.fullmatch(label))
    ):
        raise ValueError(f"score_marker {text!r} is not a marker judgekit can read; {_FORM}")
    return ScoreMarker(marker, label, opened)


DEFAULT_MARKER = parse_marker("SCORE: N")
