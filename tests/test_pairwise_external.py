"""Two published pairwise meta-evaluations reproduced through judgekit's own readers and stats.

LLMBar: Zeng, Yu, Gao, Meng, Goyal, Chen, "Evaluating Large Language Models at Evaluating
Instruction Following", ICLR 2024 (princeton-nlp/LLMBar at 900616b, ``Dataset/``, MIT licence;
its MT-Bench subset processes Zheng et al. 2023's expert votes, CC BY 4.0). PandaLM: Wang et
al., "PandaLM: An Automatic Evaluation Benchmark for LLM Instruction Tuning Optimization",
ICLR 2024 (WeOpenML/PandaLM at 3871806, ``data/``, Apache-2.0). The subsets are in
../shared/datasets (their SOURCE.md files).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.importers.llmbar import read_llmbar, read_llmbar_labels, read_statistics
from judgekit.importers.pandalm import read_pandalm, read_pandalm_labels
from judgekit.stats import CI, outcome_shares, rater_kappas, verdict_accuracy, verdict_kappa

pytestmark = pytest.mark.shared


def _folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("llmbar/*/*/evaluators/*/*/statistics.json"))


def _figures(folder: Path, **options: str) -> tuple[float, float]:
    subset = folder.parents[2]
    if folder.name.startswith("Rating"):
        options.setdefault("rating_ties", "second_shown")
    comparisons = read_llmbar(subset, folder.parent.name, folder.name, **options)
    labels = read_llmbar_labels(subset)
    table = verdict_accuracy(comparisons, labels, ci=CI(None)).set_index("measure")
    shares = outcome_shares(comparisons, ci=CI(None)).set_index("outcome")["estimate"]
    # LLMBar's "equal" counts a pair whose two orders agree, two missing verdicts included
    equal = shares["consistent_win"] + shares["consistent_tie"] + shares["both_unparsed"]
    return float(table.loc["accuracy", "estimate"]), float(equal)


def test_llmbar_accuracy_and_positional_agreement_from_the_stored_verdicts(
    shared_datasets: Path,
) -> None:
    """All 89 judge x strategy folders: correct_average and equal, exactly."""
    folders = _folders(shared_datasets)
    assert len(folders) == 89
    for folder in folders:
        published = read_statistics(folder)
        accuracy, equal = _figures(folder, verdicts="stored")
        assert accuracy == pytest.approx(published["correct_average"], abs=1e-12), folder
        assert equal == pytest.approx(published["equal"], abs=1e-12), folder


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
        accuracy, equal = _figures(folder)
        ties = {"rating_ties": "second_shown"} if folder.name.startswith("Rating") else {}
        comparisons = read_llmbar(folder.parents[2], folder.parent.name, folder.name, **ties)
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
    accuracy, _ = _figures(folder, rating_ties="tie")
    assert accuracy < read_statistics(folder)["correct_average"]


def test_llmbar_stored_kappa_is_not_cohens_kappa(shared_datasets: Path) -> None:
    """The stored kappa codes verdict "2" as 0 while label 2 stays 2; ours codes them alike."""
    wrong = 0
    for folder in _folders(shared_datasets):
        subset = folder.parents[2]
        comparisons = read_llmbar(subset, folder.parent.name, folder.name, verdicts="stored")
        labels = read_llmbar_labels(subset)
        gold = labels.set_index("pair_id")["label"]
        stored = read_statistics(folder)
        ours = verdict_kappa(comparisons, labels, ci=CI(None)).set_index("order")["estimate"]
        for order, key in (("ab", "kappa_False"), ("ba", "kappa_True")):
            rows = comparisons[comparisons["order"] == order]
            their_codes = np.where(rows["verdict"] == "a", 1, 0)  # "1" -> 1, anything else 0
            label_codes = rows["pair_id"].map(gold).map({"a": 1, "b": 2})
            assert cohen_kappa_score(their_codes, label_codes) == pytest.approx(stored[key])
            parsed = rows[rows["status"] == "ok"]
            expected = cohen_kappa_score(parsed["verdict"], parsed["pair_id"].map(gold))
            assert ours[order] == pytest.approx(expected, abs=1e-12)
            wrong += abs(ours[order] - stored[key]) > 0.01
    assert wrong == 2 * 89  # every stored kappa is off


def test_pandalm_published_figures(shared_datasets: Path) -> None:
    """README/paper: accuracy, macro precision, recall, F1 vs the annotators' majority."""
    folder = shared_datasets / "pandalm"
    labels = read_pandalm_labels(folder)
    published = {
        "gpt-3.5-turbo": (0.7107, 0.5879, 0.5736, 0.5755),
        "pandalm-7b": (0.6677, 0.5738, 0.5750, 0.5743),
    }
    measures = ("accuracy", "macro_precision", "macro_recall", "macro_f1")
    for judge, figures in published.items():
        comparisons = read_pandalm(folder, judge)
        # the authors' script scores GPT-3.5's 25 "garbage" replies as ties: that view, named
        table = verdict_accuracy(comparisons, labels, unparsed="tie", ci=CI(None))
        got = table.set_index("measure")["estimate"]
        assert [round(float(got[m]), 4) for m in measures] == list(figures)
    honest = verdict_accuracy(read_pandalm(folder, "gpt-3.5-turbo"), labels, ci=CI(None))
    assert round(float(honest.set_index("measure").loc["accuracy", "estimate"]), 4) == 0.6977
    kappas = rater_kappas(labels, ci=CI(None))["estimate"].round(2).tolist()
    assert kappas == [0.85, 0.88, 0.86]
