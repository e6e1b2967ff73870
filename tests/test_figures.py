"""The committed figures of the riddles study match the code that draws them.

`make figures` runs notebooks 06 and 09 (parameter set ``params/figures``) and writes the
original study's figures, and its four judges' panel figures, into ``figures/``. Here the same
run goes to a temporary folder, and each regenerated figure is compared with the committed one
by what it shows: PNG pixels and the decompressed PDF streams (page content, the embedded
fonts' glyphs and metrics), not metadata such as creation dates or the font subsetter's
version. The same run's tables are compared with the pre-redesign baseline by ``judgekit
compare``.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import zlib
from datetime import UTC, datetime
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
import yaml
from fontTools.ttLib import TTFont
from matplotlib.figure import Figure

from judgekit import config
from judgekit.plots import save_figure
from judgekit.reporting.notebooks import run_paper

FIGURE_PARAMS = config.PARAMS_DIR / "figures"
STUDY_FIGURES = sorted((config.ROOT / "figures").glob("riddles_*.*"))  # the committed ones
BASELINE = config.ROOT / "tests/fixtures/baseline_tables"
STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.DOTALL)
#: Largest root-mean-square pixel difference (0-255 scale) still counted as the same picture.
PNG_RMS_TOLERANCE = 1.0


def png_difference(expected: Path, actual: Path) -> float:
    """Return the RMS difference of two PNGs' pixels (infinite when their sizes differ)."""
    want, got = (255 * np.asarray(mpimg.imread(path), dtype=float) for path in (expected, actual))
    if want.shape != got.shape:
        return float("inf")
    return float(np.sqrt(np.mean((want - got) ** 2)))


#: Embedded-font tables that record the subsetting library (fontTools' version string in `name`,
#: its checksum and dates in `head`), not what the figure shows.
FONT_METADATA = {"name", "head"}


def font_program(data: bytes) -> bytes:
    """Return an embedded TrueType font's glyph, metric and map tables; other bytes unchanged."""
    if not data.startswith((b"\x00\x01\x00\x00", b"true", b"OTTO")):
        return data
    font = TTFont(io.BytesIO(data))
    head = font["head"]
    shape = (head.unitsPerEm, head.xMin, head.yMin, head.xMax, head.yMax, head.indexToLocFormat)
    tables = [tag.encode() + font.reader[tag] for tag in sorted(font.reader.keys())]
    return repr(shape).encode() + b"".join(t for t in tables if t[:4].decode() not in FONT_METADATA)


def pdf_streams(path: Path) -> list[bytes]:
    """Return a PDF's streams (page content, fonts, images), decompressed where deflated."""
    streams = []
    for raw in STREAM.findall(path.read_bytes()):
        try:
            streams.append(font_program(zlib.decompress(raw)))
        except zlib.error:
            streams.append(raw)
    return streams


def same_figure(expected: Path, actual: Path) -> bool:
    """Whether two files of one format show the same figure, metadata aside."""
    if expected.suffix == ".png":
        return png_difference(expected, actual) <= PNG_RMS_TOLERANCE
    return pdf_streams(expected) == pdf_streams(actual)


@pytest.fixture(scope="module")
def study_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Run `make figures`' parameter set once into a temporary folder: (run, figures)."""
    root = tmp_path_factory.mktemp("study")
    run_dir = run_paper(FIGURE_PARAMS, root / "run", figures_dir=root / "figures")
    return run_dir, root / "figures"


def test_figure_parameters_are_the_papers() -> None:
    figure_files = sorted(FIGURE_PARAMS.glob("*.yaml"))
    assert [f.stem for f in figure_files] == ["06_riddles_study_reproduced", "09_judge_panel"]
    for figure_file in figure_files:
        paper_file = config.PARAMS_DIR / "paper" / figure_file.name
        assert yaml.safe_load(figure_file.read_text()) == yaml.safe_load(paper_file.read_text())


@pytest.mark.notebooks
def test_committed_study_figures_match_the_code(study_run: tuple[Path, Path]) -> None:
    _, regenerated = study_run
    fresh = sorted(regenerated.glob("*.*"))
    assert [p.name for p in STUDY_FIGURES] == [p.name for p in fresh], (
        "figures/ lacks or has extra study figures: run `make figures`"
    )
    assert {p.suffix for p in fresh} == {".png", ".pdf"}
    drifted = [p.name for p in STUDY_FIGURES if not same_figure(p, regenerated / p.name)]
    assert drifted == [], f"committed figures differ from the code, run `make figures`: {drifted}"


