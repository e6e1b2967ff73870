"""``judgekit verify`` computes a study bundle's report in this process (issue 35 item 2).

No notebook runs during verification: every kernel entry point is made to raise, and a test
not marked slow may not start a process at all (tests/conftest.py), so a notebook executed
anywhere would fail it. The study is judged once against the simulator (in a thread) and its
report computed in-process; the slow test checks the notebooks' report gives the same tables.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import nbformat
import pandas as pd
import pytest
from test_bundle import judged_study, unpacked
from test_bundle_safety import rewrite_manifest

from judgekit.cli.main import main
from judgekit.reporting.analyses import ANALYSES
from judgekit.reporting.compute import compute_report
from judgekit.reporting.report import plan_report, read_contents
from judgekit.sharing.export import export_study
from judgekit.sharing.verify import verify_bundle

KEY = "canary-inproc-key-0123456789abcdef"
#: Every way judgekit starts a notebook kernel.
KERNEL_ENTRIES = (
    "papermill.execute_notebook",
    "judgekit.reporting.notebooks.execute",
    "judgekit.reporting.report.run_report",
)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One study judged by the simulator (two runs of six labelled items), no report yet."""
    yield judged_study(tmp_path_factory.mktemp("judged"), KEY)


@pytest.fixture(scope="module")
def bundle(judged: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study reported in-process and exported."""
    study = tmp_path_factory.mktemp("reported") / "study"
    shutil.copytree(judged, study)
    outcomes = compute_report(study, io.StringIO())
    assert {o.notebook for o in outcomes if o.state == "ran"} == {
        "02_human_agreement", "03_run_consistency", "05_distributions_and_bias"
    }  # fmt: skip
    return export_study(study, study.parent / "study.zip")


@pytest.fixture
def no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel entry point raises."""

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("a notebook was executed during verification")

    for target in KERNEL_ENTRIES:
        monkeypatch.setattr(target, refuse)


def tables(report: Path) -> dict[str, bytes]:
    return {p.relative_to(report).as_posix(): p.read_bytes() for p in report.rglob("*.csv")}


def test_a_study_bundle_verifies_with_every_kernel_refused(
    bundle: Path, tmp_path: Path, no_kernel: None
) -> None:
    err = io.StringIO()
    page = tmp_path / "verified.html"
    result = verify_bundle(bundle, err, html=page)
    assert result.problems == []
    assert "report tables recomputed in this process and compared" in result.checked
    assert "computing 02_human_agreement ..." in err.getvalue()
    html = page.read_text(encoding="utf-8")
    assert "Verified: every check passed." in html
    for section in ("02_human_agreement", "03_run_consistency", "05_distributions_and_bias"):
        assert f'id="nb-{section}"' in html
    assert "<h3>kappa_family</h3>" in html and "data:image/png;base64," in html


def test_a_changed_number_in_a_bundled_table_is_named(
    bundle: Path, tmp_path: Path, no_kernel: None
) -> None:
    root = unpacked(bundle, tmp_path / "bundle")
    path = root / "report" / "tables" / "human_agreement" / "kappa_family.csv"
    table = pd.read_csv(path)
    table.loc[0, "estimate"] += 0.25
    table.to_csv(path, index=False)
    rewrite_manifest(root)  # so only the recomputation can tell
    problems = verify_bundle(root, io.StringIO()).problems
    changed = [p for p in problems if p.startswith("report/tables/human_agreement/kappa_family")]
    assert len(changed) == 1 and "column 'estimate': 1 cell(s) differ" in changed[0], problems


def test_hostile_notebooks_in_a_study_bundle_never_run_and_change_no_verdict(
    bundle: Path, tmp_path: Path, no_kernel: None
) -> None:
    root = unpacked(bundle, tmp_path / "bundle")
    marker = tmp_path / "pwned"
    records = sorted((root / "report").glob("[0-9][0-9]_*.ipynb"))
    assert len(records) == 3
    for path in records:  # each step's record replaced by code that leaves a mark
        hostile = nbformat.v4.new_notebook()
        hostile.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').write('x')"))
        nbformat.write(hostile, path)
    rewrite_manifest(root)
    assert verify_bundle(root, io.StringIO(), html=tmp_path / "v.html").problems == []
    assert not marker.exists()
    assert str(marker) not in (tmp_path / "v.html").read_text(encoding="utf-8")  # ours shown


def test_a_step_whose_function_raises_is_a_problem_naming_it(
    bundle: Path, monkeypatch: pytest.MonkeyPatch, no_kernel: None
) -> None:
    def broken(study: Any, **parameters: Any) -> NoReturn:
        raise RuntimeError("consistency broke\nsecond line")

    monkeypatch.setitem(ANALYSES, "03_run_consistency", broken)
    problems = verify_bundle(bundle, io.StringIO()).problems
    assert problems[0] == (
        "report: 03_run_consistency failed (RuntimeError: consistency broke) on recomputation"
    )
    assert all("02_human" not in p and "distributions" not in p for p in problems)  # still ran
    assert any(p.startswith("report/tables/run_consistency/") for p in problems[1:])


def test_every_step_a_study_can_run_has_a_function(judged: Path) -> None:
    steps = plan_report(read_contents(judged))
    riddles = next(s for s in steps if s.notebook == "06_riddles_study_reproduced")
    assert riddles.skipped  # never applies to a study: it reproduces the shipped riddles study
    assert {s.notebook for s in steps} - {riddles.notebook} <= set(ANALYSES)


@pytest.mark.notebooks
def test_the_notebooks_report_gives_the_tables_verify_computes(
    judged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study, again = tmp_path / "study", tmp_path / "again"
    shutil.copytree(judged, study)
    assert main(["report", str(study)]) == 0  # papermill, as `judgekit report` runs it
    shutil.copytree(judged, again)
    compute_report(again, io.StringIO())
    assert tables(again / "report") == tables(study / "report")  # byte for byte
    by_notebooks = (study / "report" / "steps.json").read_text()
    in_process = json.loads((again / "report" / "steps.json").read_text())
    assert in_process == json.loads(by_notebooks.replace(str(study), str(again)))
    bundle = export_study(study, tmp_path / "study.zip")
    for target in KERNEL_ENTRIES:
        monkeypatch.setattr(target, lambda *a, **k: pytest.fail("a notebook ran"))
    assert verify_bundle(bundle, io.StringIO()).problems == []
