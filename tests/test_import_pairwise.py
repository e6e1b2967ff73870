"""Pairwise imports: FastChat pair files, LLMBar's and PandaLM's stored judgments as studies.

The published figures are reproduced from the study ``judgekit import`` writes (read back with
``Study.comparisons`` / ``Study.pair_labels``), not from the adapters' own tables.

LLMBar: Zeng, Yu, Gao, Meng, Goyal, Chen, "Evaluating Large Language Models at Evaluating
Instruction Following", ICLR 2024 (princeton-nlp/LLMBar at 900616b, ``Dataset/``, MIT licence;
its MT-Bench subset processes Zheng et al. 2023's expert votes, CC BY 4.0). PandaLM: Wang et
al., "PandaLM: An Automatic Evaluation Benchmark for LLM Instruction Tuning Optimization",
ICLR 2024 (WeOpenML/PandaLM at 3871806, ``data/``, Apache-2.0). FastChat: Zheng et al.,
"Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS 2023; the pair file is
lm-sys/FastChat @ 66f2a01b (branch ``skycamp``) ``fastchat/llm_judge/data/skycamp/
model_judgment/gpt-4_pair.jsonl``, Apache-2.0 (tests/fixtures/imports/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.cli.main import main
from judgekit.importers.llmbar import read_statistics
from judgekit.stats import CI, outcome_shares, rater_kappas, verdict_accuracy, verdict_kappa
from judgekit.study.folder import Study, load_study

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
PAIR_FILE = FIXTURES / "fastchat_skycamp_gpt-4_pair.jsonl"


def _import(study: Path, adapter: str, *files: Path, options: tuple[str, ...] = ()) -> Study:
    code = main(["import", "--from", adapter, *map(str, files), "--study", str(study), *options])
    assert code == 0
    return load_study(study)


def _labels(study: Study):
    return study.pair_labels().rename(columns={"verdict": "label"})


def test_fastchat_pair_games_are_both_orders_unswapped(tmp_path: Path) -> None:
    """Game 1 showed model_1 first (order ab), game 2 model_2 first (ba); both winners are stored
    by model slot already, so model_1 is A in either order."""
    lines = [json.loads(x) for x in PAIR_FILE.open()]
    study = _import(tmp_path / "s", "fastchat-pair", PAIR_FILE)
    comparisons = study.comparisons()
    assert len(comparisons) == 2 * len(lines) == 20
    slot = {"model_1": "a", "model_2": "b", "tie": "tie"}
    seen: dict[str, int] = {}
    for line in lines:
        pair = f"q{line['question_id']}-{line['model_1']}-vs-{line['model_2']}-t{line['turn']}"
        seen[pair] = run = seen.get(pair, 0) + 1  # the file holds each pair judged twice
        rows = comparisons[(comparisons["pair_id"] == pair) & (comparisons["run"] == run)]
        got = dict(zip(rows["order"], rows["verdict"], strict=True))
        assert got == {"ab": slot[line["g1_winner"]], "ba": slot[line["g2_winner"]]}
        assert set(rows["model_a"]) == {line["model_1"]} and set(rows["cluster"]) == {
            str(line["question_id"])
        }
    study_json = json.loads((tmp_path / "s" / "study.json").read_text())
    assert study_json["commands"][-1]["imported_rubric"]["kind"] == "pairwise"
    # the inconsistent pairs of the file are outcomes, not ties
    shares = outcome_shares(comparisons, ci=CI(None)).set_index(["run", "outcome"])["estimate"]
    assert shares[(1, "inconsistent")] + shares[(2, "inconsistent")] > 0


def test_fastchat_pair_import_twice_is_unchanged(tmp_path: Path) -> None:
    _import(tmp_path / "s", "fastchat-pair", PAIR_FILE)
    before = (tmp_path / "s" / "judgments.parquet").read_bytes()
    _import(tmp_path / "s", "fastchat-pair", PAIR_FILE)
    assert (tmp_path / "s" / "judgments.parquet").read_bytes() == before


@pytest.mark.parametrize(
    ("adapter", "text", "message"),
    [
        ("fastchat-pair", '{"question_id": 1, "model": "m", "judge": ["j"], "judgment": "x", '
         '"score": 3}\n', "lacks model_1"),
        ("fastchat-pair", '{"question_id": 1, "model_1": "x", "model_2": "y", "g1_winner": '
         '"model_3", "g2_winner": "tie", "judge": ["j"]}\n', "'model_3' is neither side"),
        ("fastchat-single", '{"question_id": 1, "model_1": "x", "model_2": "y", "g1_winner": '
         '"tie", "g2_winner": "tie", "judge": ["j"]}\n', "import it with --from fastchat-pair"),
        ("llmbar", "[]", "not an LLMBar result file"),
        ("pandalm", "[]", "--from pandalm reads testset-v1.json"),
    ],
)  # fmt: skip
def test_pairwise_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], adapter: str, text: str, message: str
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(text)
    assert main(["import", "--from", adapter, str(source), "--study", str(tmp_path / "s")]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "s" / "study.json").exists()


@pytest.fixture(scope="module")
def llmbar_study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    from judgekit import config

    if not config.RIDDLES_DIR.is_dir():
        pytest.skip(f"shared datasets not found at {config.DATASETS_DIR} (set JUDGEKIT_SHARED)")
    files = sorted(config.DATASETS_DIR.glob("llmbar/*/*/evaluators/*/*/result.json"))
    assert len(files) == 89
    root = tmp_path_factory.mktemp("llmbar") / "study"
    return _import(root, "llmbar", *files, options=("--verdicts", "stored"))


@pytest.mark.shared
def test_llmbar_figures_from_the_imported_study(llmbar_study: Study, shared_datasets: Path) -> None:
    """All 89 judge x strategy folders: correct_average and equal exactly; every stored kappa is
    off, and ours is Cohen's kappa on verdict and label coded alike."""
    comparisons = llmbar_study.comparisons()
    comparisons["subset"] = comparisons["pair_id"].str.rsplit("-", n=1).str[0]
    labels = _labels(llmbar_study)
    gold = labels.set_index("pair_id")["label"]
    checked = wrong = 0
    for folder in sorted(
        p.parent for p in shared_datasets.glob("llmbar/*/*/evaluators/*/*/statistics.json")
    ):
        published = read_statistics(folder)
        keep = (comparisons["subset"] == folder.parents[2].name) & (
            comparisons["judge"] == folder.parent.name
        )
        rows = comparisons[keep & (comparisons["variant"] == folder.name)].drop(columns="subset")
        accuracy = verdict_accuracy(rows, labels, ci=CI(None)).set_index("measure")["estimate"]
        shares = outcome_shares(rows, ci=CI(None)).set_index("outcome")["estimate"]
        # LLMBar's "equal" counts a pair whose two orders agree, two missing verdicts included
        equal = shares["consistent_win"] + shares["consistent_tie"] + shares["both_unparsed"]
        assert accuracy["accuracy"] == pytest.approx(published["correct_average"], abs=1e-12)
        assert equal == pytest.approx(published["equal"], abs=1e-12), folder
        ours = verdict_kappa(rows, labels, ci=CI(None)).set_index("order")["estimate"]
        for order, key in (("ab", "kappa_False"), ("ba", "kappa_True")):
            shown = rows[rows["order"] == order]
            their_codes = np.where(shown["verdict"] == "a", 1, 0)  # "1" -> 1, anything else 0
            label_codes = shown["pair_id"].map(gold).map({"a": 1, "b": 2})
            assert cohen_kappa_score(their_codes, label_codes) == pytest.approx(published[key])
            parsed = shown[shown["status"] == "ok"]
            expected = cohen_kappa_score(parsed["verdict"], parsed["pair_id"].map(gold))
            assert ours[order] == pytest.approx(expected, abs=1e-12)
            wrong += abs(ours[order] - published[key]) > 0.01
        checked += 1
    assert (checked, wrong) == (89, 2 * 89)


