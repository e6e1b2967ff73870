"""Property tests: invariants of the parsers over generated replies."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.formats import TOLERANCE_DESCRIPTIONS, parse_reply
from judgekit.formats.tolerances import ToleranceLog
from judgekit.types import Criterion, OutputFormat, ParsedReply, Scale, Status

ACCURACY = Scale(allowed=(0, 3, 5), abstain=(-1,))
WRITTEN_VALUES = (-1, 0, 1, 2, 3, 4, 5, 7, 10)  # on the scale, abstain, and off the scale

settings.register_profile("parsing", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("parsing")


def expected_reading(value: int) -> tuple[Status, float | None]:
    if value in ACCURACY.allowed:
        return Status.OK, float(value)
    if value in ACCURACY.abstain:
        return Status.ABSTAIN, None
    return Status.OUT_OF_RANGE, None


@st.composite
def batches(draw: st.DrawFn) -> dict[str, int]:
    numbers = draw(st.lists(st.integers(1, 999), min_size=1, max_size=12, unique=True))
    return {str(n): draw(st.sampled_from(WRITTEN_VALUES)) for n in numbers}


def parse(text: str, ids: list[str]) -> ParsedReply:
    return parse_reply(text, output_format="id_score_lines", scale=ACCURACY, item_ids=ids)


def reading(parsed: ParsedReply) -> dict[str, tuple[Status, float | None]]:
    return {v.item_id: (v.status, v.score) for v in parsed.verdicts}


PROSE_WORDS = st.text(alphabet=string.ascii_letters + "áéőű", min_size=1, max_size=8)


@st.composite
def prose_lines(draw: st.DrawFn, batch: dict[str, int]) -> str:
    """A sentence that starts with a word and may quote a score line inside or at its end."""
    words = draw(st.lists(PROSE_WORDS, min_size=1, max_size=6))
    if words[0].casefold() == "id":  # "ID 17,5" is a score line with an ID prefix, not prose
        words[0] = "Idea"
    if draw(st.booleans()):
        item_id = draw(st.sampled_from(sorted(batch)))
        quoted = f"{item_id},{draw(st.sampled_from(WRITTEN_VALUES))}"
        words.insert(draw(st.integers(1, len(words))), quoted)
    return " ".join(words)


@given(batch=batches(), data=st.data())
def test_any_order_of_lines_reads_the_same(batch: dict[str, int], data: st.DataObject) -> None:
    ids = list(batch)
    lines = [f"{i},{v}" for i, v in batch.items()]
    shuffled = data.draw(st.permutations(lines))
    parsed = parse("\n".join(shuffled), ids)
    assert reading(parsed) == {i: expected_reading(v) for i, v in batch.items()}
    assert [v.item_id for v in parsed.verdicts] == ids
    assert parsed.tolerances == ()


@given(batch=batches(), data=st.data())
def test_prose_lines_never_change_scores(batch: dict[str, int], data: st.DataObject) -> None:
    ids = list(batch)
    lines = [f"{i},{v}" for i, v in batch.items()]
    for _ in range(data.draw(st.integers(1, 4))):
        lines.insert(data.draw(st.integers(0, len(lines))), data.draw(prose_lines(batch)))
    parsed = parse("\n".join(lines), ids)
    assert reading(parsed) == {i: expected_reading(v) for i, v in batch.items()}
    assert "prose" in parsed.tolerances


@given(
    batch=batches(),
    foreign=st.integers(1, 2000),
    value=st.sampled_from(WRITTEN_VALUES),
    data=st.data(),
)
def test_injected_foreign_id_is_reported_and_never_scored(
    batch: dict[str, int], foreign: int, value: int, data: st.DataObject
) -> None:
    if str(foreign) in batch:
        foreign += 2000
    ids = list(batch)
    lines = [f"{i},{v}" for i, v in batch.items()]
    lines.insert(data.draw(st.integers(0, len(lines))), f"{foreign},{value}")
    parsed = parse("\n".join(lines), ids)
    *expected_part, extra = parsed.verdicts
    assert {v.item_id: (v.status, v.score) for v in expected_part} == {
        i: expected_reading(v) for i, v in batch.items()
    }
    assert (extra.item_id, extra.status, extra.score) == (str(foreign), Status.UNKNOWN_ID, None)


@given(batch=batches())
def test_json_form_reads_like_the_lines(batch: dict[str, int]) -> None:
    ids = list(batch)
    structured = json.dumps({"scores": [{"id": i, "score": v} for i, v in batch.items()]})
    lines = "\n".join(f"{i},{v}" for i, v in batch.items())
    assert reading(parse(structured, ids)) == reading(parse(lines, ids))


@given(batch=batches(), data=st.data())
def test_dropped_and_repeated_lines(batch: dict[str, int], data: st.DataObject) -> None:
    ids = list(batch)
    dropped = data.draw(st.sets(st.sampled_from(ids)))
    repeated = data.draw(st.sets(st.sampled_from(ids)))
    lines = [f"{i},{v}" for i, v in batch.items() if i not in dropped]
    lines += [f"{i},{batch[i]}" for i in repeated if i not in dropped]
    parsed = parse("\n".join(lines), ids)
    for verdict in parsed.verdicts:
        if verdict.item_id in dropped and len(dropped) < len(ids):
            assert verdict.status is Status.MISSING
        elif verdict.item_id in dropped:
            assert verdict.status is Status.UNPARSEABLE
        else:
            assert (verdict.status, verdict.score) == expected_reading(batch[verdict.item_id])


FUZZ_ALPHABET = string.digits + ",;:-=|#*`./ \n\t{}[]\"'abcIDSCORErating" + "\r\ufeff\u2212"


def check_invariants(parsed: ParsedReply, ids: list[str], scale: Scale) -> None:
    expected_part = parsed.verdicts[: len(ids)]
    assert [v.item_id for v in expected_part] == ids
    assert all(v.status is Status.UNKNOWN_ID for v in parsed.verdicts[len(ids) :])
    assert all(v.status is not Status.UNKNOWN_ID for v in expected_part)
    for verdict in parsed.verdicts:
        assert (verdict.score is not None) == (verdict.status is Status.OK)
        if verdict.score is not None:
            assert verdict.score in scale.allowed
        if verdict.status is not Status.OK:
            assert verdict.reason
    assert set(parsed.tolerances) <= set(TOLERANCE_DESCRIPTIONS)
    assert len(set(parsed.tolerances)) == len(parsed.tolerances)


@pytest.mark.parametrize("output_format", ["id_score_lines", "rating_json", "score_line"])
@given(text=st.text(alphabet=FUZZ_ALPHABET, max_size=80) | st.text(max_size=80))
def test_fuzzed_replies_keep_every_invariant(output_format: OutputFormat, text: str) -> None:
    ids = ["1", "2", "3"] if output_format == "id_score_lines" else ["1"]
    scale = Scale(allowed=(1, 2, 3, 4), abstain=(-1,))
    parsed = parse_reply(text, output_format=output_format, scale=scale, item_ids=ids)
    check_invariants(parsed, ids, scale)


@given(value=st.integers(-5, 15) | st.floats(-5, 15, allow_nan=False).map(lambda x: round(x, 1)))
def test_rating_status_follows_the_scale(value: float) -> None:
    scale = Scale(allowed=tuple(range(11)), abstain=(-1,))
    text = json.dumps({"rating": value, "reason": "because"})
    (verdict,) = parse_reply(
        text, output_format="rating_json", scale=scale, item_ids=["x"]
    ).verdicts
    if float(value).is_integer() and int(value) in scale.allowed:
        assert verdict.score == float(value)
    elif value == -1:
        assert verdict.status is Status.ABSTAIN
    else:
        assert verdict.status is Status.OUT_OF_RANGE


@given(
    weights=st.lists(st.integers(1, 10), min_size=1, max_size=5),
    data=st.data(),
)
def test_direct_scoring_trusts_only_consistent_overalls(
    weights: list[int], data: st.DataObject
) -> None:
    criteria = tuple(Criterion(f"c{i}", float(w), "d") for i, w in enumerate(weights))
    scores = [data.draw(st.integers(1, 5)) for _ in criteria]
    mean = sum(w * s for w, s in zip(weights, scores, strict=True)) / sum(weights)
    offset = data.draw(st.sampled_from([0.0, 0.04, -0.04, 0.06, -0.06, 1.0]))
    reply = {
        "scores": [
            {"criterion": c.name, "score": s, "maxScore": 5}
            for c, s in zip(criteria, scores, strict=True)
        ],
        "overallScore": round(mean + offset, 6),
    }
    (verdict,) = parse_reply(
        json.dumps(reply),
        output_format="direct_scoring_json",
        scale=Scale(allowed=(1, 2, 3, 4, 5)),
        item_ids=["x"],
        criteria=criteria,
    ).verdicts
    if abs(offset) < 0.05:
        assert verdict.status is Status.OK
        assert verdict.score == pytest.approx(mean + offset)
    else:
        assert verdict.status is Status.INCONSISTENT
        assert verdict.details["overall_recomputed"] == pytest.approx(mean)


@given(text=st.text(max_size=120))
def test_direct_scoring_never_raises_on_arbitrary_text(text: str) -> None:
    (verdict,) = parse_reply(
        text,
        output_format="direct_scoring_json",
        scale=Scale(allowed=(1, 2, 3, 4, 5)),
        item_ids=["x"],
        criteria=(Criterion("c", 1.0, "d"),),
    ).verdicts
    assert verdict.status in (Status.UNPARSEABLE, Status.INCONSISTENT, Status.OK, Status.DUPLICATE)


def test_tolerance_log_rejects_undocumented_names() -> None:
    log = ToleranceLog()
    log.add("prose")
    log.add("prose")
    assert log.as_tuple() == ("prose",)
    with pytest.raises(KeyError, match="undocumented"):
        log.add("made_up")
