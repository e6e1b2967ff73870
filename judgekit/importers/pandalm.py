"""PandaLM's human-annotated test set and its two judges' verdicts as judgekit pairwise tables.

Wang et al.: "PandaLM: An Automatic Evaluation Benchmark for LLM Instruction Tuning
Optimization", ICLR 2024 (WeOpenML/PandaLM, ``data/``, Apache-2.0). ``testset-v1.json`` holds
999 pairs with three annotators' labels (0 = tie, 1 = the first response, 2 = the second);
``gpt-3.5-turbo-testset-v1.json`` and ``pandalm-7b-testset-v1.json`` one verdict per pair,
judged in one order. Labels and verdicts are read by
:func:`judgekit.data.pairwise.read_pair_label`; GPT-3.5's ``garbage`` (no usable verdict) is
kept as an unparsed verdict with its reason, never as a tie (the authors' script scores it
as one; ``verdict_accuracy(..., unparsed="tie")`` is that convention, named).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgekit.data.errors import DataError
from judgekit.data.pairwise import COMPARISON_COLUMNS, read_pair_label
from judgekit.importers import Imported, ImportOptions, register
from judgekit.types import UsageError

#: The judges' files and the key of their verdict.
JUDGES = {
    "gpt-3.5-turbo": ("gpt-3.5-turbo-testset-v1.json", "gpt_result", "gpt_reason"),
    "pandalm-7b": ("pandalm-7b-testset-v1.json", "pandalm_result", "pandalm_reason"),
}
_NO_VERDICT = {"garbage"}


def _records(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        raise DataError(path, "file not found (the PandaLM folder holds testset-v1.json)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise DataError(path, "expected a JSON list of records")
    return data


def read_pandalm_labels(folder: str | Path) -> pd.DataFrame:
    """The three annotators' labels, long: ``pair_id``, ``rater``, ``label`` (a/b/tie)."""
    path = Path(folder) / "testset-v1.json"
    rows = []
    for number, record in enumerate(_records(path), start=1):
        for rater in ("annotator1", "annotator2", "annotator3"):
            label = read_pair_label(record[rater], source=str(path), row=f"record {number}",
                                    column=rater)  # fmt: skip
            rows.append((str(record["idx"]), rater, label))
    return pd.DataFrame(rows, columns=["pair_id", "rater", "label"])


def read_pandalm(folder: str | Path, judge: str) -> pd.DataFrame:
    """One judge's verdicts as a comparison long table (order ``ab``, one run)."""
    if judge not in JUDGES:
        raise DataError(folder, f"unknown PandaLM judge {judge!r}; choose {', '.join(JUDGES)}")
    name, key, reason_key = JUDGES[judge]
    path = Path(folder) / name
    items = {str(r["idx"]): r for r in _records(Path(folder) / "testset-v1.json")}
    rows = []
    for number, record in enumerate(_records(path), start=1):
        pair = str(record["idx"])
        model_a, _, model_b = str(items[pair]["cmp_key"]).partition("_")
        value = str(record[key])
        if value.casefold() in _NO_VERDICT:
            verdict, status = "", "unparseable"
            reason = f"the judge's reply held no usable verdict (stored as {value!r})"
        else:
            where = {"source": str(path), "row": f"record {number}", "column": key}
            verdict, status = read_pair_label(value, **where), "ok"
            reason = str(record.get(reason_key, ""))
        rows.append((pair, judge, "base", 1, "ab", verdict, status, reason, model_a, model_b,
                     pair))  # fmt: skip
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


@register("pandalm")
def read_files(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """``--from pandalm testset-v1.json [JUDGE FILES]``: pairs, annotators, judges' verdicts.

    The test set gives the pairs (``cmp_key`` names the two models) and the three annotators'
    labels; each judge file beside it (named as in :data:`JUDGES`) gives one verdict per
    pair in order ``ab``. A pair is its ``idx``; its cluster the instruction.
    """
    from judgekit.importers.pairs import PAIR_SCALE, pair_judgments, pair_labels, pair_records

    by_name = {name: judge for judge, (name, _, _) in JUDGES.items()}
    tests = [p for p in paths if p.name == "testset-v1.json"]
    if len(tests) != 1 or any(p.name not in by_name for p in paths if p not in tests):
        raise UsageError(
            f"--from pandalm reads testset-v1.json and judge files named {', '.join(by_name)}; "
            f"got {', '.join(p.name for p in paths)}"
        )
    folder = tests[0].parent
    try:
        records = _records(tests[0])
        labels = read_pandalm_labels(folder)
        frames = [read_pandalm(p.parent, by_name[p.name]) for p in paths if p not in tests]
    except (KeyError, TypeError, AttributeError) as error:
        raise UsageError(f"{folder}: not PandaLM's test set files ({error!r})") from None
    items = pd.DataFrame(
        {
            "ID": [str(r["idx"]) for r in records],
            "Question": [f"{r['instruction']}\n\n{r['input']}".strip() for r in records],
            "Answer_A": [str(r["response1"]) for r in records],
            "Answer_B": [str(r["response2"]) for r in records],
            "Model_A": [str(r["cmp_key"]).partition("_")[0] for r in records],
            "Model_B": [str(r["cmp_key"]).partition("_")[2] for r in records],
        }
    )
    human = pair_labels(list(zip(labels["pair_id"], labels["rater"], labels["label"], strict=True)))
    if not frames:
        raise UsageError(f"{tests[0]}: name at least one judge file beside the test set")
    question = dict(zip(items["ID"], items["Question"], strict=True))
    raw = pd.concat(frames, ignore_index=True).rename(columns={"pair_id": "item_id"})
    raw = raw.assign(question=raw["item_id"].map(question), raw_reply="", variant="")
    source = "pandalm:" + ";".join(p.name for p in paths)
    judgments = pair_judgments(
        pair_records(raw.to_dict("records")), options, rubric="pandalm", source=source
    )
    return Imported(judgments, items, labels=human, scale=PAIR_SCALE, pairwise=True)
