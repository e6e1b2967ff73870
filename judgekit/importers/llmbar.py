"""LLMBar's stored judge verdicts (both orders) as judgekit pairwise tables.

Zeng, Yu, Gao, Meng, Goyal, Chen: "Evaluating Large Language Models at Evaluating Instruction
Following", ICLR 2024 (princeton-nlp/LLMBar, ``Dataset/``, MIT licence). A subset folder holds
``dataset.json`` (``input``, ``output_1``, ``output_2``, ``label`` 1 or 2) and
``evaluators/<judge>/<strategy>/result.json``: per pair, the judge's raw completion for both
orders (``swap = False``: output_1 shown first, order ``ab``; ``swap = True``: order ``ba``),
and the authors' parsed winner (already in terms of output_1/output_2).

Each completion is read by judgekit's ``pair_output_ab`` format and un-swapped; the
authors' winner is kept beside it (``authors_verdict``). The rating strategies rate each
output in its own request (``score_1``, ``score_2``, read by ``score_line`` on the prompt's
0-9 scale); the verdict is derived with a tie margin of 0, so equal ratings are a tie in both
orders. The authors break such a tie for the output shown second; ``rating_ties=
"second_shown"`` applies their rule, named, to reproduce their figures. ``verdicts="stored"``
takes the authors' winners instead of reading the completions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgekit.data.errors import DataError
from judgekit.data.pairwise import COMPARISON_COLUMNS, unswap
from judgekit.formats import parse_reply
from judgekit.formats.pair_rating import ratings_preference
from judgekit.formats.verdicts import verdict_label
from judgekit.importers import Imported, ImportOptions, register
from judgekit.types import Scale, Status, UsageError

_ORDERS = {"swap = False": "ab", "swap = True": "ba"}
_SIDES = {"1": "a", "2": "b"}
#: The rating prompts ask for "an integer between 0 and 9" (prompts/rating/Rating.txt).
_RATING_SCALE = Scale(tuple(range(10)))


def _load(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        raise DataError(
            path, "file not found (an LLMBar subset holds dataset.json and evaluators/)"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise DataError(path, "expected a JSON list of pairs")
    return data


def read_llmbar_labels(subset: str | Path) -> pd.DataFrame:
    """The subset's gold labels, long: ``pair_id``, ``rater`` (``LLMBar``), ``label``."""
    rows = [(str(k), "LLMBar", _SIDES[str(r["label"])]) for k, r in
            enumerate(_load(Path(subset) / "dataset.json"))]  # fmt: skip
    return pd.DataFrame(rows, columns=["pair_id", "rater", "label"])


def _read_shown(completion: str) -> tuple[str, str, str]:
    """A comparison completion read by ``pair_output_ab``: shown verdict, status, reason."""
    (verdict,) = parse_reply(
        completion, output_format="pair_output_ab", scale=Scale((-1, 1)), item_ids=["pair"]
    ).verdicts
    if verdict.score is None:
        return "", verdict.status.value, verdict.reason
    return verdict_label(verdict.score), "ok", verdict.reason


def _rating(completion: str) -> float | None:
    (verdict,) = parse_reply(
        completion, output_format="score_line", scale=_RATING_SCALE, item_ids=["output"]
    ).verdicts
    return verdict.score if verdict.status is Status.OK else None


def read_llmbar(
    subset: str | Path,
    judge: str,
    strategy: str,
    *,
    verdicts: str = "reader",
    rating_ties: str = "tie",
) -> pd.DataFrame:
    """One judge x strategy as a comparison long table (``variant`` = the strategy).

    Raises:
        DataError: A missing file, or a result whose pairs do not match ``dataset.json``.
    """
    if verdicts not in ("reader", "stored") or rating_ties not in ("tie", "second_shown"):
        raise ValueError("verdicts is 'reader' or 'stored'; rating_ties 'tie' or 'second_shown'")
    folder = Path(subset) / "evaluators" / judge / strategy
    results = _load(folder / "result.json")
    if len(results) != len(_load(Path(subset) / "dataset.json")):
        raise DataError(
            folder / "result.json", "holds a different number of pairs than dataset.json"
        )
    rows = []
    for k, instance in enumerate(results):
        final = [r for r in instance["results"] if isinstance(r, dict)][-1]  # type: ignore[attr-defined]
        ratings = None
        if "score_1" in final:
            ratings = (_rating(str(final["score_1"][0])), _rating(str(final["score_2"][0])))
        for key, order in _ORDERS.items():
            stored = final[key]["winner"]
            authors = _SIDES.get(str(stored), "")
            if verdicts == "stored":
                verdict, status, reason = authors, "ok" if authors else "unparseable", ""
            elif ratings is not None:
                verdict, status, reason = _from_ratings(ratings, order, rating_ties)
            else:
                shown, status, reason = _read_shown(str(final[key]["completion"][0]))
                verdict = unswap(shown, order) if shown else ""
            rows.append((str(k), judge, strategy, 1, order, verdict, status, reason,
                         "output_1", "output_2", str(k), authors))  # fmt: skip
    return pd.DataFrame(rows, columns=[*COMPARISON_COLUMNS, "authors_verdict"])