@pytest.fixture(scope="module")
def pandalm_study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    from judgekit import config

    folder = config.DATASETS_DIR / "pandalm"
    if not folder.is_dir():
        pytest.skip(f"shared datasets not found at {config.DATASETS_DIR} (set JUDGEKIT_SHARED)")
    root = tmp_path_factory.mktemp("pandalm") / "study"
    return _import(root, "pandalm", *sorted(folder.glob("*.json")))


@pytest.mark.shared
def test_pandalm_published_figures_from_the_imported_study(pandalm_study: Study) -> None:
    """README/paper: accuracy, macro precision, recall, F1 vs the annotators' majority, and the
    annotators' kappas 0.85, 0.88, 0.86."""
    comparisons, labels = pandalm_study.comparisons(), _labels(pandalm_study)
    assert len(comparisons) == 2 * 999 and len(labels) == 3 * 999
    published = {
        "gpt-3.5-turbo": (0.7107, 0.5879, 0.5736, 0.5755),
        "pandalm-7b": (0.6677, 0.5738, 0.5750, 0.5743),
    }
    measures = ("accuracy", "macro_precision", "macro_recall", "macro_f1")
    for judge, figures in published.items():
        rows = comparisons[comparisons["judge"] == judge]
        # the authors' script scores GPT-3.5's 25 "garbage" replies as ties: that view, named
        table = verdict_accuracy(rows, labels, unparsed="tie", ci=CI(None))
        got = table.set_index("measure")["estimate"]
        assert [round(float(got[m]), 4) for m in measures] == list(figures)
    gpt = comparisons[comparisons["judge"] == "gpt-3.5-turbo"]
    assert (gpt["status"] == "unparseable").sum() == 25  # kept as failures, not ties
    honest = verdict_accuracy(gpt, labels, ci=CI(None)).set_index("measure")["estimate"]
    assert round(float(honest["accuracy"]), 4) == 0.6977
    assert rater_kappas(labels, ci=CI(None))["estimate"].round(2).tolist() == [0.85, 0.88, 0.86]


