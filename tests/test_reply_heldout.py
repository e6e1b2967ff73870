"""The held-out reply corpus: judge replies written down before the parser was looked at.

``tests/replies/heldout/<format>.jsonl`` has the schema of ``tests/replies/*.jsonl`` (see
``test_reply_corpus.py``) and is read with the same helpers. Its cases were written from the
rubric prompts and documented judge output shapes only, by someone who had not read
``judgekit/formats``; the data was committed alone before the first measurement.

The hard line: no invented score (an ok score where the careful reader records a status, or a
different number). Refusals of unambiguous scores (a number expected, an unscored status given)
are counted and printed, not failed on. Tolerance names are not checked for held-out cases.
"""

from __future__ import annotations

from pathlib import Path

from test_reply_corpus import RUBRIC_FOR_FORMAT, _agrees, _cases, _invented, _read

from judgekit.types import Status

HELDOUT = Path(__file__).parent / "replies" / "heldout"
FIELDS = {"id", "format", "source", "note", "reply", "expected", "item_ids", "items"}
FIELDS |= {"reasoning", "refusal", "finish_reason"}


CASES = _cases(HELDOUT)


def test_the_heldout_corpus_is_well_formed() -> None:
    assert len(CASES) >= 60
    assert {c["format"] for c in CASES} == set(RUBRIC_FOR_FORMAT)
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all(c["source"] and c["note"] for c in CASES)
    assert all(set(c) <= FIELDS for c in CASES), "held-out cases carry no tolerances"


def _measure() -> tuple[list[str], list[str], list[str], list[str]]:
    agreeing: list[str] = []
    invented: list[str] = []
    refused: list[str] = []
    other: list[str] = []
    for case in CASES:
        verdicts, _ = _read(case)
        shown = {i: (v.status.value, v.score) for i, v in verdicts.items()}
        if all(_agrees(e, verdicts[i]) for i, e in case["expected"].items()):
            agreeing.append(case["id"])
            continue
        for item_id, expected in case["expected"].items():
            verdict = verdicts[item_id]
            where = f"{case['id']}[{item_id}]: want {expected!r}, got {shown[item_id]}"
            if _invented(expected, verdict):
                invented.append(where)
            elif isinstance(expected, (int, float)) and verdict.status is not Status.OK:
                refused.append(where)
            elif not _agrees(expected, verdict):
                other.append(where)
    return agreeing, invented, refused, other


def test_no_invented_score_on_the_heldout_corpus() -> None:
    agreeing, invented, refused, other = _measure()
    print(f"\nheld-out corpus: {len(CASES)} replies, {len(agreeing)} read as the careful reader")
    print(f"invented scores ({len(invented)}):", *invented, sep="\n  ")
    print(f"refused unambiguous scores ({len(refused)}):", *refused, sep="\n  ")
    print(f"other status disagreements ({len(other)}):", *other, sep="\n  ")
    assert invented == []
