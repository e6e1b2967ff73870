"""Matching the IDs a judge wrote against the IDs a batch expected."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence


def id_shape(token: str) -> str:
    """Collapse runs of digits to ``9`` and runs of letters to ``a`` (``q017`` -> ``a9``)."""
    return re.sub(r"[^\W\d_]+", "a", re.sub(r"\d+", "9", token))


class IdMatcher:
    """Resolve written IDs to expected ones: exactly, then as integers, then ignoring case.

    The looser matches are accepted only when exactly one expected ID fits; the caller records
    the tolerance returned with the match.
    """

    def __init__(self, expected: Sequence[str]) -> None:
        self.expected: tuple[str, ...] = tuple(expected)
        if len(set(self.expected)) != len(self.expected):
            raise ValueError(f"the expected item IDs are not unique: {list(self.expected)}")
        if not self.expected:
            raise ValueError("no expected item IDs were given")
        self._exact = set(self.expected)
        self._by_number: dict[int, list[str]] = defaultdict(list)
        self._by_folded: dict[str, list[str]] = defaultdict(list)
        for item_id in self.expected:
            if item_id.strip().isdigit():
                self._by_number[int(item_id)].append(item_id)
            self._by_folded[item_id.strip().casefold()].append(item_id)
        self._shapes = {id_shape(item_id.strip()) for item_id in self.expected}
        lengths: dict[int, dict[str, str]] = defaultdict(dict)
        for item_id in self.expected:
            lengths[len(item_id.strip())][item_id.strip().casefold()] = item_id.strip()
        #: Expected IDs by length then case-folded text, longest first (for line prefixes).
        self.by_length: list[tuple[int, dict[str, str]]] = sorted(lengths.items(), reverse=True)

    def match(self, written: str) -> tuple[str | None, str | None]:
        """Return (expected ID or None, tolerance name or None) for a written ID."""
        written = written.strip()
        if written in self._exact:
            return written, None
        for stripped in self.expected:
            if stripped.strip() == written:
                return stripped, None
        if written.isdigit() and len(self._by_number.get(int(written), [])) == 1:
            return self._by_number[int(written)][0], "id_normalised"
        folded = self._by_folded.get(written.casefold(), [])
        if len(folded) == 1:
            return folded[0], "id_case"
        return None, None

    def ambiguous(self, written: str) -> list[str]:
        """The expected IDs a written ID matches equally well (empty unless ambiguous)."""
        written = written.strip()
        candidates = self._by_number.get(int(written), []) if written.isdigit() else []
        if len(candidates) < 2:
            candidates = self._by_folded.get(written.casefold(), [])
        return list(candidates) if len(candidates) > 1 else []

    def shaped(self, written: str) -> bool:
        """Whether a written token looks like an ID of this batch (same shape as one)."""
        return id_shape(written.strip()) in self._shapes
