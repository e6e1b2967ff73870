"""An imported study reports: its rubric is the one the import recorded (scale, no prompt)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judgekit.cli.main import main
from judgekit.rubrics.imported import ImportedRubric
from judgekit.study.folder import load_study
from judgekit.study.scored import NO_SCALE
from judgekit.types import Item, Scale, UsageError

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
FASTCHAT = FIXTURES / "fastchat_gpt-4_single.jsonl"


def _labels(path: Path) -> Path:
    """A long table (item, rater, score) of two raters for every FastChat judgment's item."""
    rows = []
    for n, line in enumerate(FASTCHAT.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        item = f"q{record['question_id']}-{record['model']}-t{record['turn']}"
        rows += [{"item": item, "rater": "expert", "score": 1 + (7 * n) % 10}]
        rows += [{"item": item, "rater": "student", "score": 1 + (3 * n) % 10}]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _study(tmp_path: Path) -> Path:
    study = tmp_path / "study"
    labels = ["--labels", str(_labels(tmp_path / "ratings.csv"))]
    assert main(["import", "--from", "fastchat-single", str(FASTCHAT), "--study", str(study),
                 *labels]) == 0  # fmt: skip
    return study


def test_an_imported_rubric_carries_the_sources_scale_and_no_prompt(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path))
    mt_bench = study.rubric("mt_bench")
    assert isinstance(mt_bench, ImportedRubric)
    assert mt_bench.scale == Scale(tuple(range(1, 11)))
    assert mt_bench.adapter == "fastchat-single"
    assert mt_bench.output_format == "imported_scores" and mt_bench.system_prompt() == ""
    with pytest.raises(UsageError, match=r"^rubric 'mt_bench' was imported .*no prompt"):
        mt_bench.render([Item("1", {})])


def test_format_and_scale_of_a_long_import_are_recorded(tmp_path: Path) -> None:
    source = tmp_path / "replies.csv"
    pd.DataFrame(
        {"item": ["a", "b"], "judge": "j", "reply": ["Rating: [[3]]", "Rating: [[5]]"]}
    ).to_csv(source, index=False)
    study = tmp_path / "study"
    assert main(["import", "--from", "long", str(source), "--study", str(study), "--name",
                 "mine", "--format", "score_line", "--scale", "1-5", "--score-marker",
                 "Rating: [[N]]"]) == 0  # fmt: skip
    rubric = load_study(study).rubric("mine")
    assert isinstance(rubric, ImportedRubric)
    assert (rubric.output_format, rubric.score_marker) == ("score_line", "Rating: [[N]]")
    assert rubric.scale.allowed == (1, 2, 3, 4, 5)


def test_an_import_without_a_scale_is_refused_in_one_line_by_name(tmp_path: Path) -> None:
    source = tmp_path / "scores.csv"
    pd.DataFrame({"item": ["a", "b"], "judge": "j", "score": [1, 2]}).to_csv(source, index=False)
    study = tmp_path / "study"
    assert main(["import", "--from", "long", str(source), "--study", str(study)]) == 0
    with pytest.raises(UsageError, match="records no copy of it nor its scale"):
        load_study(study).rubric("imported")
    again = tmp_path / "again"
    assert main(["import", "--from", "long", str(source), "--study", str(again),
                 "--scale", "1-4"]) == 0  # fmt: skip
    assert load_study(again).rubric("imported").scale.allowed == (1, 2, 3, 4)


@pytest.mark.notebooks
def test_imported_studies_report_export_and_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FastChat under its own rubric name, with two raters: the whole report (AlpacaEval is
    pairwise: tests/test_import_pairwise.py)."""
    monkeypatch.setenv("TQDM_DISABLE", "1")
    study = _study(tmp_path)
    assert main(["report", str(study), "--html"]) == 0
    assert (study / "report" / "report.html").is_file()
    steps = json.loads((study / "report" / "steps.json").read_text(encoding="utf-8"))
    assert {s["status"] for s in steps} <= {"ran", "skipped"}
    ran = {s["notebook"] for s in steps if s["status"] == "ran"}
    assert {"02_human_agreement", "05_distributions_and_bias"} <= ran
    assert all(s["skipped"].strip() and "\n" not in s["skipped"]
               for s in steps if s["status"] == "skipped")  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["export", str(study), "-o", "bundle.zip"]) == 0
    assert main(["verify", "bundle.zip"]) == 0


def test_scores_off_the_stated_scale_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "scores.csv"
    pd.DataFrame({"item": ["a", "b"], "judge": "j", "score": [1, 7]}).to_csv(source, index=False)
    assert main(["import", "--from", "long", str(source), "--study", str(tmp_path / "s"),
                 "--scale", "1-4"]) == 2  # fmt: skip
    assert (
        "1 imported score(s) are not on --scale 1-4 (1, 2, 3, 4), first 7"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "s").exists()


def test_an_import_without_a_scale_skips_the_steps_that_read_one(tmp_path: Path) -> None:
    """An inspect_ai log states no scale: the report plans those steps as skipped, one line."""
    from judgekit.reporting.report import NEEDS_SCALE, plan_report, read_contents

    study = tmp_path / "study"
    source = FIXTURES / "inspect_popularity.json"
    assert main(["import", "--from", "inspect_ai", str(source), "--study", str(study)]) == 0
    steps = {s.notebook: s for s in plan_report(read_contents(study))}
    for name in NEEDS_SCALE:  # skipped for this, or already for another reason (one run)
        assert steps[name].skipped and "\n" not in steps[name].skipped
    assert "has no known scale" in steps["05_distributions_and_bias"].skipped
    again = tmp_path / "again"
    assert main(["import", "--from", "inspect_ai", str(source), "--study", str(again),
                 "--scale", "0-1"]) == 0  # fmt: skip
    planned = {s.notebook: s for s in plan_report(read_contents(again))}
    assert "no known scale" not in planned["05_distributions_and_bias"].skipped


def test_a_rubric_without_a_scale_beside_a_scaled_one_is_left_out_and_the_rest_reports(
    tmp_path: Path,
) -> None:
    """inspect_ai (no scale) and FastChat (1-10) in one study: the scored steps report mt_bench."""
    from judgekit.reporting.analyses import ANALYSES
    from judgekit.reporting.report import plan_report, read_contents
    from judgekit.study.scored import scored_study

    study = _study(tmp_path)
    source = FIXTURES / "inspect_popularity.json"
    assert main(["import", "--from", "inspect_ai", str(source), "--study", str(study)]) == 0
    steps = {s.notebook: s for s in plan_report(read_contents(study))}
    for name in ("02_human_agreement", "05_distributions_and_bias"):
        assert steps[name].skipped == "", name
        assert {c["rubric"] for c in steps[name].covers} == {"mt_bench"}, name
    scored, lines = scored_study(load_study(study))
    assert set(scored.judgments["rubric"]) == {"mt_bench"}
    assert lines == [f"skipped rubric popularity: it {NO_SCALE}"]
    result = ANALYSES["05_distributions_and_bias"](scored)
    assert set(result.tables["score_coverage"]["rubric"]) == {"mt_bench"}
