"""The reply corpus: real judges' reply shapes, each with the outcome a careful reader records.

``tests/replies/<format>.jsonl`` holds one case per line: the reply (content, and where the
provider sent them a separate reasoning field, a refusal, a finish reason), the item IDs,
optionally the items' own text or the prompt's format example (so echoes can be tested), the
rubric's ``score_marker`` and ``scale`` when the case's prompt asked for another one, and the
expected outcome per item: a number (``ok`` with that score), ``"abstain"``,
``"out_of_range"``, ``"refused"``, ``"missing"`` or ``"flag"`` (any unscored status). Each case
names where the behaviour is documented. The corpus is data written before the parser changes;
this test measures the parser against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.formats import TOLERANCE_DESCRIPTIONS, parse_reply
from judgekit.rubrics import load_rubric
from judgekit.types import ChatReply, ChatRequest, Item, ItemVerdict, Scale, Status

CORPUS = Path(__file__).parent / "replies"
RUBRIC_FOR_FORMAT = {
    "id_score_lines": "riddle_reasoning",
    "rating_json": "extent_rating",
    "score_line": "factual_accuracy",
    "direct_scoring_json": "direct_scoring",
}
NAMED_STATUSES = {"abstain", "out_of_range", "refused", "missing"}


def _cases(folder: Path = CORPUS) -> list[dict[str, Any]]:
    cases = []
    for path in sorted(folder.glob("*.jsonl")):
        cases += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return cases


CASES = _cases()


def _request(case: dict[str, Any], ids: list[str]) -> ChatRequest:
    """The request the judge saw: the rubric's rendering of the case's items."""
    rubric = load_rubric(RUBRIC_FOR_FORMAT[case["format"]])
    texts = case.get("items", {})
    items = [Item(i, {c: texts.get(i, f"text of {i}") for c in rubric.input_columns}) for i in ids]
    shown = items if rubric.batched else items[:1]
    if not rubric.batched and len(items) > 1:
        raise AssertionError("single-item cases have one ID")
    return ChatRequest(tuple(rubric.render(shown)), shown=rubric.shown_texts(shown))


def _read(case: dict[str, Any]) -> tuple[dict[str, ItemVerdict], tuple[str, ...]]:
    rubric = load_rubric(RUBRIC_FOR_FORMAT[case["format"]])
    ids = case.get("item_ids") or (["1", "2", "3"] if rubric.batched else ["1"])
    reply = ChatReply(
        text=case["reply"],
        model="corpus",
        finish_reason=case.get("finish_reason", "stop"),
        reasoning=case.get("reasoning"),
        refusal=case.get("refusal"),
    )
    parsed = parse_reply(
        case["reply"],
        output_format=rubric.output_format,
        scale=_scale(case) or rubric.scale,
        item_ids=ids,
        criteria=rubric.criteria,
        request=_request(case, ids),
        reply=reply,
        score_marker=case.get("score_marker"),
    )
    return {v.item_id: v for v in parsed.verdicts}, parsed.tolerances


def _scale(case: dict[str, Any]) -> Scale | None:
    """A case's own scale (``{"range": [1, 10], "step": 0.5}``), as a study of it declares."""
    if "scale" not in case:
        return None
    low, high = case["scale"]["range"]
    step = case["scale"].get("step")
    return Scale(tuple(range(low, high + 1)), step=0.0 if step == "continuous" else step)


def _agrees(expected: Any, verdict: ItemVerdict) -> bool:
    if isinstance(expected, (int, float)):
        return verdict.status is Status.OK and verdict.score == expected
    if expected in NAMED_STATUSES:
        return verdict.status.value == expected
    assert expected == "flag", expected
    return verdict.status not in (Status.OK, Status.ABSTAIN)


def _invented(expected: Any, verdict: ItemVerdict) -> bool:
    """An ok score the reply does not support."""
    if verdict.status is not Status.OK:
        return False
    return not isinstance(expected, (int, float)) or verdict.score != expected


def test_the_corpus_is_large_and_sourced() -> None:
    assert len(CASES) >= 150
    assert {c["format"] for c in CASES} == set(RUBRIC_FOR_FORMAT)
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all(c["source"] and c["note"] for c in CASES)
    named = {t for c in CASES for t in c.get("tolerances", [])}
    assert named <= set(TOLERANCE_DESCRIPTIONS)


def test_no_invented_score_and_the_reader_agrees_with_a_careful_human() -> None:
    invented: list[str] = []
    disagreements: list[str] = []
    for case in CASES:
        verdicts, tolerances = _read(case)
        for item_id, expected in case["expected"].items():
            verdict = verdicts[item_id]
            if _invented(expected, verdict):
                invented.append(f"{case['id']}[{item_id}]: ok {verdict.score}, want {expected}")
        agrees = all(_agrees(e, verdicts[i]) for i, e in case["expected"].items())
        named = set(case.get("tolerances", [])) <= set(tolerances)
        if not (agrees and named):
            shown = {i: (v.status.value, v.score) for i, v in verdicts.items()}
            disagreements.append(f"{case['id']}: got {shown} {tolerances}")
    assert invented == []
    share = 1 - len(disagreements) / len(CASES)
    print(f"\ncorpus: {len(CASES)} replies, handled as a human would: {share:.1%}")
    assert share >= 0.95, "\n".join(disagreements)
