"""The package helpers the report notebooks open with and print through."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgekit.data import DataError
from judgekit.stats.agreement import cohen_kappa
from judgekit.study.folder import figure_notes, open_report


def _long(judge: list[float], human: list[float]) -> pd.DataFrame:
    items = [str(i) for i in range(len(judge))]
    return pd.DataFrame(
        {
            "item": items * 2,
            "rater": ["judge"] * len(judge) + ["human"] * len(human),
            "score": judge + human,
            "status": "ok",
        }
    )


def test_an_undefined_kappa_is_named_with_its_reason_not_shown_as_a_number() -> None:
    constant_human = _long([0, 3, 5, 3, 0, 5, 3, 0, 5, 3, 0, 5], [3.0] * 12)
    kappa = cohen_kappa(constant_human, "judge", "human", scale=(0, 3, 5), weights="quadratic")
    assert np.isnan(kappa["estimate"].iloc[0])
    lines = figure_notes(kappa.assign(rubric="accuracy"), ["rubric", "rater_a"])
    assert lines == ["accuracy · judge: undefined: rater human constant"]


def test_a_defined_figure_with_a_note_shows_its_value_and_unnoted_rows_stay_quiet() -> None:
    table = pd.DataFrame(
        {
            "rubric": ["a", "b"],
            "estimate": [0.8125, 0.5],
            "note": ["interval degenerate: n < 10", ""],
        }
    )
    assert figure_notes(table, ["rubric"]) == ["a: estimate 0.812; interval degenerate: n < 10"]
    assert figure_notes(table.drop(columns="note"), ["rubric"]) == []
    p_values = table.rename(columns={"estimate": "p_value"})
    assert figure_notes(p_values, ["rubric"], value="p_value")[0].startswith("a: p_value 0.812")


def test_a_missing_study_is_one_line_and_creates_no_output_folder(tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    with pytest.raises(DataError, match="no such study folder") as raised:
        open_report("x", str(tmp_path / "absent"), output_dir=str(tables))
    assert "\n" not in str(raised.value)
    assert not tables.exists()
