"""``judgekit import``: long tables, samples, labels, bad input, and the study it writes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgekit.cli.main import main
from judgekit.study.folder import load_study
from judgekit.study.importing import ImportRequest, run_import

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def _table(path: Path, rows: list[dict[str, object]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _import(tmp_path: Path, *files: Path, study: str = "study", **options: object) -> Path:
    request = ImportRequest(str(options.pop("adapter", "long")), files, tmp_path / study, **options)  # type: ignore[arg-type]
    return run_import(request, command_line="judgekit import (test)")


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_long_scores_with_common_spellings(tmp_path: Path) -> None:
    rows = [
        {"Doc_ID": f"d{i}", "Annotator": judge, "Rating": score, "Document": f"src{i // 2}"}
        for i in range(6)
        for judge, score in (("gpt", 1 + i % 5), ("claude", 5 - i % 5))
    ]
    study = _import(tmp_path, _table(tmp_path / "j.csv", rows), name="summeval")
    loaded = load_study(study)
    verdicts = loaded.verdicts.set_index(["item_id", "judge"])
    for row in rows:
        assert verdicts.loc[(row["Doc_ID"], row["Annotator"]), "score"] == row["Rating"]
    assert set(loaded.verdicts["rubric"]) == {"summeval"}
    assert loaded.cluster == "question"  # the document is each item's cluster
    assert (
        loaded.verdicts["question"]
        == loaded.verdicts["item_id"].str[1:].astype(int).floordiv(2).map(lambda d: f"src{d}")
    ).all()


def test_replies_read_by_a_named_format_and_failures_are_statuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = ["SCORE: 4", "The answer is fine.\nSCORE: 2", "I cannot decide.", "SCORE: 9"]
    rows = [{"item": f"i{n}", "judge": "j", "reply": r} for n, r in enumerate(replies)]
    study = _import(
        tmp_path, _table(tmp_path / "r.csv", rows), output_format="score_line", scale="1-5"
    )
    verdicts = load_study(study).verdicts.set_index("item_id")
    assert verdicts.loc["i0", "score"] == 4 and verdicts.loc["i1", "score"] == 2
    assert verdicts.loc["i2", "status"] == "unparseable" and np.isnan(verdicts.loc["i2", "score"])
    assert verdicts.loc["i3", "status"] == "out_of_range" and np.isnan(verdicts.loc["i3", "score"])
    assert "2 of 4 replies (50.0%) not read" in capsys.readouterr().err


def test_replies_no_format_can_read_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"item": f"i{n}", "judge": "j", "reply": "Looks good to me."} for n in range(5)]
    path = _table(tmp_path / "r.csv", rows)
    args = [
        "import",
        "--from",
        "long",
        str(path),
        "--study",
        str(tmp_path / "s"),
        "--format",
        "score_line",
        "--scale",
        "1-5",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "none of the 5 replies could be read (unparseable 5" in err
    assert not (tmp_path / "s").exists()


def test_samples_summarised_by_a_stated_rule(tmp_path: Path) -> None:
    """G-Eval: 20 samples of one run -> the mean of the parsed ones, their count in the table."""
    rng = np.random.default_rng(7)
    scores = rng.integers(1, 6, size=20).astype(float)
    rows = [
        {"item": "a", "judge": "g", "sample": s + 1, "score": "" if s < 3 else scores[s]}
        for s in range(20)
    ]
    rows += [{"item": "b", "judge": "g", "sample": 1, "score": 3}]
    study = _import(tmp_path, _table(tmp_path / "g.csv", rows))
    judgments = load_study(study).judgments.set_index("item_id")
    assert judgments.loc["a", "score"] == pytest.approx(scores[3:].mean())
    assert (judgments.loc["a", "samples"], judgments.loc["a", "parsed_samples"]) == (20, 17)
    assert judgments.loc["a", "reason"] == "mean of parsed samples: 17 of 20"
    assert (judgments.loc["b", "samples"], judgments.loc["b", "score"]) == (1, 3)


def test_samples_weighted_by_token_probabilities(tmp_path: Path) -> None:
    rows = [{"item": "a", "judge": "g", "sample": n, "score": s, "probability": p}
            for n, (s, p) in enumerate([(1, 0.1), (3, 0.6), (5, 0.3)], 1)]  # fmt: skip
    judgments = load_study(_import(tmp_path, _table(tmp_path / "p.csv", rows))).judgments
    assert judgments["score"].iloc[0] == pytest.approx(0.1 * 1 + 0.6 * 3 + 0.3 * 5)
    assert judgments["reason"].iloc[0].startswith("probability-weighted mean")


def test_labels_long_and_wide_keep_raters_apart(tmp_path: Path) -> None:
    rows = [{"item": f"i{n}", "judge": "j", "score": n % 3} for n in range(4)]
    judged = _table(tmp_path / "j.csv", rows)
    wide = _table(
        tmp_path / "wide.csv",
        [{"item": f"i{n}", "ann1": n % 2, "ann2": "" if n == 3 else 2} for n in range(4)],
    )
    human = load_study(_import(tmp_path, judged, labels=wide)).human
    counts = human[human["status"] == "ok"].groupby("labeller").size().to_dict()
    assert counts == {"ann1": 4, "ann2": 3}
    long = _table(tmp_path / "long.csv", [{"item": "i1", "rater": "r", "score": 1}])
    human = load_study(_import(tmp_path, judged, study="s2", labels=long)).human
    assert human[["item_id", "labeller", "score"]].values.tolist() == [["i1", "r", 1.0]]


@pytest.mark.parametrize(
    ("rows", "labels", "expected"),
    [
        (
            [{"item": "A1", "judge": "j", "score": 1}, {"item": "a1 ", "judge": "j", "score": 2}],
            None,
            "differ only by case or whitespace",
        ),
        (
            [{"item": "a", "judge": "j", "score": 1}, {"item": "a", "judge": "j", "score": 2}],
            None,
            "1 duplicate row(s) for one item x judge x run x sample, first: item 'a'",
        ),
        ([{"item": "a", "judge": "j", "score": "good"}], None, "score 'good' is not a number"),
        ([{"item": "a", "score": 1}], None, "no judge column"),
        (
            [{"item": "a", "judge": "j", "score": 1}],
            [{"item": "b", "rater": "r", "score": 1}],
            "1 labelled item(s) are not among the imported judgments, first 'b'",
        ),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rows: list[dict[str, object]],
    labels: list[dict[str, object]] | None,
    expected: str,
) -> None:
    path = _table(tmp_path / "t.csv", rows)
    args = ["import", "--from", "long", str(path), "--study", str(tmp_path / "s")]
    if labels is not None:
        args += ["--labels", str(_table(tmp_path / "labels.csv", labels))]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and expected in err, err


def test_unknown_adapter_and_other_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = FIXTURES / "promptfoo_sample-export.json"
    assert main(["import", "--from", "langsmith", str(source), "--study", str(tmp_path / "s")]) == 2
    assert (
        "no such adapter; choose one of alpaca_eval, fastchat-pair, fastchat-single"
        in capsys.readouterr().err
    )
    assert (
        main(["import", "--from", "fastchat-single", str(source), "--study", str(tmp_path / "s")])
        == 2
    )
    assert "is not a FastChat single-answer judgment file" in capsys.readouterr().err


def test_same_import_twice_is_byte_identical_and_sources_untouched(tmp_path: Path) -> None:
    source = FIXTURES / "fastchat_gpt-4_single.jsonl"
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    study = _import(tmp_path, source, adapter="fastchat-single")
    first = _tree(study)
    _import(tmp_path, source, adapter="fastchat-single")
    assert _tree(study) == first
    other = _tree(_import(tmp_path, source, adapter="fastchat-single", study="other"))
    assert {k: v for k, v in other.items() if k != "study.json"} == {
        k: v for k, v in first.items() if k != "study.json"
    }
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    (command,) = manifest["commands"]
    assert command["import"]["sources"] == [{"path": str(source.resolve()), "sha256": before}]
    assert command["import"]["adapter"] == "fastchat-single" and command["scale"] == [1, 10]


def test_reimport_of_a_changed_file_replaces_not_duplicates(tmp_path: Path) -> None:
    path = _table(tmp_path / "j.csv", [{"item": "a", "judge": "j", "score": 1}])
    study = _import(tmp_path, path)
    _table(path, [{"item": "a", "judge": "j", "score": 2}, {"item": "b", "judge": "j", "score": 3}])
    _import(tmp_path, path)
    verdicts = load_study(study).verdicts
    assert sorted(zip(verdicts["item_id"], verdicts["score"], strict=True)) == [
        ("a", 2.0),
        ("b", 3.0),
    ]
    assert len(json.loads((study / "study.json").read_text(encoding="utf-8"))["commands"]) == 2


def test_a_source_inside_the_study_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = _import(tmp_path, _table(tmp_path / "j.csv", [{"item": "a", "judge": "j", "score": 1}]))
    assert (
        main(["import", "--from", "long", str(study / "judgments.csv"), "--study", str(study)]) == 2
    )
    assert "is inside --study" in capsys.readouterr().err


@pytest.mark.notebooks
def test_import_then_report_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replies read by a packaged rubric, one human rater: `judgekit report` gives its kappa."""
    from sklearn.metrics import cohen_kappa_score

    monkeypatch.setenv("TQDM_DISABLE", "1")
    rng = np.random.default_rng(4)
    human = rng.integers(1, 5, 24)
    judged = np.clip(human + rng.integers(-1, 2, 24), 1, 4)
    rows = [{"item": f"q{n}", "judge": "their-judge", "reply": f"Mostly right.\nSCORE: {s}",
             "question": f"doc{n // 4}"} for n, s in enumerate(judged)]  # fmt: skip
    source = _table(tmp_path / "judgments.csv", rows)
    labels = _table(
        tmp_path / "labels.csv", [{"item": f"q{n}", "expert": h} for n, h in enumerate(human)]
    )
    study = tmp_path / "study"
    args = [
        "import",
        "--from",
        "long",
        str(source),
        "--study",
        str(study),
        "--rubric",
        "factual_accuracy",
    ]
    assert main([*args, "--labels", str(labels)]) == 0
    assert main(["report", str(study), "--html"]) == 0
    assert (study / "report" / "report.html").is_file()
    kappas = pd.read_csv(
        study / "report" / "tables" / "human_agreement" / "kappa_family.csv",
        sep=None,
        engine="python",
    )
    unweighted = kappas[kappas["kappa"] == "unweighted"]["estimate"].iloc[0]
    assert unweighted == pytest.approx(
        cohen_kappa_score(judged, human, labels=[1, 2, 3, 4]), abs=1e-9
    )


