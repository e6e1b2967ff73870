"""``--from fastchat-single``: FastChat ``llm_judge`` single-answer grading (MT-Bench).

A ``model_judgment/<judge>_single.jsonl`` line holds ``question_id, model, judge: [judge
model, prompt name], user_prompt, judgment, score, turn``. Each (question, answering model,
turn) is an item ``q<id>-<model>-t<turn>``; the question is its cluster. FastChat writes
``score: -1`` when it found no ``[[rating]]`` in the judgment: that is status
``unparseable``, never a score. With ``--rubric``/``--format`` the judgment text is read
again instead. ``--from fastchat-pair`` reads the pairwise files (``*_pair.jsonl``,
``g1_winner``/``g2_winner``) into a pairwise study (:func:`read_pairs`).
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
                f"{path}: a FastChat pairwise judgment file; import it with --from fastchat-pair"
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


PAIR_WHAT = "a FastChat pairwise judgment file (model_judgment/*_pair.jsonl)"
PAIR_KEYS = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge")
#: FastChat stores each game's winner already un-swapped, by model slot ("error": no verdict).
_PAIR_WINNERS = {"model_1": "a", "model_2": "b", "tie": "tie"}


@register("fastchat-pair")
def read_pairs(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """Read FastChat pairwise judgment files: game 1 is order ``ab``, game 2 order ``ba``.

    Game 2 showed ``model_2`` first; FastChat already maps its winner back to the model slot,
    so both games' winners are verdicts in the original A/B (``model_1`` = A). ``error`` (no
    ``[[A]]``/``[[B]]``/``[[C]]`` found) is status ``unparseable`` with its reason. FastChat
    appends to the file, so a pair judged again is the next run (in file order). A pair is
    ``q<id>-<model_1>-vs-<model_2>-t<turn>``; its question is its cluster.
    """
    from judgekit.importers.pairs import PAIR_SCALE, pair_judgments, pair_records

    rows, items = [], {}
    seen: dict[tuple[str, str], int] = {}
    for path in paths:
        for line in json_records(path, PAIR_WHAT, PAIR_KEYS):
            judge = line["judge"]
            judge_model = str(judge[0]) if isinstance(judge, list) and judge else str(judge)
            turn = int(line.get("turn", 1))  # type: ignore[call-overload]
            a, b = str(line["model_1"]), str(line["model_2"])
            pair = f"q{line['question_id']}-{a}-vs-{b}-t{turn}"
            seen[(pair, judge_model)] = run = seen.get((pair, judge_model), 0) + 1
            for game, order in (("g1", "ab"), ("g2", "ba")):
                winner = str(line[f"{game}_winner"])
                verdict = _PAIR_WINNERS.get(winner)
                if verdict is None and winner != "error":
                    raise UsageError(
                        f"{path}: pair {pair!r}: {game}_winner {winner!r} is neither side "
                        "(model_1, model_2, tie or error)"
                    )
                rows.append({
                    "item_id": pair, "judge": judge_model, "run": run, "order": order,
                    "verdict": verdict or "",
                    "status": Status.OK.value if verdict else Status.UNPARSEABLE.value,
                    "reason": "" if verdict else "FastChat found no verdict (winner 'error')",
                    "raw_reply": str(line.get(f"{game}_judgment", "")), "model_a": a,
                    "model_b": b, "question": str(line["question_id"]),
                })  # fmt: skip
            items[pair] = {"ID": pair, "Question": str(line["question_id"]), "Model_A": a,
                           "Model_B": b, "Turn": str(turn)}  # fmt: skip
    source = "fastchat-pair:" + ";".join(p.name for p in paths)
    judgments = pair_judgments(pair_records(rows), options, rubric="mt_bench_pair", source=source)
    table = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    notes = ["the pairs' answers are not in a judgment file: items.csv names the models only"]
    again = sum(n > 1 for n in seen.values())
    if again:  # gen_judgment.py appends: a pair judged again is a repetition, not a duplicate
        notes.append(f"{again} pair(s) judged more than once: each repetition is its own run")
    return Imported(
        judgments,
        table.reset_index(drop=True),
        notes=tuple(notes),
        scale=PAIR_SCALE,
        pairwise=True,
    )
