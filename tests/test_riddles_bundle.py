"""The original riddles study ships as an analysis bundle; ``make test`` verifies it (issue 27).

``make figures`` rebuilds ``data/bundles/riddles-study`` from ``params/figures``; here it is
verified as a second researcher would: every file against the manifest, then the notebooks
executed again on the bundle's own copy of the published scores and every table compared.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from judgekit import config
from judgekit.sharing.export import MANIFEST, sha256_file
from judgekit.sharing.verify import verify_bundle

BUNDLE = config.DATA_DIR / "bundles" / "riddles-study"


@pytest.mark.notebooks
def test_the_riddles_bundle_verifies_and_a_changed_score_is_named(tmp_path: Path) -> None:
    steps = json.loads((BUNDLE / "report" / "steps.json").read_text())
    assert [s["notebook"] for s in steps][:1] == ["06_riddles_study_reproduced"]
    assert steps[0]["parameters"]["scores_path"] == "{bundle}/inputs/riddles_v2_scores.csv"
    assert (BUNDLE / "inputs" / "riddles_v2_scores.csv").read_bytes() == (
        config.DATA_DIR / "riddles_v2_scores.csv"
    ).read_bytes(), "the bundle's input is the study's published score table"
    result = verify_bundle(BUNDLE, io.StringIO())
    assert result.problems == []
    assert "report tables re-executed and compared" in result.checked

    copy = tmp_path / "riddles-study"
    shutil.copytree(BUNDLE, copy)
    scores_path = copy / "inputs" / "riddles_v2_scores.csv"
    lines = scores_path.read_text(encoding="utf-8").split("\n")
    header, first = lines[0].split(";"), lines[1].split(";")
    human = header.index("Acc_Hum")  # the expert's accuracy score of the first answer
    first[human] = "0" if first[human] != "0" else "5"
    lines[1] = ";".join(first)
    scores_path.write_text("\n".join(lines), encoding="utf-8")
    problems = verify_bundle(copy, io.StringIO()).problems
    assert (
        "inputs/riddles_v2_scores.csv: changed since export (sha256 differs from the manifest)"
        in (problems)
    )
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["files"]["inputs/riddles_v2_scores.csv"]["sha256"] = sha256_file(scores_path)
    (copy / MANIFEST).write_text(json.dumps(manifest))
    problems = verify_bundle(copy, io.StringIO()).problems
    # every problem is a recomputed table's (plus, when a library moved since the export --
    # CI installs the newest -- one line naming the tables and the libraries that differ)
    tables = ("report/tables/", "report: ", "numbers differ in report")
    assert problems and all(p.startswith(tables) for p in problems), problems
