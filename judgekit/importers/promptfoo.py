"""``--from promptfoo``: a promptfoo results export (``promptfoo eval -o results.json``).

Every row of ``results.results`` is one test (``testIdx``) answered by one provider; its
``gradingResult.componentResults`` hold one result per assertion. The model-graded ones
(:data:`MODEL_GRADED`, or the type given as ``--assertion TYPE``) are the judge's verdicts:
``score`` as graded (0 to 1), ``pass`` and ``reason`` kept in the reason. The item is the
test x answering provider, ``t<testIdx>-<provider>``, clustered by test; the judge is the
assertion's grading provider when it names one, else its type (numbered when one test has
several).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.rows import judgments_table, records
from judgekit.types import Scale, Status, UsageError

WHAT = "a promptfoo results export (promptfoo eval -o results.json)"
#: promptfoo's assertion types graded by a model.
MODEL_GRADED = (
    "llm-rubric", "g-eval", "model-graded-closedqa", "factuality", "answer-relevance",
    "context-faithfulness", "context-recall", "context-relevance", "select-best",
)  # fmt: skip


def _results(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{path}: not JSON, so not {WHAT}") from None
    results = data.get("results") if isinstance(data, dict) else None
    rows = results.get("results") if isinstance(results, dict) else results
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and "gradingResult" in r for r in rows
    ):
        raise UsageError(f"{path}: no results.results with gradingResult, so not {WHAT}")
    return rows


def _judge(assertion: dict[str, Any], kind: str, number: int, several: bool) -> str:
    provider = assertion.get("provider")
    name = provider.get("id") if isinstance(provider, dict) else provider
    return str(name or kind) + (f"#{number}" if several else "")


@register("promptfoo")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read promptfoo result exports."""
    kinds = (str(options.extra["assertion"]),) if options.extra.get("assertion") else MODEL_GRADED
    rows, items = [], {}
    for path in paths:
        for result in _results(path):
            provider = result.get("provider") or {}
            answering = str(provider.get("id", "")) if isinstance(provider, dict) else str(provider)
            item = f"t{result.get('testIdx', 0)}-{answering}"
            components = (result.get("gradingResult") or {}).get("componentResults") or []
            graded = [c for c in components if (c.get("assertion") or {}).get("type") in kinds]
            for number, component in enumerate(graded, 1):
                assertion = component.get("assertion") or {}
                score = component.get("score")
                value = float(score) if isinstance(score, int | float) else np.nan
                rows.append(
                    {
                        "item_id": item,
                        "judge": _judge(
                            assertion, str(assertion.get("type")), number, len(graded) > 1
                        ),
                        "status": Status.OK.value
                        if not np.isnan(value)
                        else Status.UNPARSEABLE.value,
                        "score": value,
                        "reason": f"pass={component.get('pass')}: {component.get('reason', '')}",
                        "raw_reply": str(component.get("reason", "")),
                        "answer_model": answering,
                        "question": f"test {result.get('testIdx', 0)}",
                    }
                )
            prompt = result.get("prompt") or {}
            response = result.get("response") or {}
            items[item] = {
                "ID": item,
                "Question": str(prompt.get("raw", "")),
                "Answer": str(response.get("output", "")),
                "Model": answering,
            }
    if not rows:
        raise UsageError(
            f"{paths[0]}: no model-graded assertion ({', '.join(kinds)}) in it; "
            "name one with --assertion TYPE"
        )
    source = "promptfoo:" + ";".join(p.name for p in paths)
    judgments, notes = judgments_table(records(rows), options, rubric="promptfoo", source=source)
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    return Imported(
        judgments, table.reset_index(drop=True), notes=tuple(notes), scale=Scale((0, 1), step=0)
    )
