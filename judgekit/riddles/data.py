"""The Hungarian Riddles Benchmark by Károly Boczka (v1 pilot texts, v2 human and judge scores).

Source: https://github.com/boczkakaroly/ai-and-data-projects (see ``data/README.md`` and the
shared dataset's ``SOURCE.md`` for commits and licence).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit import config
from judgekit.data.errors import DataError
from judgekit.data.tables import read_table
from judgekit.types import CANONICAL_COLUMNS

#: v1 model letters as the v1 README names them.
V1_MODEL_NAMES: Mapping[str, str] = {
    "A": "GPT-5 Deep Search",
    "B": "Claude Sonnet 4",
    "C": "Gemini 2.5 Flash",
    "D": "Grok",
    "E": "GPT-5",
    "F": "DeepSeek R1",
}

#: The rubric scales of the human label columns (seed 001 accuracy, seed 000 reasoning, grammar).
RIDDLE_LABEL_SCALES: Mapping[str, tuple[int, ...]] = {
    "Human_Accuracy": (0, 3, 5),
    "Human_Reasoning": (0, 1, 2, 3, 4, 5),
    "Human_Grammar": (0, 1, 2, 3, 4, 5),
}

#: The v1 pilot's labels put on the study's own rubric scales (``--label-map riddles-v1``).
#: v1 scored accuracy 0/1/3/5 (v1 README); the v2 study's scale is 0/3/5 (its "Scoring
#: Rules.txt") and its score table records every answer that is not at least partly right as 0:
#: its 206 zeros are the write-up's 194 hallucinations plus 12 "I don't know" answers
#: (Hungarian_Riddle_Benchmark_v2.md, sections 2.3 and 4.2.1). The v1 1s are such answers: 17
#: "Nem tudom" ("I don't know") and 75 answers other than the reference, so 1 -> 0. The one 4
#: (Q041-A, the right bus with an added stop) has no level on either scale and no source says
#: where it goes: it is left unlabelled (``None``). Reasoning and grammar are on scale already.
V1_LABEL_MAPS: Mapping[str, Mapping[int, int | None]] = {"Human_Accuracy": {1: 0, 4: None}}

#: Rater suffixes of the v2 score columns and the rater each one names.
V2_RATERS: Mapping[str, str] = {
    "Hum": "Human",
    "Per": "Perplexity",
    "GPT": "GPT",
    "Gemini": "Gemini",
    "Gem": "Gemini",
    "Cla": "Claude",
}
V2_DIMENSIONS: Mapping[str, str] = {"Acc": "accuracy", "Rea": "reasoning", "Gra": "grammar"}
RATER_ORDER: tuple[str, ...] = ("Human", "Perplexity", "GPT", "Gemini", "Claude")
V1_COLUMNS: tuple[str, ...] = (
    *CANONICAL_COLUMNS,
    "Riddle_ID",
    "Model",
    "Model_Name",
    "Topic",
    "Question_EN",
    "Human_Accuracy",
    "Human_Reasoning",
    "Human_Grammar",
)
V2_LONG_COLUMNS: tuple[str, ...] = (
    "output_id",
    "q_id",
    "model",
    "input",
    "topic",
    "topic_as_written",
    "rater",
    "dimension",
    "score",
)
_SCORE_HEADER = re.compile(r"(Acc|Rea|Gra)_(\w+)")


def load_riddles_v1(riddles_dir: str | Path = config.RIDDLES_DIR) -> pd.DataFrame:
    """Load the v1 pilot: 600 model outputs (100 riddles x models A-F) with one human's labels.

    Joins ``Answers600.xlsx`` (answers, reasoning texts, labels) to ``Questions100.xlsx``
    (riddle, topic, reference answer) and to the v2 ``100_HU_Riddles_Benchmark_Questions.tsv``
    (reference reasoning), all on the riddle number.

    Choices made:

    * ``ID`` is ``Q<riddle, 3 digits>-<model letter>`` (``Q001-A``), unique per output.
    * Rows keep the order of ``Answers600.xlsx`` (the order the human scored in); the index,
      named ``row``, is the row in that file, so errors and ``Item.meta["source_row"]``
      point back to it.
    * ``Ref_Answer`` is the v1 reference (what the human rated against). The v2 file spells
      eight of them out in full (``Pityke`` -> ``Pityke őrmester``) and rewrote riddle 2; its
      ``Ref_Reasoning`` is used as is, since the expected answer did not change.
    * Labels are kept exactly as the author entered them: ``Human_Accuracy`` holds 0, 3, 5
      and also 1 (92 rows, a level seed 001's 0/3/5 scale lacks) and one 4 (riddle 41).
      Use :func:`off_scale_labels` to list such values.

    Args:
        riddles_dir: Folder holding the three files.

    Returns:
        A frame with columns :data:`V1_COLUMNS`; labels as nullable integers.

    Raises:
        DataError: If a file is unreadable or a riddle lacks a question or reference text.
    """
    folder = Path(riddles_dir)
    answers = read_table(folder / "Answers600.xlsx", id_column=None).frame
    questions = read_table(folder / "Questions100.xlsx", required=["Question", "Ref_Answer"]).frame
    v2_path = folder / "100_HU_Riddles_Benchmark_Questions.tsv"
    reasoning = read_table(v2_path, required=["Ref_Reasoning"]).frame
    answers_source = str(folder / "Answers600.xlsx")
    for name in ("ID", "Model", "Answer", "Reasoning"):
        if name not in answers.columns:
            raise DataError(answers_source, f"required column '{name}' is missing", row=1)
    by_riddle = questions.set_index("ID")
    ref_reasoning = reasoning.set_index("ID")["Ref_Reasoning"]
    for position, riddle in enumerate(answers["ID"]):
        for known, what in (
            (by_riddle.index, "Questions100.xlsx"),
            (ref_reasoning.index, v2_path.name),
        ):
            if riddle not in known:
                raise DataError(
                    answers_source,
                    f"riddle '{riddle}' is not in {what}",
                    row=int(answers.index[position]),
                    column="ID",
                    position=0,
                )
    riddle = answers["ID"]
    frame = pd.DataFrame(
        {
            "ID": [f"Q{int(r):03d}-{m}" for r, m in zip(riddle, answers["Model"], strict=True)],
            "Question": riddle.map(by_riddle["Question"]),
            "Answer": answers["Answer"],
            "Ref_Answer": riddle.map(by_riddle["Ref_Answer"]),
            "Reasoning": answers["Reasoning"],
            "Ref_Reasoning": riddle.map(ref_reasoning),
            "Riddle_ID": riddle.astype(int),
            "Model": answers["Model"],
            "Model_Name": answers["Model"].map(V1_MODEL_NAMES),
            "Topic": riddle.map(by_riddle["Topic"]),
            "Question_EN": riddle.map(by_riddle["Riddle in ENG"]),
            "Human_Accuracy": answers["Factual Accuracy"].astype("Int64"),
            "Human_Reasoning": answers["Justification"].astype("Int64"),
            "Human_Grammar": answers["Grammar & Style"].astype("Int64"),
        },
        index=answers.index,
    )
    return frame


def off_scale_labels(
    frame: pd.DataFrame,
    scales: Mapping[str, Sequence[int]] = RIDDLE_LABEL_SCALES,
    *,
    id_column: str = "ID",
) -> pd.DataFrame:
    """List label values that are not on their rubric's scale (missing values are not listed).

    Args:
        frame: A table with label columns, e.g. from :func:`load_riddles_v1`.
        scales: Allowed values per label column; columns absent from ``frame`` are skipped.
        id_column: Column naming each row.

    Returns:
        One row per off-scale cell: ``ID``, ``column``, ``value``, ``allowed`` (as text).
    """
    found = []
    for column, allowed in scales.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        bad = values.notna() & ~values.isin(list(allowed))
        for identifier, value in zip(frame.loc[bad, id_column], values[bad], strict=True):
            allowed_text = "/".join(str(a) for a in allowed)
            found.append((identifier, column, value, allowed_text))
    return pd.DataFrame(found, columns=["ID", "column", "value", "allowed"])


def load_riddles_v2_scores(
    path: str | Path = config.DATA_DIR / "riddles_v2_scores.csv",
) -> pd.DataFrame:
    """Load the v2 scores (600 outputs x 5 raters x 3 dimensions) as a long table.

    The file's ``Expected`` column holds the topic and is shifted by one row at 8 of
    the 9 topic boundaries; ``topic`` is therefore the most common ``Expected`` value among the six
    outputs of the same riddle, and ``topic_as_written`` keeps the cell as it is.

    Args:
        path: The ``scores.csv`` file (``;``-separated, trailing empty columns allowed).

    Returns:
        Columns :data:`V2_LONG_COLUMNS`, ordered by output, dimension, then rater
        (:data:`RATER_ORDER`); ``score`` is a nullable integer.

    Raises:
        DataError: On an unknown score column, a non-numeric score or a missing column.
    """
    table = read_table(path, required=["Q_ID", "Model", "Input", "Expected"])
    frame, source = table.frame, str(table.path)
    score_columns = []
    for position, header in enumerate(frame.columns):
        match = _SCORE_HEADER.fullmatch(str(header))
        if match is None:
            continue
        prefix, suffix = match.groups()
        if suffix not in V2_RATERS:
            problem = f"unknown rater suffix '{suffix}' (known: {', '.join(V2_RATERS)})"
            raise DataError(source, problem, row=1, column=str(header), position=position)
        for row, value in frame[header].items():
            if not _is_whole_or_missing(value):
                raise DataError(
                    source,
                    f"score '{value}' is not a whole number",
                    row=int(str(row)),
                    column=str(header),
                    position=position,
                )
        frame[header] = pd.to_numeric(frame[header].replace("", None)).astype("Int64")
        score_columns.append((header, V2_DIMENSIONS[prefix], V2_RATERS[suffix]))
    topic = frame.groupby("Q_ID")["Expected"].agg(lambda s: s.value_counts().index[0])
    parts = []
    for header, dimension, rater in score_columns:
        parts.append(
            pd.DataFrame(
                {
                    "output_id": frame["ID"],
                    "q_id": frame["Q_ID"].astype("Int64"),
                    "model": frame["Model"],
                    "input": frame["Input"],
                    "topic": frame["Q_ID"].map(topic),
                    "topic_as_written": frame["Expected"],
                    "rater": rater,
                    "dimension": dimension,
                    "score": frame[header].astype("Int64"),
                    "_order": range(len(frame)),
                }
            )
        )
    long = pd.concat(parts, ignore_index=True)
    long["dimension"] = pd.Categorical(long["dimension"], categories=list(V2_DIMENSIONS.values()))
    long["rater"] = pd.Categorical(long["rater"], categories=list(RATER_ORDER))
    long = long.sort_values(["_order", "dimension", "rater"], kind="stable")
    long["dimension"] = long["dimension"].astype(str)
    long["rater"] = long["rater"].astype(str)
    return long.drop(columns="_order").reset_index(drop=True)[list(V2_LONG_COLUMNS)]


def _is_whole_or_missing(value: object) -> bool:
    if isinstance(value, str):
        return not value.strip() or value.strip().lstrip("+-").isdigit()
    if isinstance(value, float):
        return math.isnan(value) or value.is_integer()
    return value is None or value is pd.NA or isinstance(value, int | np.integer)


def riddles_v2_wide(path: str | Path = config.DATA_DIR / "riddles_v2_scores.csv") -> pd.DataFrame:
    """Load the v2 scores with one row per output and one ``<dimension>_<rater>`` column per score.

    Args:
        path: The ``scores.csv`` file.

    Returns:
        Columns ``output_id, q_id, model, input, topic`` then ``accuracy_Human`` ...
        ``grammar_Claude`` (dimension-major, raters in :data:`RATER_ORDER`).
    """
    long = load_riddles_v2_scores(path)
    long["column"] = long["dimension"] + "_" + long["rater"]
    keys = ["output_id", "q_id", "model", "input", "topic"]
    wide = long.pivot(index=keys, columns="column", values="score")
    order = [f"{d}_{r}" for d in V2_DIMENSIONS.values() for r in RATER_ORDER]
    wide = wide[[c for c in order if c in wide.columns]].reset_index()
    wide.columns.name = None
    first_seen = {k: i for i, k in enumerate(dict.fromkeys(long["output_id"]))}
    return wide.sort_values("output_id", key=lambda s: s.map(first_seen)).reset_index(drop=True)
