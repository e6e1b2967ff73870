"""The pairwise report step, the Study's pairwise accessors and Rao-Kupper ties (#33)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pairwise_fixture import write_pairwise_study
from scipy import optimize

from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.analyses.pairwise import SUMMARY_COLUMNS
from judgekit.stats import CI, bradley_terry
from judgekit.study.folder import load_study
from judgekit.types import UsageError


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory):
    return load_study(write_pairwise_study(tmp_path_factory.mktemp("pairwise") / "study"))


@pytest.fixture(scope="module")
def analysis(study):
    return ANALYSES["10_pairwise"](study, n_boot=200, seed=3)


def test_accessors_read_the_contract(study) -> None:
    assert study.pairwise_rubrics() == ["mtbench_pairwise"]
    comparisons = study.comparisons()
    assert len(comparisons) == 48 * 2 * 2
    assert set(comparisons["order"]) == {"ab", "ba"}
    assert (comparisons["verdict"] != "").eq(comparisons["status"] == "ok").all()
    labels = study.pair_labels()
    assert list(labels.columns) == ["pair_id", "rater", "verdict"]
    assert len(labels) == 96 and set(labels["verdict"]) <= {"a", "b", "tie"}
    with pytest.raises(UsageError, match="not a judged pairwise rubric"):
        study.comparisons("direct_scoring")


def test_the_position_biased_judge_shows_its_bias(analysis) -> None:
    bias = analysis.tables["position_bias"].set_index(["judge", "method"])
    first = bias.loc[("first", "first-position win rate")]
    fair = bias.loc[("fair", "first-position win rate")]
    assert first["ci_low"] > 0.75  # simulated: the first answer wins 85 % + half the rest
    assert fair["ci_low"] < 0.5 < fair["ci_high"]
    consistency = bias.xs("position consistency", level="method")["estimate"]
    assert consistency["first"] < 0.4 < 0.9 < consistency["fair"]
    shares = analysis.tables["outcome_shares"]
    inconsistent = shares[shares["outcome"] == "inconsistent"].set_index("judge")["estimate"]
    assert inconsistent["first"] > 0.5 > inconsistent["fair"]


def test_summary_table_and_design(analysis) -> None:
    summary = analysis.tables["pairwise_summary"]
    assert tuple(summary.columns) == SUMMARY_COLUMNS
    assert summary["n_pairs"].tolist() == [48, 48]
    fair, first = (summary.set_index("judge").loc[j] for j in ("fair", "first"))
    assert fair["accuracy"] > first["accuracy"] and fair["kappa"] > first["kappa"]
    assert fair["kappa"] == pytest.approx((fair["kappa_ab"] + fair["kappa_ba"]) / 2)
    assert "95% intervals" in fair["design"] and "seed 3" in fair["design"]
    for name in ("bradley_terry", "accuracy", "position_bias", "win_rate_vs_baseline"):
        assert "level" in analysis.tables[name].columns, name
        assert analysis.tables[name]["design"].str.contains("prompt").all(), name
    ranking = analysis.tables["bradley_terry"]
    fair_rank = ranking[ranking["judge"] == "fair"].set_index("model")["strength"]
    assert fair_rank["strong"] > fair_rank["middle"] > fair_rank["weak"]
    assert {"pairwise_outcomes", "pairwise_bradley_terry"} <= set(analysis.figures)
    assert not analysis.skipped


def test_a_mistaken_parameter_is_one_line(study) -> None:
    with pytest.raises(UsageError, match="baseline 'nobody' is no model"):
        ANALYSES["10_pairwise"](study, baseline="nobody", n_boot=10)
    with pytest.raises(UsageError, match="ties 'thurstone'"):
        ANALYSES["10_pairwise"](study, ties="thurstone", n_boot=10)


def test_parts_that_do_not_apply_are_skipped(tmp_path: Path) -> None:
    root = write_pairwise_study(tmp_path / "study", labels=False)
    judgments = pd.read_parquet(root / "judgments.parquet")
    one = judgments[(judgments["judge"] == "fair") & (judgments["order"] == "ab")]
    one.to_parquet(root / "judgments.parquet", index=False)
    (root / "items.csv").write_text("ID,Question\np00,q\n")
    result = ANALYSES["10_pairwise"](load_study(root), n_boot=50)
    skipped = "\n".join(result.skipped)
    for part in ("agreement with humans", "judges against each other", "position consistency",
                 "length bias"):  # fmt: skip
        assert f"skipped {part}:" in skipped
    assert result.tables["pairwise_summary"]["accuracy"].isna().all()


def _rao_kupper_by_scipy(games: pd.DataFrame) -> tuple[dict[str, float], float]:
    """Rao-Kupper by direct maximisation of the per-game likelihood (numerical gradient)."""
    models = sorted(set(games["model_a"]) | set(games["model_b"]))
    index = {m: k for k, m in enumerate(models)}
    i = games["model_a"].map(index).to_numpy()
    j = games["model_b"].map(index).to_numpy()
    w = games["winner"].to_numpy()

    def nll(x: np.ndarray) -> float:
        p = np.exp(np.concatenate([[0.0], x[:-1]]))
        theta = 1.0 + np.exp(x[-1])
        pi, pj = p[i], p[j]
        win_a = pi / (pi + theta * pj)
        win_b = pj / (pj + theta * pi)
        tie = (theta**2 - 1) * pi * pj / ((pi + theta * pj) * (theta * pi + pj))
        chosen = np.where(w == "a", win_a, np.where(w == "b", win_b, tie))
        return -float(np.log(chosen).sum())

    options = {"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}
    found = optimize.minimize(nll, np.zeros(len(models)), method="Nelder-Mead", options=options)
    strength = np.concatenate([[0.0], found.x[:-1]])
    strength -= strength.mean()
    return dict(zip(models, strength, strict=True)), 1.0 + float(np.exp(found.x[-1]))


def test_rao_kupper_matches_direct_likelihood_maximisation() -> None:
    rng = np.random.default_rng(7)
    truth = {"u": 0.8, "v": 0.1, "w": -0.9}
    rows = []
    for _ in range(600):
        a, b = rng.choice(list(truth), 2, replace=False)
        pa, pb, theta = np.exp(truth[a]), np.exp(truth[b]), 1.6
        win_a, win_b = pa / (pa + theta * pb), pb / (pb + theta * pa)
        rows.append((a, b, rng.choice(["a", "b", "tie"], p=[win_a, win_b, 1 - win_a - win_b])))
    games = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    table = bradley_terry(games, ties="rao-kupper", ci=CI(None)).set_index("model")
    expected, theta = _rao_kupper_by_scipy(games)
    for model, value in expected.items():
        assert table.loc[model, "strength"] == pytest.approx(value, abs=1e-4)
    assert table["tie_parameter"].iloc[0] == pytest.approx(theta, abs=1e-4)
    assert abs(theta - 1.6) < 0.2  # the simulated threshold is recovered


def test_rao_kupper_has_a_seeded_interval() -> None:
    games = pd.DataFrame(
        {
            "model_a": ["x", "y", "x", "y"] * 10,
            "model_b": ["y", "z", "z", "x"] * 10,
            "winner": ["a", "tie", "a", "a"] * 10,
        }
    )  # fmt: skip  (y beats x a quarter of the time: with x unbeaten the MLE would not exist)
    ci = CI("percentile", n_boot=40, seed=1)
    first = bradley_terry(games, ties="rao-kupper", ci=ci)
    again = bradley_terry(games, ties="rao-kupper", ci=ci)
    pd.testing.assert_frame_equal(first, again)
    assert (first["ci_low"] <= first["strength"]).all()


def test_the_report_plans_the_pairwise_step_and_skips_the_direct_ones(study) -> None:
    from judgekit.reporting.report import plan_report, read_contents

    steps = {s.notebook: s for s in plan_report(read_contents(study.folder.root))}
    assert steps["10_pairwise"].skipped == ""
    assert steps["10_pairwise"].parameters["rubric"] == ""  # every pairwise rubric
    assert steps["10_pairwise"].covers == ({"rubric": "mtbench_pairwise"},)
    for name in ("02_human_agreement", "05_distributions_and_bias", "09_judge_panel"):
        assert steps[name].skipped == "the study's rubrics are pairwise (see 10_pairwise)"


@pytest.mark.slow
def test_a_judged_position_biased_study_shows_its_bias_in_the_report(tmp_path: Path) -> None:
    from pairwise_study import make_pairwise_study

    from judgekit.cli.main import main

    study = make_pairwise_study(tmp_path, n_pairs=30, position=1.5)
    assert main(["report", str(study)]) == 0
    tables = study / "report" / "tables"
    bias = pd.read_csv(tables / "pairwise" / "position_bias.csv").set_index("method")
    assert bias.loc["first-position win rate", "ci_low"] > 0.6
    shares = pd.read_csv(tables / "pairwise" / "outcome_shares.csv").set_index("outcome")
    assert shares.loc["inconsistent", "estimate"] > 0.3
    summary = pd.read_csv(tables / "pairwise_summary.csv")
    assert tuple(summary.columns) == SUMMARY_COLUMNS
    assert summary["n_pairs"].tolist() == [30] and summary["accuracy"].notna().all()
    assert (study / "report" / "10_pairwise.ipynb").is_file()
    assert (study / "report" / "figures" / "pairwise_bradley_terry.png").is_file()


def test_a_judge_whose_ranking_has_no_estimate_is_one_skipped_line(tmp_path: Path) -> None:
    root = write_pairwise_study(tmp_path / "study")
    judgments = pd.read_parquet(root / "judgments.parquet")
    swept = judgments["judge"] == "first"  # this judge never lets "weak" win or tie
    loser_a = swept & (judgments["model_a"] == "weak")
    loser_b = swept & (judgments["model_b"] == "weak")
    judgments.loc[loser_a & (judgments["verdict"] != ""), "verdict"] = "b"
    judgments.loc[loser_b & (judgments["verdict"] != ""), "verdict"] = "a"
    judgments.to_parquet(root / "judgments.parquet", index=False)
    study = load_study(root)
    result = ANALYSES["10_pairwise"](study, n_boot=50, seed=3)
    assert "skipped Bradley–Terry ranking (first · base · 1): weak scores no win or tie" in (
        " ".join(result.lines)
    )
    assert set(result.tables["bradley_terry"]["judge"]) == {"fair"}
    shrunk = ANALYSES["10_pairwise"](study, bt_alpha=0.5, n_boot=50, seed=3)
    ranking = shrunk.tables["bradley_terry"].set_index(["judge", "model"])
    assert ranking.loc[("first", "weak"), "rank"] == 3
    assert np.isfinite(ranking["strength"]).all()
    assert not [line for line in shrunk.lines if "Bradley–Terry" in line]
