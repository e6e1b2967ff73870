"""`judgekit report` on a study of 2 rubrics x 2 variants x 2 judges, through the CLI.

The two judges ask the same model name at two simulators (their labels tell them apart), so a
table grouped by model instead of by judge would merge them. Every combination must appear in
the report's tables, and each figure must equal the one computed here, independently of
judgekit (scikit-learn's kappa), from the judgments table and the items file's labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from riddle_items import write_riddle_items
from sklearn.metrics import cohen_kappa_score

from judgekit.cli.main import main
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, SimulatorHandle, run_simulator

RUBRICS = {"riddle_accuracy": "Human_Accuracy", "riddle_reasoning": "Human_Reasoning"}
VARIANTS = ("base", "paraphrase_1")
JUDGES = ("a", "b")
N = 14
KEY = "sim-key-for-both"


@pytest.fixture
def servers() -> Iterator[dict[str, SimulatorHandle]]:
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                run_simulator(
                    SimulatorConfig(api_key=KEY, model="judge-m", seed=seed, noise_rate=0.35)
                )
            )
            for seed, name in enumerate(JUDGES, start=1)
        }


def _items(path: Path) -> Path:
    rng = np.random.default_rng(7)
    ids = [f"r{i:02d}" for i in range(N)]
    accuracy, reasoning = rng.choice([0, 3, 5], N), rng.choice([0, 1, 2, 3, 4, 5], N)
    models = ["GPT", "Claude"] * (N // 2)
    return write_riddle_items(path, ids, models, Human_Accuracy=accuracy, Human_Reasoning=reasoning)


def _kappa(judge: pd.Series, human: pd.Series, rubric: str, weights: str | None) -> float:
    """Cohen's kappa on the rubric's levels (index steps: judgekit's rank weights)."""
    levels = [float(v) for v in load_rubric(rubric).scale.allowed]
    both = pd.concat([judge, human], axis=1, join="inner").dropna()
    return float(
        cohen_kappa_score(both.iloc[:, 0], both.iloc[:, 1], labels=levels, weights=weights)
    )


@pytest.mark.notebooks
def test_the_report_covers_every_rubric_variant_and_judge_with_each_ones_numbers(
    tmp_path: Path, servers: dict[str, SimulatorHandle], monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGEKIT_JUDGE_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("JUDGEKIT_SIMULATOR_API_KEY", KEY)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    items, study = _items(tmp_path / "riddles.csv"), tmp_path / "study"
    judges = [f"--judge={n}=simulator:judge-m@{servers[n].base_url}" for n in JUDGES]
    variants = [f"--variant={v}" for v in VARIANTS]
    for rubric in RUBRICS:  # one command per rubric: the study accumulates
        args = ["judge", str(items), "--study", str(study), "--rubric", rubric, "--batch-size", "7"]
        assert main([*args, *variants, *judges]) == 0
    assert main(["report", str(study), "--html"]) == 0

    table = pd.read_parquet(study / "judgments.parquet")
    table = table[table["status"] == "ok"]
    human = pd.read_csv(items).set_index("ID")
    tables = study / "report" / "tables"
    combos = [(r, v, j) for r in RUBRICS for v in VARIANTS for j in JUDGES]

    def scores(rubric: str, variant: str, judge: str) -> pd.Series:
        rows = table[
            (table["rubric"] == rubric) & (table["variant"] == variant) & (table["judge"] == judge)
        ]
        return rows.set_index("item_id")["score"].astype(float)

    # Notebook 02: every combination against the human, each with its own kappa.
    kappas = pd.read_csv(tables / "human_agreement" / "kappa_family.csv", sep=None, engine="python")
    keyed = kappas.set_index(["rubric", "variant", "judge", "run", "kappa"])["estimate"]
    assert len(keyed) == len(combos) * 3 and keyed.index.is_unique
    for rubric, variant, judge in combos:
        labels = human[RUBRICS[rubric]].astype(float)
        for weighting, weights in (("unweighted", None), ("quadratic", "quadratic")):
            expected = _kappa(scores(rubric, variant, judge), labels, rubric, weights)
            got = keyed[(rubric, variant, judge, 1, weighting)]
            assert got == pytest.approx(expected, abs=1e-9), (rubric, variant, judge, weighting)

    # Notebook 04: the two variants compared for every rubric and judge.
    pairwise = pd.read_csv(
        tables / "paraphrase_sensitivity" / "paraphrase_pairwise.csv", sep=None, engine="python"
    )
    assert sorted(zip(pairwise["rubric"], pairwise["judge"], strict=True)) == sorted(
        (r, j) for r in RUBRICS for j in JUDGES
    )
    for row in pairwise.itertuples():
        base, other = (
            scores(row.rubric, "base", row.judge),
            scores(row.rubric, "paraphrase_1", row.judge),
        )
        assert row.estimate == pytest.approx(_kappa(base, other, row.rubric, "quadratic"), abs=1e-9)

    # Notebook 05: the scale used by every judge in every combination.
    coverage = pd.read_csv(
        tables / "distributions_and_bias" / "score_coverage.csv", sep=None, engine="python"
    )
    judged = coverage[coverage["rater"] != "human"]
    assert sorted(zip(judged["rubric"], judged["variant"], judged["rater"], strict=True)) == sorted(
        combos
    )

    # Notebook 09: the panel of a and b for every rubric and variant, each judge's own kappa.
    versus = pd.read_csv(
        tables / "judge_panel" / "judges_and_juries_vs_human.csv", sep=None, engine="python"
    )
    for rubric, variant, judge in combos:
        row = versus[
            (versus["rubric"] == rubric)
            & (versus["variant"] == variant)
            & (versus["rater_b"] == judge)
        ]
        assert len(row) == 1, (rubric, variant, judge)
        labels = human[RUBRICS[rubric]].astype(float)
        expected = _kappa(scores(rubric, variant, judge), labels, rubric, "quadratic")
        assert row["estimate"].item() == pytest.approx(expected, abs=1e-9)

    # steps.json and the page say which combinations each notebook covers.
    steps = {s["notebook"]: s for s in json.loads((study / "report" / "steps.json").read_text())}
    assert steps["02_human_agreement"]["parameters"]["variant"] == ""
    assert len(steps["02_human_agreement"]["covers"]) == len(combos)
    assert {(c["rubric"], c["variant"]) for c in steps["09_judge_panel"]["covers"]} == {
        (r, v) for r in RUBRICS for v in VARIANTS
    }
    assert steps["09_judge_panel"]["covers"][0]["judges"] == list(JUDGES)
    page = (study / "report" / "report.html").read_text(encoding="utf-8")
    assert page.count("Computed for 8 combination(s)") == 3  # notebooks 02, 05 and 07
    assert "riddle_reasoning · paraphrase_1 · run 1" in page  # a panel of notebook 09
