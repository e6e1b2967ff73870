"""``--from inspect_ai``: inspect_ai eval logs (``.json``, or the zipped ``.eval`` format).

Each sample's ``scores`` hold one value per scorer (a model-graded scorer is the judge):
``C``/``I``/``P``/``N`` read as inspect_ai's ``value_to_float`` reads them (1, 0, 0.5, 0),
``yes``/``no`` and booleans as 1/0, numbers as they are; a dict of values gives one judge per
key (``scorer.key``); anything else is status ``unparseable``. The sample ID is the item, its
epoch the run, the eval's model the answering model and the task the rubric.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.rows import judgments_table, records
from judgekit.types import Status, UsageError

WHAT = "an inspect_ai eval log (.json or .eval)"
LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}


def score_value(value: Any) -> float:
    """A score value as inspect_ai's ``value_to_float`` reads it (NaN: not a score).

    >>> [score_value(v) for v in ("C", "I", "P", True, 7, "x")]
    [1.0, 0.0, 0.5, 1.0, 7.0, nan]
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in LETTERS or text.lower() in LETTERS:
            return LETTERS.get(text, LETTERS.get(text.lower(), np.nan))
        try:
            return float(text)
        except ValueError:
            return float("nan")
    return float("nan")


def _log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The log's ``eval`` header and its samples."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                header = json.loads(archive.read("header.json"))
                names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
                samples = [json.loads(archive.read(n)) for n in names]
        else:
            header = json.loads(path.read_text(encoding="utf-8"))
            samples = header.get("samples") or [] if isinstance(header, dict) else []
    except (KeyError, ValueError, UnicodeDecodeError, zipfile.BadZipFile):
        raise UsageError(f"{path}: cannot read it as {WHAT}") from None
    if not isinstance(header, dict) or "eval" not in header:
        raise UsageError(
            f"{path}: no 'eval' header, so this is not {WHAT}; name its adapter with --from"
        )
    return header["eval"], samples


def _text(value: Any) -> str:
    if isinstance(value, list):  # chat messages: the first one's content
        first = value[0] if value else {}
        return str(first.get("content", "")) if isinstance(first, dict) else str(first)
    return str(value)


def _scores(sample: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    for scorer, result in (sample.get("scores") or {}).items():
        value = result.get("value") if isinstance(result, dict) else result
        reason = str(result.get("explanation") or "") if isinstance(result, dict) else ""
        if isinstance(value, dict):
            for key, part in value.items():
                yield f"{scorer}.{key}", part, reason
        else:
            yield str(scorer), value, reason


@register("inspect_ai")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read inspect_ai eval logs."""
    rows, items, tasks = [], {}, set()
    for path in paths:
        header, samples = _log(path)
        tasks.add(str(header.get("task", "inspect_ai")))
        model = str(header.get("model", ""))
        for sample in samples:
            item = str(sample["id"])
            for judge, value, reason in _scores(sample):
                score = score_value(value)
                rows.append(
                    {
                        "item_id": item,
                        "judge": judge,
                        "run": int(sample.get("epoch", 1)),
                        "status": Status.UNPARSEABLE.value if np.isnan(score) else Status.OK.value,
                        "score": score,
                        "reason": reason
                        if not np.isnan(score)
                        else f"score value {value!r} is not a number",
                        "raw_reply": json.dumps(value),
                        "answer_model": model,
                        "question": _text(sample.get("input", "")),
                    }
                )
            output = sample.get("output") or {}
            answer = str(output.get("completion", "")) if isinstance(output, dict) else ""
            items[item] = {"ID": item, "Question": _text(sample.get("input", "")), "Answer": answer,
                           "Target": _text(sample.get("target", "")), "Model": model}  # fmt: skip
    if len(tasks) > 1:
        raise UsageError(
            f"these logs are of {len(tasks)} tasks ({', '.join(sorted(tasks))}); "
            "import one task per study"
        )
    source = "inspect_ai:" + ";".join(p.name for p in paths)
    judgments, notes = judgments_table(records(rows), options, rubric=tasks.pop(), source=source)
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    return Imported(judgments, table.reset_index(drop=True), notes=tuple(notes))
