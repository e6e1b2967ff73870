"""Pairwise verdict formats: unambiguous verdicts only, every other reply a status with a reason.

The corpus test reads the raw completions LLMBar stored (Zeng, Yu, Gao, Meng, Goyal, Chen:
"Evaluating Large Language Models at Evaluating Instruction Following", ICLR 2024;
princeton-nlp/LLMBar at commit 900616b, folder Dataset/, MIT licence; the subset kept in
../shared/datasets/llmbar). FastChat's MT-Bench GPT-4 pair judgments
(``data/mt_bench/model_judgment/gpt-4_pair.jsonl``) are not in lm-sys/FastChat's git history
(they are downloaded from Hugging Face at run time), so the ``[[A]]/[[B]]/[[C]]`` reader is tested
on replies written here in the styles FastChat's judge prompt asks for.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judgekit.formats import parse_reply
from judgekit.types import ChatRequest, ItemVerdict, Scale, Status

TIES = Scale((-1, 0, 1))
FIVE = Scale((-2, -1, 0, 1, 2))
TEN = Scale(tuple(range(1, 11)))


def _read(text: str, fmt: str, scale: Scale = TIES, **kwargs: object) -> ItemVerdict:
    return parse_reply(text, output_format=fmt, scale=scale, item_ids=["p1"], **kwargs).verdicts[0]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Assistant A follows the question closely.\n\n[[A]]", 1.0),
        ("Both are equally good. My final verdict is [[C]].", 0.0),
        ("Final verdict: [[ B ]]", -1.0),
        ('{"explanation": "B is right", "verdict": "B"}', -1.0),
    ],
)
def test_mtbench_reads_one_verdict(text: str, score: float) -> None:
    verdict = _read(text, "pair_mtbench")
    assert verdict.status is Status.OK and verdict.score == score


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ('Output "[[A]]" if assistant A is better, "[[B]]" if B is, "[[C]]" for a tie.',
         Status.UNPARSEABLE),
        ("[[A]] if assistant A is better.", Status.UNPARSEABLE),
        ("I first thought [[A]].\nOn reflection the verdict is [[B]].", Status.INCONSISTENT),
        ("Assistant A is better.", Status.UNPARSEABLE),
        ('{"explanation": "x", "verdict": "D"}', Status.UNPARSEABLE),
    ],
)  # fmt: skip
def test_mtbench_never_reads_an_ambiguous_reply(text: str, status: Status) -> None:
    verdict = _read(text, "pair_mtbench")
    assert verdict.status is status and verdict.score is None and verdict.reason


def test_a_line_copied_from_the_instructions_is_an_echo() -> None:
    system = "Answer with [[A]] when the first assistant is better, or explain otherwise."
    request = ChatRequest(messages=({"role": "system", "content": system},))
    text = "Answer with [[A]] when the first assistant is better, or explain otherwise."
    assert _read(text, "pair_mtbench", request=request).status is Status.UNPARSEABLE


@pytest.mark.parametrize(
    ("text", "score", "status"),
    [
        ("A is much better.\n\nMy final verdict is: [[A>>B]]", 2.0, Status.OK),
        ("[[B>A]]", -1.0, Status.OK),
        ("Verdict [[A<<B]]", -2.0, Status.OK),
        ("[[A=B]]", 0.0, Status.OK),
        ("Close: [[A>B]]\nFinal: [[A>>B]]", None, Status.INCONSISTENT),
        ("[[A>>B]], [[A>B]], [[A=B]], [[B>A]] or [[B>>A]]", None, Status.UNPARSEABLE),
        ("My verdict: A is better", None, Status.UNPARSEABLE),
    ],
)
def test_arena_hard_five_levels(text: str, score: float | None, status: Status) -> None:
    verdict = _read(text, "pair_arena", FIVE)
    assert (verdict.status, verdict.score) == (status, score)


def test_rating_pair_derives_the_verdict_with_its_margin() -> None:
    verdict = _read("A is correct.\nScore A: 8\nScore B: [[5]]", "pair_rating", TEN)
    assert verdict.score == 1.0 and verdict.details["tie_margin"] == 0.0
    assert (verdict.details["rating_a"], verdict.details["rating_b"]) == (8.0, 5.0)
    assert _read("Score A: 6\nScore B: 6", "pair_rating", TEN).score == 0.0
    assert _read('{"explanation": "", "score_a": 2, "score_b": 9}', "pair_rating", TEN).score == -1
    assert _read("Score A: 6", "pair_rating", TEN).status is Status.UNPARSEABLE
    assert _read("Score A: 6\nScore B: 4\nScore A: 3", "pair_rating", TEN).status is (
        Status.INCONSISTENT
    )
    assert _read("Score A: 11\nScore B: 4", "pair_rating", TEN).status is Status.OUT_OF_RANGE


def test_output_ab_reads_llmbar_styles() -> None:
    assert _read("Output (a)", "pair_output_ab").score == 1.0
    assert (
        _read("Output (b) is better.\n\nOutput (a) misses the point.", "pair_output_ab").score == -1
    )
    argued = "Assistant (a) argues that Output (a) is better. Still, Output (b) is better."
    assert _read(argued, "pair_output_ab").score == -1.0
    assert _read("# Output (a):\ncopied text", "pair_output_ab").status is Status.UNPARSEABLE
    both = "Output (a) is better.\nIn the end Output (b) is better."
    assert _read(both, "pair_output_ab").status is Status.INCONSISTENT


#: LLMBar's own reading (``LLMEvaluator/evaluate.py``: the first of its config's patterns,
#: ``Output \(a\)`` before ``Output \(b\)``, found anywhere). Where it and ours differ, the reply
#: must be one of these kinds, each checked below.
_THEIRS_A_FIRST = re.compile(r"Output \(a\)")


def _llmbar_completions(root: Path) -> list[tuple[str, str, str | None]]:
    found = []
    for path in sorted(root.glob("*/*/evaluators/*/*/result.json")):
        if path.parent.name.startswith("Rating"):
            continue  # the Rating strategies store two separate ratings, read in the importer
        for instance in json.loads(path.read_text(encoding="utf-8")):
            result = [r for r in instance["results"] if isinstance(r, dict)][-1]
            for swap in ("swap = False", "swap = True"):
                shown = result[swap]["winner"]
                if shown is not None and swap == "swap = True":
                    shown = {"1": "2", "2": "1"}[shown]
                found.append((str(path.parent), result[swap]["completion"][0].strip(), shown))
    return found


@pytest.mark.shared
def test_llmbar_replies_read_as_the_authors_did_except_where_theirs_guesses(
    shared_datasets: Path,
) -> None:
    """Every stored comparison reply of the six judges, both orders, 19,056 replies."""
    replies = _llmbar_completions(shared_datasets / "llmbar")
    assert len(replies) == 19056
    same = differ = 0
    for _, text, theirs in replies:
        verdict = _read(text, "pair_output_ab", Scale((-1, 1)))
        ours = None if verdict.score is None else ("1" if verdict.score > 0 else "2")
        if ours == theirs:
            same += 1
            continue
        differ += 1
        if ours is None:  # we refuse: the reply states both or neither as its own verdict
            assert verdict.status in (Status.INCONSISTENT, Status.UNPARSEABLE)
        elif theirs is None:  # theirs needs a line start; '# Output (a) is better.' has a '#'
            assert re.match(r"#+ Output \([ab]\) is better", text)
        else:  # theirs takes (a) wherever it is mentioned, before any stated (b) verdict
            assert theirs == "1" and ours == "2" and _THEIRS_A_FIRST.search(text)
    assert differ == 48 and same == 19056 - 48  # 0.25 % of the replies
