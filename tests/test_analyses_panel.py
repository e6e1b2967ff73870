"""Report step 09 as a function: the panel's agreement, shared errors, juries, costs, its lines.

The study is three simulated judges (one fails an item) and a human label per item; the
kappas are checked against scikit-learn and the error correlations against numpy on the same
scores, not against judgekit's statistics.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from test_panel_report import LEVELS, panel_study

from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.panel import panel_analysis
from judgekit.study.folder import Study, load_study

COMBINATION = "factual_accuracy · base · run 1"
JUDGES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    return load_study(panel_study(tmp_path_factory.mktemp("panel") / "study", JUDGES))


@pytest.fixture(scope="module")
def analysis(study: Study):
    return ANALYSES["09_judge_panel"](study, n_boot=50)


def _wide(study: Study) -> pd.DataFrame:
    """One column per judge (NaN: not scored) and the human's, by item."""
    ok = study.verdicts[study.verdicts["status"] == "ok"]
    wide = ok.pivot(index="item_id", columns="judge", values="score").astype(float)
    return wide.assign(human=study.labels.set_index("item_id")["score"].astype(float))


def test_tables_figures_and_lines(analysis) -> None:
    assert ANALYSES["09_judge_panel"] is panel_analysis
    assert list(analysis.tables) == [
        "panel_agreement", "error_correlation", "jury_scores", "dawid_skene_confusion",
        "judges_and_juries_vs_human", "jury_vs_best_judge", "panel_subsets",
        "self_preference_panel",
    ]  # fmt: skip
    assert list(analysis.figures) == [
        "panel_judge_agreement", "panel_error_correlation", "panel_forest", "panel_subsets_cost",
    ]  # fmt: skip
    assert analysis.lines[0] == (
        f"judges: {JUDGES}; rubrics: ['{COMBINATION}']; human: human; cost: Tokens per item"
    )
    assert analysis.skipped == []
    assert all(set(t["combination"]) == {COMBINATION} for t in analysis.tables.values())


def test_kappas_between_judges_and_with_the_human(study, analysis) -> None:
    wide = _wide(study)
    agreement = analysis.tables["panel_agreement"]
    pairs = agreement[agreement["statistic"] == "cohen_kappa"].set_index(["rater_a", "rater_b"])
    for a, b in combinations(JUDGES, 2):
        both = wide[[a, b]].dropna()
        expected = cohen_kappa_score(both[a], both[b], weights="quadratic", labels=list(LEVELS))
        assert pairs.loc[(a, b), "estimate"] == pytest.approx(expected)
        assert pairs.loc[(a, b), "n"] == len(both)
    versus = analysis.tables["judges_and_juries_vs_human"].set_index("rater_b")
    for judge in JUDGES:
        both = wide[[judge, "human"]].dropna()
        expected = cohen_kappa_score(both[judge], both["human"], weights="quadratic")
        assert versus.loc[judge, "estimate"] == pytest.approx(expected)
    lowest = min(combinations(JUDGES, 2), key=lambda p: pairs.loc[p, "estimate"])
    assert any(line.startswith(f"Lowest pair: {lowest[0]} and {lowest[1]}") for line in
               analysis.lines)  # fmt: skip


def test_error_correlations_and_the_effective_number_of_judges(study, analysis) -> None:
    full = _wide(study).dropna()  # every judge and the human scored the item
    errors = full[JUDGES].sub(full["human"], axis=0)
    centred = errors - errors.groupby(full["human"]).transform("mean")  # within each human score
    table = analysis.tables["error_correlation"]
    rows = table[table["statistic"] == "error_correlation"].set_index(["rater_a", "rater_b"])
    r = {p: np.corrcoef(centred[p[0]], centred[p[1]])[0, 1] for p in combinations(JUDGES, 2)}
    for pair, expected in r.items():
        assert rows.loc[pair, "estimate"] == pytest.approx(expected)
    mean_r = np.mean(list(r.values()))
    effective = table[table["statistic"] == "effective_judges"]["estimate"].iloc[0]
    assert effective == pytest.approx(3 / (1 + 2 * mean_r))
    assert any(line.startswith(f"3 judges (each combination's panel) are worth {COMBINATION}: "
                               f"{effective:.2f}") for line in analysis.lines)  # fmt: skip


def test_juries_subsets_and_their_costs(study, analysis) -> None:
    juries = analysis.tables["jury_scores"]
    mean = juries[juries["rater"] == "jury:mean"].set_index("item")
    wide = _wide(study)
    assert mean.loc["i5", "status"] == "judge_unscored"  # judge a failed it: no jury score
    scored = mean[mean["status"] == "ok"]
    assert scored["value"].to_numpy() == pytest.approx(wide.loc[scored.index, JUDGES].mean(axis=1))
    subsets = analysis.tables["panel_subsets"].set_index("subset")
    assert len(subsets) == 7
    tokens = {judge: 100 * (j + 1) + 10 for j, judge in enumerate(JUDGES)}  # prompt + output
    for judge, per_request in tokens.items():  # six requests of ten items each, per judge
        assert subsets.loc[judge, "cost"] == pytest.approx(per_request * 6 / 60)
    front = subsets[subsets["pareto"]]
    assert (
        f"{COMBINATION}: Pareto front "
        + "; ".join(f"{s} ({row.cost:g}, {row.estimate:.3f})" for s, row in front.iterrows())
        in analysis.lines
    )


def test_parts_that_do_not_apply_are_skipped_lines(tmp_path: Path, study) -> None:
    costs = panel_analysis(study, n_boot=20, judge_costs={"a": 1, "b": 2, "c": 5},
                           own_models={"a": "nobody"})  # fmt: skip
    assert costs.skipped == [
        "skipped self-preference across the panel: no answers written by a judge's own family "
        "(set own_models: judge -> model)"
    ]
    assert "self_preference_panel" not in costs.tables
    assert costs.tables["panel_subsets"].set_index("subset").loc["a + c", "cost"] == 6
    one = panel_analysis(load_study(panel_study(tmp_path / "one", ["a"])), n_boot=20)
    assert one.skipped == [
        f"skipped {COMBINATION}: judged by ['a'] only, a panel needs two or more judges"
    ]
    assert one.tables == {} and one.figures == {}
