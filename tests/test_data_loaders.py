"""Dataset loaders on the real shared data, and the demo tables."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit import config
from judgekit.data import (
    EVOUNA_COLUMNS,
    DataError,
    items_from_frame,
    load_evouna,
    make_batches,
    read_table,
)
from judgekit.riddles import (
    RATER_ORDER,
    V1_COLUMNS,
    V1_MODEL_NAMES,
    V2_LONG_COLUMNS,
    load_riddles_v1,
    load_riddles_v2_scores,
    off_scale_labels,
    riddles_v2_wide,
)


@pytest.fixture(scope="module")
def v1(shared_datasets: Path) -> pd.DataFrame:
    return load_riddles_v1(shared_datasets / "hungarian-riddles")


@pytest.mark.shared
def test_v1_shape_ids_and_joins(v1: pd.DataFrame) -> None:
    assert v1.columns.tolist() == list(V1_COLUMNS)
    assert len(v1) == 600
    assert v1["ID"].is_unique
    assert v1["Riddle_ID"].nunique() == 100
    assert sorted(v1["Model"].unique()) == list("ABCDEF")
    assert v1.groupby("Riddle_ID").size().eq(6).all()
    assert v1["ID"].iloc[0] == "Q001-B"  # Answers600.xlsx row 2: riddle 1, model B
    assert v1.index[0] == 2 and v1.index[-1] == 601
    for column in ("Question", "Answer", "Ref_Answer", "Reasoning", "Ref_Reasoning", "Topic"):
        assert v1[column].map(lambda s: isinstance(s, str) and s.strip() != "").all(), column
    assert v1["Model_Name"].tolist() == v1["Model"].map(V1_MODEL_NAMES).tolist()
    assert v1["Topic"].value_counts().eq(60).all() and v1["Topic"].nunique() == 10
    first = v1[v1["ID"] == "Q001-E"].iloc[0]
    assert (first["Ref_Answer"], first["Answer"]) == ("Unicum", "Unicum")
    assert first["Ref_Reasoning"].startswith("Egy keserű likőr")


@pytest.mark.shared
def test_v1_labels_are_kept_as_entered(v1: pd.DataFrame) -> None:
    counts = {c: v1[c].value_counts().to_dict() for c in ("Human_Accuracy", "Human_Reasoning")}
    assert counts["Human_Accuracy"] == {5: 248, 0: 233, 1: 92, 3: 26, 4: 1}
    assert counts["Human_Reasoning"] == {0: 173, 1: 107, 3: 88, 2: 80, 5: 80, 4: 72}
    assert set(v1["Human_Grammar"]) == {0, 1, 2, 3, 4, 5}
    assert v1[["Human_Accuracy", "Human_Reasoning", "Human_Grammar"]].notna().all().all()
    off = off_scale_labels(v1)
    assert off["column"].unique().tolist() == ["Human_Accuracy"]
    assert off["value"].value_counts().to_dict() == {1: 92, 4: 1}
    stray = off[off["value"] == 4]
    assert stray["ID"].str.startswith("Q041-").all()


@pytest.mark.shared
def test_v1_items_and_batches(v1: pd.DataFrame) -> None:
    columns = ["Question", "Answer", "Ref_Answer"]
    items = items_from_frame(v1, columns, source="Answers600.xlsx")
    assert len(items) == 600
    assert set(items[0].fields) == set(columns)
    assert items[0].meta["source_row"] == 2
    assert items[0].meta["Human_Accuracy"] == 0
    assert "Reasoning" in items[0].meta  # not a field of this rubric
    batches = make_batches(items, 60)
    assert len(batches) == 10 and batches[-1].label == "rows 541-600"


@pytest.mark.shared
def test_v1_missing_reference_is_an_error(tmp_path: Path, shared_datasets: Path) -> None:
    source = shared_datasets / "hungarian-riddles"
    for name in ("Answers600.xlsx", "Questions100.xlsx"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    tsv = (source / "100_HU_Riddles_Benchmark_Questions.tsv").read_text(encoding="utf-8")
    kept = [line for line in tsv.split("\n") if not line.startswith("41\t")]
    (tmp_path / "100_HU_Riddles_Benchmark_Questions.tsv").write_text("\n".join(kept), "utf-8")
    with pytest.raises(DataError) as caught:
        load_riddles_v1(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Answers600.xlsx'}: row ")
    assert message.endswith(
        ", column A 'ID': riddle '41' is not in 100_HU_Riddles_Benchmark_Questions.tsv"
    )


@pytest.mark.shared
def test_v2_copy_is_byte_identical(shared_datasets: Path) -> None:
    shared = shared_datasets / "hungarian-riddles" / "scores.csv"
    ours = config.DATA_DIR / "riddles_v2_scores.csv"
    assert (
        hashlib.sha256(ours.read_bytes()).hexdigest()
        == hashlib.sha256(shared.read_bytes()).hexdigest()
    )


def test_v2_long_table() -> None:
    long = load_riddles_v2_scores()
    assert long.columns.tolist() == list(V2_LONG_COLUMNS)
    assert len(long) == 600 * 5 * 3
    assert long["score"].notna().all()
    assert long["output_id"].nunique() == 600 and long["q_id"].nunique() == 100
    assert long["rater"].unique().tolist() == list(RATER_ORDER)
    assert long["dimension"].unique().tolist() == ["accuracy", "reasoning", "grammar"]
    assert set(long["model"]) == {"Claude", "Gemini", "GPT"}
    assert set(long["input"]) == {"API", "UI"}
    assert long.groupby(["output_id", "rater", "dimension"]).size().eq(1).all()
    accuracy = long[long["dimension"] == "accuracy"]
    assert set(accuracy["score"]) == {0, 3, 5}
    assert set(long.loc[long["dimension"] != "accuracy", "score"]).issubset(range(6))
    assert long.groupby("topic")["q_id"].nunique().eq(10).all()
    shifted = long[long["topic"] != long["topic_as_written"]]
    assert shifted["output_id"].nunique() == 8  # one shifted row at 8 of the 9 boundaries
    assert (long.loc[long["output_id"] == "61", "topic_as_written"] == "Hungarikums").all()
    assert (long.loc[long["output_id"] == "61", "topic"] == "Kids’ World").all()


def test_v2_wide_reproduces_the_authors_kappas() -> None:
    wide = riddles_v2_wide()
    assert wide.shape == (600, 5 + 15)
    assert wide["output_id"].tolist() == [str(i) for i in range(1, 601)]
    published = {  # Hungarian_Riddle_Benchmark_v2.md, quadratic weighted kappa vs the author
        "accuracy_Perplexity": 0.896,
        "accuracy_Gemini": 0.918,
        "reasoning_GPT": 0.870,
        "grammar_Gemini": 0.101,
    }
    for column, kappa in published.items():
        human = wide[column.split("_")[0] + "_Human"].astype(int)
        judge = wide[column].astype(int)
        assert cohen_kappa_score(human, judge, weights="quadratic") == pytest.approx(
            kappa, abs=5e-4
        )


def test_v2_bad_score_cell_is_named(tmp_path: Path) -> None:
    lines = (config.DATA_DIR / "riddles_v2_scores.csv").read_text(encoding="utf-8").split("\n")
    cells = lines[3].split(";")
    cells[7] = "4.5"
    lines[3] = ";".join(cells)
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_riddles_v2_scores(path)
    assert (
        str(caught.value) == f"{path}: row 4, column H 'Acc_GPT': score '4.5' is not a whole number"
    )


@pytest.mark.shared
def test_evouna_counts_and_labels(shared_datasets: Path) -> None:
    frame = load_evouna(shared_datasets / "evouna")
    assert frame.columns.tolist() == list(EVOUNA_COLUMNS)
    assert frame.groupby("Dataset").size().to_dict() == {"NQ": 3020 * 5, "TQ": 1938 * 5}
    assert frame["ID"].is_unique
    assert frame["ID"].iloc[0] == "NQ-0001-fid"
    assert not frame["Improper"].any()
    assert str(frame["Human_Correct"].dtype) == "boolean"
    assert frame.attrs["unlabelled_rows"] == 1 == int(frame["Human_Correct"].isna().sum())
    assert frame.loc[frame["Human_Correct"].isna(), "Model"].tolist() == ["newbing"]
    true_counts = frame.groupby(["Dataset", "Model"])["Human_Correct"].sum()
    assert true_counts[("NQ", "gpt4")] == 2381 and true_counts[("TQ", "fid")] == 1580
    assert frame["Ref_Answer"].str.contains("/").any()  # alternatives kept
    assert (frame["Answer"].str.strip() == "").sum() == 6


@pytest.mark.shared
def test_evouna_improper_rows_and_single_file(shared_datasets: Path) -> None:
    everything = load_evouna(shared_datasets / "evouna", include_improper=True)
    assert len(everything) == (3610 + 2000) * 5
    assert int(everything["Improper"].sum()) == (590 + 62) * 5
    tq = load_evouna(shared_datasets / "evouna" / "TQ.json", include_improper=True)
    assert tq.attrs["unlabelled_rows"] == 15 * 5
    assert tq["ID"].iloc[-1] == "TQ-2000-newbing"


@pytest.mark.shared
def test_evouna_items_need_answers_unless_allowed(shared_datasets: Path) -> None:
    frame = load_evouna(shared_datasets / "evouna" / "NQ.json")
    with pytest.raises(DataError, match=r"NQ\.json: record \d+, column B 'Answer': empty cell"):
        items_from_frame(frame[["ID", "Answer", "Question", "Ref_Answer"]], ["Question", "Answer"],
                         source="NQ.json")  # fmt: skip
    items = items_from_frame(frame, ["Question", "Answer", "Ref_Answer"], allow_empty=True)
    assert len(items) == 15100


def test_demo_tables_load_with_their_rubric_columns() -> None:
    riddles = read_table(
        config.DATA_DIR / "demo" / "riddles_demo.csv",
        required=["Question", "Answer", "Ref_Answer", "Reasoning", "Ref_Reasoning"],
    )
    frame = riddles.frame
    assert (riddles.encoding, riddles.separator, len(frame)) == ("utf-8", ";", 24)
    assert set(frame["Human_Accuracy"]) == {0, 3, 5}
    assert set(frame["Human_Reasoning"]) == {0, 1, 2, 3, 4, 5}
    models = frame.groupby("Question")["Model"].agg(lambda s: tuple(sorted(s)))
    assert len(models) == 8 and set(models) == {("model-a", "model-b", "model-c")}
    assert frame["Reasoning"].str.contains("\n").any()
    factual = read_table(
        config.DATA_DIR / "demo" / "factual_demo.csv", required=["Question", "Answer", "Ref_Answer"]
    ).frame
    assert len(factual) == 24 and set(factual["Human_Score"]) == {1, 2, 3, 4}
