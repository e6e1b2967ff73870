"""The pairwise data contract: pair tables, human labels, per-pair outcomes and views."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgekit.data.errors import DataError
from judgekit.data.pairwise import (
    PairOutcome,
    pair_items,
    pair_outcomes,
    read_pair_items,
    read_pair_label,
    unswap,
    view_consistent_only,
    view_inconsistent_as_tie,
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_aliases_a_user_would_write_are_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "ID,Prompt,Response A,Response B,Model 1,Model 2,Reference,winner\n"
        "1,Add 2+2,4,5,m1,m2,4,A\n2,Name a colour,red,blue,m1,m3,,Tie\n",
    )
    frame = read_pair_items(path, label_column="winner")
    assert {"Question", "Answer_A", "Answer_B", "Model_A", "Model_B", "Ref_Answer"} <= set(frame)
    assert frame["label"].tolist() == ["a", "tie"]
    ab, ba = pair_items(frame, source="pairs.csv"), pair_items(frame, source="x", order="ba")
    assert ab[0].fields["Answer_A"] == "4" and ba[0].fields["Answer_A"] == "5"
    assert ba[0].meta["Model_A"] == "m1" and ba[0].meta["order"] == "ba"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ID,Question,Answer_A\n1,q,x\n", "required column 'Answer_B' is missing"),
        ("ID,Question,Answer_A,Answer_B\n1,q,x, x \n", "row 2, column D 'Answer_B': the same"),
        ("ID,Question,Answer_A,Answer_B\n1,q,x,y\n2,q,,y\n", "row 3, column C 'Answer_A': empty"),
        ("ID,Question,Answer_A,Answer_B,w\n1,q,x,y,maybe\n", "row 2, column 'w': 'maybe' is not"),
    ],
)
def test_bad_pair_files_fail_in_one_line(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as caught:
        read_pair_items(path, label_column="w" if ",w" in text else None)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)) and expected in message


def test_labels_accept_pandalm_codes_and_refuse_others() -> None:
    assert [read_pair_label(v, source="f", row=2, column="c") for v in (1, 2.0, 0, "b")] == [
        "a", "b", "tie", "b",
    ]  # fmt: skip
    with pytest.raises(DataError, match=r"f: row 7, column 'c': '3' is not a side"):
        read_pair_label("3", source="f", row=7, column="c")


def _comparisons(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["pair_id", "order", "verdict", "status"])
    return frame.assign(judge="j", variant="base", run=1, reason="", model_a="x", model_b="y")


def test_every_outcome_is_kept_apart() -> None:
    frame = _comparisons(
        [
            ("win", "ab", "a", "ok"), ("win", "ba", "a", "ok"),
            ("tie", "ab", "tie", "ok"), ("tie", "ba", "tie", "ok"),
            ("flip", "ab", "a", "ok"), ("flip", "ba", "tie", "ok"),
            ("half", "ab", "b", "ok"), ("half", "ba", "", "unparseable"),
            ("none", "ab", "", "unparseable"), ("none", "ba", "", "error"),
            ("single", "ab", "b", "ok"),
        ]
    )  # fmt: skip
    outcomes = pair_outcomes(frame).set_index("pair_id")
    assert outcomes["outcome"].to_dict() == {
        "win": PairOutcome.CONSISTENT_WIN, "tie": PairOutcome.CONSISTENT_TIE,
        "flip": PairOutcome.INCONSISTENT, "half": PairOutcome.ONE_UNPARSED,
        "none": PairOutcome.BOTH_UNPARSED, "single": PairOutcome.ONE_ORDER,
    }  # fmt: skip
    assert outcomes["winner"].to_dict() == {
        "win": "a", "tie": "tie", "flip": "", "half": "", "none": "", "single": "b",
    }  # fmt: skip
    mtbench = view_inconsistent_as_tie(outcomes.reset_index()).set_index("pair_id")
    assert mtbench.loc["flip", "winner"] == "tie" and mtbench.loc["half", "winner"] == ""
    assert mtbench.loc["half", "dropped_reason"] == "one_unparsed"
    strict = view_consistent_only(outcomes.reset_index()).set_index("pair_id")
    assert strict.loc["flip", "dropped_reason"] == "inconsistent"


def test_a_verdict_without_ok_status_is_refused() -> None:
    with pytest.raises(DataError, match="if and only if"):
        pair_outcomes(_comparisons([("p", "ab", "a", "unparseable")]))
    with pytest.raises(DataError, match="appear twice"):
        pair_outcomes(_comparisons([("p", "ab", "a", "ok"), ("p", "ab", "b", "ok")]))


def test_unswap_maps_the_shown_order_back() -> None:
    assert [unswap(v, "ba") for v in ("a", "b", "tie")] == ["b", "a", "tie"]
    with pytest.raises(ValueError, match="expected"):
        unswap("c", "ab")