@pytest.mark.shared
def test_pandalm_report_step_on_the_imported_study(pandalm_study: Study) -> None:
    """The pairwise report step (10_pairwise) on the import: its summary's accuracy (unparsed
    verdicts wrong) and the annotators' kappas."""
    from judgekit.reporting.analyses.pairwise import pairwise_analysis

    result = pairwise_analysis(pandalm_study, n_boot=20)
    summary = result.tables["pairwise_summary"].set_index("judge")
    assert round(float(summary.loc["gpt-3.5-turbo", "accuracy"]), 4) == 0.6977
    assert round(float(summary.loc["pandalm-7b", "accuracy"]), 4) == 0.6677
    assert sorted(result.tables["human_kappas"]["estimate"].round(2)) == [0.85, 0.86, 0.88]
    assert any("one order only" in line for line in result.lines)


@pytest.mark.shared
@pytest.mark.slow  # the report executes notebook 10
def test_pandalm_through_judgekit_report(pandalm_study: Study, tmp_path: Path) -> None:
    """``judgekit report`` on the imported PandaLM study writes pairwise_summary.csv with the
    published PandaLM-7B accuracy and the honest GPT-3.5 one."""
    import pandas as pd

    code = main(["report", str(pandalm_study.folder.root), "--html"])
    assert code == 0
    summary = pd.read_csv(pandalm_study.folder.root / "report" / "tables" / "pairwise_summary.csv")
    by_judge = summary.set_index("judge")["accuracy"]
    assert round(float(by_judge["pandalm-7b"]), 4) == 0.6677
    assert round(float(by_judge["gpt-3.5-turbo"]), 4) == 0.6977