@pytest.mark.notebooks
def test_study_tables_match_the_baseline(study_run: tuple[Path, Path]) -> None:
    run_dir, _ = study_run
    part = "tables/riddles_study"
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", "compare", BASELINE / "demo" / part, run_dir / part],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "9 of 9 tables match" in done.stdout


def _draw(colour: str) -> Figure:
    fig = Figure(figsize=(2, 1.5))
    fig.add_subplot().plot([0, 1, 2], [1, 0, 2], color=colour, label="x")
    return fig


def test_figure_comparison_ignores_metadata_but_not_content(tmp_path: Path) -> None:
    first, _ = save_figure(_draw("#0072B2"), "a", folder=tmp_path / "one")
    # The same drawing saved with a timestamp and other authorship metadata.
    dated = tmp_path / "two"
    dated.mkdir()
    fig = _draw("#0072B2")
    stamp = datetime(2020, 1, 2, tzinfo=UTC)
    fig.savefig(dated / "a.pdf", metadata={"CreationDate": stamp, "Creator": "someone else"})
    fig.savefig(dated / "a.png", dpi=300, metadata={"Software": "other", "Comment": "t=1"})
    changed, _ = save_figure(_draw("#D55E00"), "a", folder=tmp_path / "three")
    for suffix in (".pdf", ".png"):
        assert same_figure(first.with_suffix(suffix), (dated / "a").with_suffix(suffix))
        assert not same_figure(first.with_suffix(suffix), changed.with_suffix(suffix))


def _run_compare(baseline: Path, run: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgekit", "compare", str(baseline), str(run)],
        capture_output=True,
        text=True,
    )


def test_compare_tables_flags_drift_beyond_the_tolerance(tmp_path: Path) -> None:
    baseline = BASELINE / "demo/tables/riddles_study"
    run = tmp_path / "run"
    shutil.copytree(baseline, run)
    assert _run_compare(baseline, run).returncode == 0
    table = run / "krippendorff_alpha.csv"
    text = table.read_text()
    number = re.search(r"0\.\d{6,}", text)
    assert number is not None
    value = float(number.group())
    table.write_text(text.replace(number.group(), repr(value * (1 + 1e-9)), 1))
    assert _run_compare(baseline, run).returncode == 0, "a rounding-level change is tolerated"
    table.write_text(text.replace(number.group(), repr(value + 0.01), 1))
    done = _run_compare(baseline, run)
    assert done.returncode == 1
    assert "krippendorff_alpha.csv: column" in done.stdout
    table.unlink()
    done = _run_compare(baseline, run)
    assert done.returncode == 1
    assert "krippendorff_alpha.csv: missing" in done.stdout


def test_compare_tables_skips_the_measured_wall_time(tmp_path: Path) -> None:
    baseline = BASELINE / "demo/tables/batch_effects"
    run = tmp_path / "run"
    shutil.copytree(baseline, run)
    table = run / "batch_size_sensitivity.csv"
    lines = table.read_text().splitlines()
    header = re.split("[,;]", lines[0])
    separator = ";" if ";" in lines[0] else ","
    cells = lines[1].split(separator)
    cells[header.index("wall_time_s")] = "99999.0"
    table.write_text("\n".join([lines[0], separator.join(cells), *lines[2:]]) + "\n")
    assert _run_compare(baseline, run).returncode == 0
    cells[header.index("n_items")] = "99999"
    table.write_text("\n".join([lines[0], separator.join(cells), *lines[2:]]) + "\n")
    assert _run_compare(baseline, run).returncode == 1


def test_compare_tables_skips_latency_and_label_times_but_not_scores(tmp_path: Path) -> None:
    # Two runs of one study: the same scores, other request latencies and labelling times.
    baseline, run = tmp_path / "baseline", tmp_path / "run"
    baseline.mkdir(), run.mkdir()
    first = pd.DataFrame(
        {
            "item_id": ["1", "2"],
            "score": [3, 5],
            "latency_s": [0.4, 1.2],
            "labelled_at": ["2026-12-01T05:16:37+00:00", "2026-12-01T05:16:40+00:00"],
        }
    )
    first.to_csv(baseline / "judgments.csv", index=False)
    again = first.assign(latency_s=[9.1, 7.7], labelled_at="2026-12-01T07:42:18+00:00")
    again.to_csv(run / "judgments.csv", index=False)
    assert _run_compare(baseline, run).returncode == 0
    again.assign(score=[3, 0]).to_csv(run / "judgments.csv", index=False)
    done = _run_compare(baseline, run)
    assert done.returncode == 1 and "column 'score'" in done.stdout
