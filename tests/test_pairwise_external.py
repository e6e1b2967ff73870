"""LLMBar's raw completions read by judgekit's own reader, against the authors' parsed verdicts.

The published figures themselves are reproduced from imported studies in
tests/test_import_pairwise.py.

LLMBar: Zeng, Yu, Gao, Meng, Goyal, Chen, "Evaluating Large Language Models at Evaluating
Instruction Following", ICLR 2024 (princeton-nlp/LLMBar at 900616b, ``Dataset/``, MIT licence;
its MT-Bench subset processes Zheng et al. 2023's expert votes, CC BY 4.0). PandaLM: Wang et
al., "PandaLM: An Automatic Evaluation Benchmark for LLM Instruction Tuning Optimization",
ICLR 2024 (WeOpenML/PandaLM at 3871806, ``data/``, Apache-2.0). The subsets are in
../shared/datasets (their SOURCE.md files).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgekit.importers.llmbar import read_llmbar, read_llmbar_labels, read_statistics
from judgekit.stats import CI, outcome_shares, verdict_accuracy

pytestmark = pytest.mark.shared


def _folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("llmbar/*/*/evaluators/*/*/statistics.json"))


def _read(folder: Path, **options: str) -> pd.DataFrame:
    """A judge x strategy folder's comparisons (rating ties broken the authors' way unless told)."""
    if folder.name.startswith("Rating"):
        options.setdefault("rating_ties", "second_shown")
    return read_llmbar(folder.parents[2], folder.parent.name, folder.name, **options)


def _figures(folder: Path, comparisons: pd.DataFrame) -> tuple[float, float]:
    labels = read_llmbar_labels(folder.parents[2])
    table = verdict_accuracy(comparisons, labels, ci=CI(None)).set_index("measure")
    shares = outcome_shares(comparisons, ci=CI(None)).set_index("outcome")["estimate"]
    # LLMBar's "equal" counts a pair whose two orders agree, two missing verdicts included
    equal = shares["consistent_win"] + shares["consistent_tie"] + shares["both_unparsed"]
    return float(table.loc["accuracy", "estimate"]), float(equal)


def test_llmbar_through_judgekits_reader(shared_datasets: Path) -> None:
    """Reading the raw completions ourselves gives the published figures in 79 of 89 folders.

    Our verdict differs from the authors' on 52 order verdicts: the 48 comparison replies (of
    19,056) that LLMBar's first-match parser reads differently (tests/test_pairwise_formats.py
    checks each kind), and both orders of ChatGPT's two ratings of 10 on the prompt's 0-9 scale
    (out of range here; LLMBar's ``int()`` took them). They change the figures of 10 folders,
    each by at most their share of the folder's verdicts.
    """
    exact = differing = 0
    for folder in _folders(shared_datasets):
        published = read_statistics(folder)
        comparisons = _read(folder)  # its replies parsed once, for the figures and the diff
        accuracy, equal = _figures(folder, comparisons)
        differ = comparisons["verdict"] != comparisons["authors_verdict"]
        differing += int(differ.sum())
        gap = abs(accuracy - published["correct_average"])
        exact += gap < 1e-12 and abs(equal - published["equal"]) < 1e-12
        assert gap <= differ.mean() + 1e-12, folder
    assert (exact, differing) == (79, 48 + 2 * 2)  # a rating of 10 unparses both orders


def test_llmbar_rating_ties_are_ties_unless_asked(shared_datasets: Path) -> None:
    folder = shared_datasets / "llmbar/LLMBar/Natural/evaluators/GPT-4/Rating"
    ties = read_llmbar(folder.parents[2], "GPT-4", "Rating")
    assert (ties["verdict"] == "tie").sum() > 0  # equal ratings, kept as ties in both orders
    accuracy, _ = _figures(folder, _read(folder, rating_ties="tie"))
    assert accuracy < read_statistics(folder)["correct_average"]