LONG = """pair,judge,order,winner,model_a,model_b,prompt,human_winner
p1,j1,ab,A,m1,m2,q1,a
p1,j1,ba,a,m1,m2,q1,a
p2,j1,ab,Tie,m1,m2,q2,B
p2,j1,ba,2,m1,m2,q2,B
p3,j1,ab,,m1,m2,q2,
p3,j1,ba,0,m1,m2,q2,
"""


def test_long_table_with_a_winner_column_is_a_pairwise_study(tmp_path: Path) -> None:
    source = tmp_path / "winners.csv"
    source.write_text(LONG)
    study = _import(tmp_path / "s", "long", source, options=("--column", "item=pair"))
    got = study.comparisons().set_index(["pair_id", "order"])
    assert got["verdict"].to_dict() == {
        ("p1", "ab"): "a", ("p1", "ba"): "a", ("p2", "ab"): "tie", ("p2", "ba"): "b",
        ("p3", "ab"): "", ("p3", "ba"): "tie",
    }  # fmt: skip
    assert got.loc[("p3", "ab"), "status"] == "unparseable"
    assert set(got["model_b"]) == {"m2"} and got.loc[("p2", "ab"), "cluster"] == "q2"
    labels = study.pair_labels()
    assert dict(zip(labels["pair_id"], labels["verdict"], strict=True)) == {"p1": "a", "p2": "b"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("Tie,m1", "maybe,m1"), "'maybe' is not a side"),
        (lambda t: t + "p1,j1,ab,b,m1,m2,q1,a\n", "duplicate row(s) for one pair"),
        (lambda t: t.replace("p2,j1,ba,2,m1,m2,q2,B", "p2,j1,ba,2,m1,m2,q2,A"),
         "has two different human winners"),
        (lambda t: t.replace("p1,j1,ba", "p1,j1,xy"), "write ab or ba"),
    ],
)  # fmt: skip
def test_long_winner_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, message: str
) -> None:
    source = tmp_path / "winners.csv"
    source.write_text(edit(LONG))  # type: ignore[operator]
    argv = ["import", "--from", "long", str(source), "--column", "item=pair"]
    assert main([*argv, "--study", str(tmp_path / "s")]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "s" / "study.json").exists()


ALPACA = FIXTURES / "alpaca_eval_gpt4_alpaca-7b.json"  # one win: Bradley-Terry needs both sides


def test_alpaca_eval_is_a_pairwise_study_the_report_step_reads(tmp_path: Path) -> None:
    """AlpacaEval annotations (tatsu-lab/alpaca_eval, Li et al. 2023; the fixture README cites the
    file): probability-valued preferences become verdicts against the baseline, with the raw
    preference kept; the pairwise report step's win rate against the baseline is the discrete
    win rate AlpacaEval computes."""
    from judgekit.reporting.analyses.pairwise import pairwise_analysis

    records = json.loads(ALPACA.read_text(encoding="utf-8"))
    study = _import(tmp_path / "s", "alpaca_eval", ALPACA)
    assert study.pairwise_rubrics() == ["alpaca_eval"]
    result = pairwise_analysis(study, n_boot=20, baseline=records[0]["generator_1"])
    p = np.clip(np.array([float(r["preference"]) for r in records]) - 1, 0, 1)
    discrete = np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5)).mean()
    rates = result.tables["win_rate_vs_baseline"].set_index("model")
    assert float(rates.loc["alpaca-7b", "estimate"]) == pytest.approx(discrete, abs=1e-12)


@pytest.mark.shared
def test_the_direct_report_steps_skip_an_imported_pairwise_study(pandalm_study: Study) -> None:
    """Scores' steps (02-05, 07, 09) have nothing to read in a pairwise import: one line each."""
    from judgekit.reporting.report import NEEDS_SCALE, plan_report, read_contents

    steps = {s.notebook: s for s in plan_report(read_contents(pandalm_study.folder.root))}
    for name in NEEDS_SCALE:
        assert steps[name].skipped and "\n" not in steps[name].skipped
    assert "rubrics are pairwise" in steps["05_distributions_and_bias"].skipped
