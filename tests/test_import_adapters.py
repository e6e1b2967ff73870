"""The import adapters on real files of other tools (tests/fixtures/imports/README.md cites them).

Each expectation is computed from the source file itself, read here independently of the
adapter, or is the figure the tool published in the file (inspect_ai's accuracy).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from judgekit.importers import ImportOptions, get_adapter
from judgekit.types import UsageError

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def _read(adapter: str, name: str, **options: object) -> object:
    return get_adapter(adapter)([FIXTURES / name], ImportOptions(**options))  # type: ignore[arg-type]


def test_fastchat_single_scores_and_failed_ratings() -> None:
    lines = [json.loads(x) for x in (FIXTURES / "fastchat_gpt-4_single.jsonl").open()]
    result = _read("fastchat-single", "fastchat_gpt-4_single.jsonl")
    table = result.judgments.set_index("item_id")
    assert len(table) == len(lines) == 16
    for line in lines:
        row = table.loc[f"q{line['question_id']}-{line['model']}-t{line['turn']}"]
        assert row["judge"] == line["judge"][0] and row["question"] == str(line["question_id"])
        if line["score"] == -1:  # FastChat found no [[rating]]: a status, never a number
            assert row["status"] == "unparseable" and np.isnan(row["score"])
        else:
            assert row["status"] == "ok" and row["score"] == line["score"]
        assert row["raw_reply"] == line["judgment"]
    assert (table["status"] == "unparseable").sum() == 4
    assert set(result.items.columns) >= {"ID", "Question", "Model", "Turn", "Judge_prompt"}


def test_fastchat_judgments_read_again_by_a_rubric_marker() -> None:
    """With --format score_line and FastChat's marker the judgments are read as live replies."""
    from judgekit.study.importing import FormatReader

    reader = FormatReader("score_line", "1-10", "Rating: [[N]]")
    result = _read("fastchat-single", "fastchat_gpt-4_single.jsonl", reader=reader)
    lines = [json.loads(x) for x in (FIXTURES / "fastchat_gpt-4_single.jsonl").open()]
    table = result.judgments.set_index("item_id")
    for line in lines:
        row = table.loc[f"q{line['question_id']}-{line['model']}-t{line['turn']}"]
        if line["score"] == -1:  # FastChat's reader found no rating; neither does judgekit's
            assert row["status"] == "unparseable" and np.isnan(row["score"])
        else:
            assert row["status"] == "ok" and row["score"] == line["score"]
    assert result.notes[0].startswith("4 of 16 replies (25.0%) not read: unparseable 4")


@pytest.mark.parametrize(
    "name", ["alpaca_eval_weighted_alpaca-7b.json", "alpaca_eval_gpt4_alpaca-7b.json"]
)
def test_alpaca_eval_win_rates_as_alpaca_eval_computes_them(name: str) -> None:
    """A pair (A = the baseline's output_1, B = output_2); the raw preference kept; the mean
    P(B better) is AlpacaEval's weighted win rate, B wins plus half the ties its discrete one."""
    records = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    result = _read("alpaca_eval", name)
    table = result.judgments
    assert result.pairwise and len(table) == len(records) == 12
    prefs = np.array([float(r["preference"]) for r in records])
    p = np.clip(np.where(prefs == 0, 1.5, prefs) - 1, 0, 1)
    assert table["win_probability"].mean() == pytest.approx(p.mean(), abs=1e-12)
    decisions = np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))
    wins = table["verdict"].map({"b": 1.0, "a": 0.0, "tie": 0.5})
    assert wins.mean() == pytest.approx(decisions.mean())
    assert sorted(table["preference"].astype(float)) == sorted(prefs)
    assert set(table["order"]) == {"ab"} and table["score"].isna().all()
    assert set(table["judge"]) == {records[0]["annotator"]}
    assert set(table["model_b"]) == {"alpaca-7b"} and set(table["model_a"]) == {
        records[0]["generator_1"]
    }
    assert table["item_id"].is_unique
    assert set(result.items.columns) >= {"Question", "Answer_A", "Answer_B"}


def test_inspect_ai_json_log_reproduces_its_accuracy() -> None:
    log = json.loads((FIXTURES / "inspect_popularity.json").read_text(encoding="utf-8"))
    published = log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    result = _read("inspect_ai", "inspect_popularity.json")
    table = result.judgments
    assert len(table) == log["results"]["total_samples"] == 3
    assert table["score"].mean() == pytest.approx(published)
    assert set(table["rubric"]) == {log["eval"]["task"]}
    assert set(table["answer_model"]) == {log["eval"]["model"]}


def test_inspect_ai_eval_zip() -> None:
    with zipfile.ZipFile(FIXTURES / "inspect_log_formats.eval") as archive:
        sample = json.loads(archive.read("samples/1_epoch_1.json"))
    result = _read("inspect_ai", "inspect_log_formats.eval")
    row = result.judgments.iloc[0]
    assert len(result.judgments) == 1 and row["item_id"] == str(sample["id"])
    assert row["score"] == {"C": 1.0, "I": 0.0}[sample["scores"]["match"]["value"]]


def test_promptfoo_model_graded_assertions_only() -> None:
    export = json.loads((FIXTURES / "promptfoo_sample-export.json").read_text(encoding="utf-8"))
    graded = [
        (r["testIdx"], r["provider"]["id"], c["score"])
        for r in export["results"]["results"]
        for c in r["gradingResult"]["componentResults"]
        if c["assertion"]["type"] == "llm-rubric"
    ]
    result = _read("promptfoo", "promptfoo_sample-export.json")
    table = result.judgments
    assert sorted(zip(table["item_id"], table["score"], strict=True)) == sorted(
        (f"t{t}-{p}", float(s)) for t, p, s in graded
    )
    assert set(table["judge"]) == {"llm-rubric"}  # cost, latency, contains: not a judge


@pytest.mark.parametrize(
    ("adapter", "name"),
    [
        ("alpaca_eval", "fastchat_gpt-4_single.jsonl"),
        ("fastchat-single", "alpaca_eval_gpt4_alpaca-7b.json"),
        ("inspect_ai", "promptfoo_sample-export.json"),
        ("promptfoo", "inspect_popularity.json"),
    ],
)
def test_a_file_of_another_format_is_one_line(adapter: str, name: str) -> None:
    with pytest.raises(UsageError, match="not") as caught:
        _read(adapter, name)
    assert "\n" not in str(caught.value) and name in str(caught.value)