def test_meta_correlation_on_an_imported_study(tmp_path: Path) -> None:
    """The recipe of docs/import.md: a study's verdicts and raters as one long table."""
    from scipy import stats

    from judgekit.stats import CI, inter_human_agreement, meta_correlation

    rng = np.random.default_rng(9)
    truth = rng.normal(size=40)
    rows = [{"item": f"s{n}", "judge": "geval", "score": round(3 + t + rng.normal(0, 0.5), 2),
             "document": f"d{n // 5}"} for n, t in enumerate(truth)]  # fmt: skip
    ratings = [
        {
            "item": f"s{n}",
            "rater": r,
            "score": int(np.clip(round(3 + t + rng.normal(0, 0.7)), 1, 5)),
        }
        for n, t in enumerate(truth)
        for r in ("ann1", "ann2")
    ]
    study = load_study(
        _import(
            tmp_path, _table(tmp_path / "j.csv", rows), labels=_table(tmp_path / "h.csv", ratings)
        )
    )
    judged = study.verdicts.rename(columns={"item_id": "item", "judge": "rater"})
    human = study.human.rename(columns={"item_id": "item", "labeller": "rater"})
    human["question"] = human["item"].map(judged.set_index("item")["question"])
    columns = ["item", "rater", "score", "status", "question"]
    long = pd.concat([judged[columns], human[columns]], ignore_index=True)
    table = meta_correlation(
        long, ["geval"], ["ann1", "ann2"], ci=CI("percentile", n_boot=200, seed=0)
    )
    mean_human = pd.DataFrame(ratings).groupby("item")["score"].mean()
    judge = pd.DataFrame(rows).set_index("item")["score"].reindex(mean_human.index)
    dataset = table[(table["level"] == "dataset") & (table["method"] == "spearman")].iloc[0]
    assert dataset["estimate"] == pytest.approx(stats.spearmanr(judge, mean_human).statistic)
    assert dataset["n_documents"] == 8
    agreement = inter_human_agreement(long, ["ann1", "ann2"], ci=CI(None))
    assert set(agreement["statistic"]) >= {"krippendorff_alpha[interval]", "ICC(A,1)"}
