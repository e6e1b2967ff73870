r"""``--from alpaca_eval``: AlpacaEval ``results/<model>/<annotator>/annotations.json``, pairwise.

Each record compares the baseline's ``output_1`` (``generator_1``) with the evaluated
``output_2`` (``generator_2``) on one ``instruction``: a pair, answer A the baseline's and B
the evaluated model's, its cluster the instruction. ``preference`` is 1 (A better) to 2 (B
better), probability-valued for the weighted annotators (``weighted_alpaca_eval_gpt4_turbo``:
``1 + P(output_2)``), 0 or 1.5 a draw, empty a failed annotation (status ``unparseable``).
The verdict is the preference's decision, as AlpacaEval's discrete win rate takes it, with
:math:`p = \text{preference} - 1` clipped to [0, 1] (a draw 0.5): ``b`` if :math:`p > 0.5`,
``a`` if :math:`p < 0.5`, ``tie`` if :math:`p = 0.5` exactly. The raw ``preference`` and
:math:`p` (``win_probability``) are kept in the judgments table, so the mean of ``p`` is
AlpacaEval's weighted win rate. The annotation is stored in one order (``ab``: as AlpacaEval
records it, after its own randomised presentation); a pair is
``<generator_2>:<12 hex digits of the instruction's SHA-256>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.tables import json_records
from judgekit.types import Status

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


def verdict_of(p: float) -> str:
    """The pairwise verdict of a win probability: ``b`` above 0.5, ``a`` below, else ``tie``.

    >>> verdict_of(0.9), verdict_of(0.25), verdict_of(0.5), verdict_of(float("nan"))
    ('b', 'a', 'tie', '')
    """
    if np.isnan(p):
        return ""
    return "b" if p > 0.5 else "a" if p < 0.5 else "tie"


@register("alpaca_eval")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read AlpacaEval annotation files into a pairwise study (see the module docstring)."""
    from judgekit.importers.pairs import PAIR_SCALE, pair_judgments, pair_records

    rows, items, preferences = [], {}, []
    for path in paths:
        for record in json_records(path, WHAT, KEYS):
            digest = hashlib.sha256(str(record["instruction"]).encode("utf-8")).hexdigest()[:12]
            item = f"{record['generator_2']}:{digest}"
            p = win_probability(record["preference"])
            baseline = str(record.get("generator_1", "") or "baseline")
            rows.append({
                "item_id": item, "judge": str(record.get("annotator") or options.judge
                                              or "alpaca_eval"),
                "run": 1, "order": "ab", "verdict": verdict_of(p),
                "status": Status.UNPARSEABLE.value if np.isnan(p) else Status.OK.value,
                "reason": "AlpacaEval recorded no preference" if np.isnan(p) else
                f"preference {record['preference']}: P(B better) = {p:.6g}",
                "raw_reply": str(record.get("raw_completion", "")), "model_a": baseline,
                "model_b": str(record["generator_2"]), "question": str(record["instruction"]),
            })  # fmt: skip
            preferences.append((str(record["preference"]), p))
            items[item] = {
                "ID": item, "Question": str(record["instruction"]),
                "Answer_A": str(record["output_1"]), "Answer_B": str(record["output_2"]),
                "Model_A": baseline, "Model_B": str(record["generator_2"]),
                "Dataset": str(record.get("dataset", "")),
            }  # fmt: skip
    source = "alpaca_eval:" + ";".join(p.name for p in paths)
    raw = pair_records(rows).assign(
        preference=[v for v, _ in preferences], win_probability=[p for _, p in preferences]
    )
    judgments = pair_judgments(raw, options, rubric="alpaca_eval", source=source)
    kept = raw.set_index(["item_id", "judge"])[["preference", "win_probability"]]
    judgments = judgments.join(kept, on=["item_id", "judge"])
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    note = "verdict: B if P(B better) > 0.5, A if < 0.5, tie at exactly 0.5 (preference 1.5 or 0)"
    return Imported(judgments, table.reset_index(drop=True), notes=(note,), scale=PAIR_SCALE,
                    pairwise=True)  # fmt: skip
