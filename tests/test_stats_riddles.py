"""The riddles study's published agreement figures, recomputed from its scores.csv.

Source: boczkakaroly/ai-and-data-projects, hungarian-riddles-benchmark-v2 (Károly Boczka);
see shared/datasets/hungarian-riddles/SOURCE.md. One human rater (Hum) and four LLM judges
(Per = Perplexity, GPT, Gemini/Gem, Cla = Claude) score 600 answers. The study reports
human-vs-judge quadratic-weighted kappas (sklearn, i.e. rank-based weights on the observed
levels) and 5-rater interval Krippendorff alphas.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from judgekit.stats import cohen_kappa, krippendorff_alpha

pytestmark = pytest.mark.shared

JUDGES = {
    "Acc": ("Per", "GPT", "Gemini", "Cla"),
    "Rea": ("Per", "GPT", "Gem", "Cla"),
    "Gra": ("Per", "GPT", "Gem", "Cla"),
}
PUBLISHED_KAPPA = {
    "Acc": (0.896, 0.884, 0.918, 0.893),
    "Rea": (0.876, 0.870, 0.893, 0.885),
    "Gra": (0.533, 0.423, 0.101, 0.362),
}
PUBLISHED_ALPHA = {"Acc": 0.915, "Rea": 0.883, "Gra": 0.242}
SCALES = {"Acc": (0, 3, 5), "Rea": (0, 1, 2, 3, 4, 5), "Gra": (0, 1, 2, 3, 4, 5)}


@pytest.fixture(scope="module")
def scores_long(shared_datasets: Path) -> pd.DataFrame:
    wide = pd.read_csv(shared_datasets / "hungarian-riddles" / "scores.csv", sep=";")
    wide = wide.loc[:, ~wide.columns.str.startswith("Unnamed")]
    assert len(wide) == 600
    value_cols = [c for c in wide.columns if c[:4] in ("Acc_", "Rea_", "Gra_")]
    long = wide.melt(id_vars=["ID"], value_vars=value_cols, var_name="column", value_name="score")
    long[["criterion", "rater"]] = long["column"].str.split("_", expand=True)
    return long.rename(columns={"ID": "item"})


@pytest.mark.parametrize("criterion", ["Acc", "Rea", "Gra"])
def test_human_vs_judge_quadratic_kappas(scores_long, criterion):
    data = scores_long[scores_long["criterion"] == criterion]
    for judge, published in zip(JUDGES[criterion], PUBLISHED_KAPPA[criterion], strict=True):
        row = cohen_kappa(
            data, "Hum", judge, scale=SCALES[criterion], weights="quadratic", weight_basis="rank"
        ).iloc[0]
        assert round(row["estimate"], 3) == published, (criterion, judge, row["estimate"])
        assert row["n"] == 600 and row["n_dropped"] == 0


@pytest.mark.parametrize("criterion", ["Acc", "Rea", "Gra"])
def test_five_rater_interval_alphas(scores_long, criterion):
    data = scores_long[scores_long["criterion"] == criterion]
    row = krippendorff_alpha(data, level_of_measurement="interval").iloc[0]
    assert round(row["estimate"], 3) == PUBLISHED_ALPHA[criterion]
    assert row["n"] == 600


def test_value_based_accuracy_kappa_differs_from_published(scores_long):
    # On the uneven 0/3/5 scale, value-based weights give another number than the published
    # (rank-based) one: the choice of weights must be stated with the result.
    data = scores_long[scores_long["criterion"] == "Acc"]
    rank = cohen_kappa(data, "Hum", "Gemini", scale=(0, 3, 5), weights="quadratic")
    value = cohen_kappa(
        data, "Hum", "Gemini", scale=(0, 3, 5), weights="quadratic", weight_basis="value"
    )
    assert round(rank["estimate"].iloc[0], 3) == 0.918
    human = data[data["rater"] == "Hum"].set_index("item")["score"]
    judge = data[data["rater"] == "Gemini"].set_index("item")["score"].reindex(human.index)
    table = pd.crosstab(human, judge).reindex(index=[0, 3, 5], columns=[0, 3, 5], fill_value=0)
    ref = sm_cohens_kappa(table.to_numpy(), weights=np.array([0, 3, 5]), wt="quadratic")
    assert value["estimate"].iloc[0] == pytest.approx(ref.kappa)
    assert abs(value["estimate"].iloc[0] - rank["estimate"].iloc[0]) > 0.005
