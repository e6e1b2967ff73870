"""EVOUNA (Wang et al., "Evaluating Open-QA Evaluation", NeurIPS 2023 Datasets and Benchmarks).

Source: https://github.com/wangcunxiang/QA-Eval (``EVOUNA/NQ.json``, ``EVOUNA/TQ.json``),
Apache-2.0. Each question was answered by five QA systems and each answer was judged
correct or not by humans, which makes it a ready-made test of a judge's agreement.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit import config
from judgekit.data.errors import DataError

logger = logging.getLogger(__name__)

#: The answering systems, in the files' order.
EVOUNA_MODELS: tuple[str, ...] = ("fid", "gpt35", "chatgpt", "gpt4", "newbing")
EVOUNA_FILES: tuple[str, ...] = ("NQ.json", "TQ.json")
EVOUNA_COLUMNS: tuple[str, ...] = (
    "ID",
    "Question",
    "Answer",
    "Ref_Answer",
    "Model",
    "Human_Correct",
    "Dataset",
    "Question_Number",
    "Improper",
)


def _human_label(value: Any, source: str, record: int, model: str) -> bool | None:
    if isinstance(value, bool):
        return value
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    if missing or (isinstance(value, str) and value.strip().lower() == "nan"):
        return None
    raise DataError(
        source,
        f"human judgement {value!r} is neither true, false nor missing",
        row=f"record {record}",
        column=f"judge_{model}",
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _load_file(path: Path, include_improper: bool) -> pd.DataFrame:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(path, f"not a readable EVOUNA JSON file ({error})") from None
    if not isinstance(records, list):
        raise DataError(path, "expected a JSON list of questions")
    dataset = path.stem
    rows = []
    for number, record in enumerate(records, start=1):
        improper = bool(record.get("improper", False))
        if improper and not include_improper:
            continue
        for model in EVOUNA_MODELS:
            if f"answer_{model}" not in record:
                raise DataError(
                    path, "key is missing", row=f"record {number}", column=f"answer_{model}"
                )
            label = _human_label(record.get(f"judge_{model}"), str(path), number, model)
            rows.append(
                {
                    "ID": f"{dataset}-{number:04d}-{model}",
                    "Question": _text(record.get("question")),
                    "Answer": _text(record.get(f"answer_{model}")),
                    "Ref_Answer": _text(record.get("golden_answer")),
                    "Model": model,
                    "Human_Correct": label,
                    "Dataset": dataset,
                    "Question_Number": number,
                    "Improper": improper,
                }
            )
    return pd.DataFrame(rows, columns=list(EVOUNA_COLUMNS))


def load_evouna(
    path: str | Path = config.EVOUNA_DIR, *, include_improper: bool = False
) -> pd.DataFrame:
    """Load EVOUNA as one row per (question, answering system).

    ``ID`` is ``<dataset>-<question number in the file, 4 digits>-<system>``
    (``NQ-0001-gpt4``); numbers count every question in the file, so IDs do not change with
    ``include_improper``. ``Ref_Answer`` keeps the '/'-separated alternatives. Human
    judgements that are null or NaN in the file become ``<NA>`` in the nullable boolean
    ``Human_Correct``: such rows are kept, logged and counted in
    ``frame.attrs["unlabelled_rows"]``. A missing answer or golden answer becomes "".

    Real counts (checked by the tests): NQ has 3,020 proper questions (15,100 rows, one
    unlabelled, 6 with an empty or blank answer), TQ has 1,938 (9,690 rows, all labelled).

    Args:
        path: ``NQ.json``, ``TQ.json``, or a folder holding both (loaded NQ first).
        include_improper: Keep the questions the authors flagged ``improper``.

    Returns:
        Columns :data:`EVOUNA_COLUMNS`.

    Raises:
        DataError: If a file is unreadable or holds an unexpected judgement value.
    """
    source = Path(path)
    files = [source / name for name in EVOUNA_FILES] if source.is_dir() else [source]
    for file in files:
        if not file.is_file():
            raise DataError(file, "file not found")
    frame = pd.concat([_load_file(f, include_improper) for f in files], ignore_index=True)
    frame["Human_Correct"] = frame["Human_Correct"].astype("boolean")
    frame["Question_Number"] = frame["Question_Number"].astype("int64")
    frame["Improper"] = frame["Improper"].astype(bool)
    unlabelled = int(frame["Human_Correct"].isna().sum())
    frame.attrs["unlabelled_rows"] = unlabelled
    if unlabelled:
        logger.info(
            "EVOUNA %s: %d of %d rows have no human judgement", source, unlabelled, len(frame)
        )
    return frame