def _from_ratings(
    ratings: tuple[float | None, float | None], order: str, rating_ties: str
) -> tuple[str, str, str]:
    first, second = ratings
    if first is None or second is None:
        return "", "unparseable", "a rating is not a whole number from 0 to 9"
    verdict = verdict_label(ratings_preference(first, second))
    if verdict == "tie" and rating_ties == "second_shown":
        verdict = "b" if order == "ab" else "a"  # the authors' rule: the output shown second
    return verdict, "ok", f"ratings {first:g} and {second:g}, tie margin 0"


def read_statistics(folder: str | Path) -> dict[str, float]:
    """The authors' figures of one judge x strategy as fractions (``correct_average``, ...)."""
    path = Path(folder) / "statistics.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    found: dict[str, float] = {}
    for key, value in raw.items():
        text = str(value).rstrip("%").split("=")[-1].strip()
        found[key] = float(text) / 100 if str(value).endswith("%") else float(text)
    return found


@register("llmbar")
def read_results(paths: Sequence[Path], options: ImportOptions) -> Imported:
    """``--from llmbar``: ``<subset>/evaluators/<judge>/<strategy>/result.json`` files.

    Each file is one judge (its folder's name) under one prompting strategy (the variant); a
    pair is ``<subset>-<index in dataset.json>``, its cluster the instruction. The subset's
    gold labels (rater ``LLMBar``: the authors' label; the expert majority for MT-Bench) are
    the human labels. ``--verdicts stored`` takes the authors' parsed winners instead of
    reading the completions; ``--rating-ties second_shown`` applies their tie rule.
    """
    from judgekit.importers.pairs import PAIR_SCALE, pair_judgments, pair_labels, pair_records

    verdicts = str(options.extra.get("verdicts") or "reader")
    ties = str(options.extra.get("rating_ties") or "tie")
    if verdicts not in ("reader", "stored") or ties not in ("tie", "second_shown"):
        raise UsageError("--verdicts is reader or stored; --rating-ties tie or second_shown")
    frames, items, labels = [], {}, {}
    for path in paths:
        folder = path.parent
        if path.name != "result.json" or folder.parent.parent.name != "evaluators":
            raise UsageError(
                f"{path}: not an LLMBar result file "
                "(<subset>/evaluators/<judge>/<strategy>/result.json)"
            )
        subset = folder.parents[2]
        try:
            table = read_llmbar(subset, folder.parent.name, folder.name, verdicts=verdicts,
                                rating_ties=ties)  # fmt: skip
        except (KeyError, TypeError, IndexError, ValueError) as error:
            raise UsageError(f"{path}: not an LLMBar result file ({error!r})") from None
        prefix = f"{subset.name}-"
        frames.append(table.assign(pair_id=prefix + table["pair_id"]))
        if subset.name not in labels:
            for k, pair in enumerate(_load(subset / "dataset.json")):
                items[prefix + str(k)] = {
                    "ID": prefix + str(k), "Question": str(pair["input"]),
                    "Answer_A": str(pair["output_1"]), "Answer_B": str(pair["output_2"]),
                    "Model_A": "output_1", "Model_B": "output_2", "Subset": subset.name,
                }  # fmt: skip
            gold = read_llmbar_labels(subset)
            labels[subset.name] = gold.assign(pair_id=prefix + gold["pair_id"])
    both = pd.concat(frames, ignore_index=True)
    question = both["pair_id"].map(lambda p: items[p]["Question"])
    raw = both.rename(columns={"pair_id": "item_id"}).assign(question=question, raw_reply="")
    source = "llmbar:" + ";".join(str(p) for p in paths)
    judgments = pair_judgments(
        pair_records(raw.to_dict("records")), options, rubric="llmbar", source=source
    )
    gold = pd.concat(labels.values(), ignore_index=True)
    human = pair_labels(list(zip(gold["pair_id"], gold["rater"], gold["label"], strict=True)))
    frame = pd.DataFrame(list(items.values())).sort_values("ID", kind="stable")
    return Imported(judgments, frame.reset_index(drop=True), labels=human, scale=PAIR_SCALE,
                    pairwise=True)  # fmt: skip
