"""``--from fastchat-single``: FastChat ``llm_judge`` single-answer grading (MT-Bench).

A ``model_judgment/<judge>_single.jsonl`` line holds ``question_id, model, judge: [judge
model, prompt name], user_prompt, judgment, score, turn``. Each (question, answering model,
turn) is an item ``q<id>-<model>-t<turn>``; the question is its cluster. FastChat writes
``score: -1`` when it found no ``[[rating]]`` in the judgment: that is status
``unparseable``, never a score. With ``--rubric``/``--format`` the judgment text is read
again instead. Pairwise files (``g1_winner``) belong to the pairwise adapters.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.importers import Imported, ImportOptions, register
from judgekit.importers.rows import judgments_table, records
from judgekit.importers.tables import json_records
from judgekit.types import Scale, Status, UsageError

WHAT = "a FastChat single-answer judgment file (model_judgment/*_single.jsonl)"
KEYS = ("question_id", "model", "judge", "judgment", "score")

#: The scale FastChat's single-answer judge prompts ask for (1 to 10, as "[[rating]]").
_SCALE = Scale(tuple(range(1, 11)))


@register("fastchat-single")
def read(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read FastChat single-answer judgment files."""
    rows, items = [], {}
    for path in paths:
        lines = json_records(path, WHAT, ())
        if lines and isinstance(lines[0], dict) and "g1_winner" in lines[0]:
            raise UsageError(
                f"{path}: a FastChat pairwise judgment file; fastchat-single reads *_single.jsonl"
            )
        for line in json_records(path, WHAT, KEYS):
            judge = line["judge"]
            judge_model = str(judge[0]) if isinstance(judge, list) and judge else str(judge)
            prompt = str(judge[1]) if isinstance(judge, list) and len(judge) > 1 else ""
            turn = int(line.get("turn", 1))  # type: ignore[call-overload]
            item = f"q{line['question_id']}-{line['model']}-t{turn}"
            score = float(line["score"])  # type: ignore[arg-type]
            failed = score == -1
            rows.append(
                {
                    "item_id": item,
                    "judge": judge_model,
                    "status": Status.UNPARSEABLE.value if failed else Status.OK.value,
                    "score": np.nan if failed else score,
                    "reason": "FastChat found no [[rating]] in the judgment (score -1)" * failed,
                    "raw_reply": str(line["judgment"]),
                    "answer_model": str(line["model"]),
                    "question": str(line["question_id"]),
                }
            )
            items[item] = {
                "ID": item,
                "Question": str(line["question_id"]),
                "Model": str(line["model"]),
                "Turn": str(turn),
                "Judge_prompt": prompt,
            }
    source = "fastchat-single:" + ";".join(p.name for p in paths)
    judgments, notes = judgments_table(records(rows), options, rubric="mt_bench", source=source)
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    return Imported(judgments, table.reset_index(drop=True), notes=tuple(notes), scale=_SCALE)
