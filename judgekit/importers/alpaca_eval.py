r"""``--from alpaca_eval``: AlpacaEval ``results/<model>/<annotator>/annotations.json``.

Each record compares ``output_2`` (the evaluated ``generator_2``) with the baseline's
``output_1`` on one ``instruction``; ``preference`` is 1 (baseline better) to 2 (evaluated
better), probability-valued for the weighted annotators (``weighted_alpaca_eval_gpt4_turbo``:
``1 + P(output_2)``), 0 or 1.5 a draw, empty a failed annotation. As AlpacaEval computes its
win rate, the row's ``expected_score`` is :math:`p = \text{preference} - 1` clipped to [0, 1]
(draws 0.5) and ``score`` its decision: 1 if :math:`p > 0.5`, 0 if :math:`p < 0.5`, 0.5 for
a tie. Their means over the items are AlpacaEval's weighted and discrete win rates. An item is
one (instruction, evaluated model): ``<generator_2>:<12 hex digits of the instruction's SHA-256>``,
its cluster the instruction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.rows import judgments_table, records
from judgekit.importers.tables import json_records
from judgekit.types import Scale, Status

WHAT = "an AlpacaEval annotations file (results/<model>/<annotator>/annotations.json)"
KEYS = ("instruction", "output_1", "output_2", "generator_2", "preference")


def win_probability(preference: object) -> float:
    """P(output_2 is better) from AlpacaEval's ``preference`` (NaN for a failed annotation).

    >>> win_probability(2), win_probability(1.25), win_probability(0), win_probability(2.0000003)
    (1.0, 0.25, 0.5, 1.0)
    """
    if preference is None or (isinstance(preference, str) and not preference.strip()):
        return float("nan")
    value = float(preference)  # type: ignore[arg-type]
    if np.isnan(value):
        return value
    return 0.5 if value == 0 else float(np.clip(value - 1, 0.0, 1.0))


@register("alpaca_eval")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read AlpacaEval annotation files."""
    rows, items = [], {}
    for path in paths:
        for record in json_records(path, WHAT, KEYS):
            digest = hashlib.sha256(str(record["instruction"]).encode("utf-8")).hexdigest()[:12]
            item = f"{record['generator_2']}:{digest}"
            p = win_probability(record["preference"])
            decision = np.nan if np.isnan(p) else (1.0 if p > 0.5 else 0.0 if p < 0.5 else 0.5)
            rows.append(
                {
                    "item_id": item,
                    "judge": str(record.get("annotator") or options.judge or "alpaca_eval"),
                    "status": Status.UNPARSEABLE.value if np.isnan(p) else Status.OK.value,
                    "score": decision,
                    "expected_score": p,
                    "reason": "" if not np.isnan(p) else "AlpacaEval recorded no preference",
                    "raw_reply": str(record.get("raw_completion", "")),
                    "answer_model": str(record["generator_2"]),
                    "question": str(record["instruction"]),
                }
            )
            items[item] = {
                "ID": item,
                "Question": str(record["instruction"]),
                "Answer": str(record["output_2"]),
                "Model": str(record["generator_2"]),
                "Reference_output": str(record["output_1"]),
                "Reference_model": str(record.get("generator_1", "")),
                "Dataset": str(record.get("dataset", "")),
            }
    source = "alpaca_eval:" + ";".join(p.name for p in paths)
    judgments, notes = judgments_table(records(rows), options, rubric="alpaca_eval", source=source)
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    return Imported(
        judgments, table.reset_index(drop=True), notes=tuple(notes), scale=Scale((0, 1), step=0.5)
    )
