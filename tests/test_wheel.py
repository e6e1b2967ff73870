"""Installed from a wheel, outside the checkout, judgekit judges a study and reports on it.

The wheel is built from this checkout (``python -m build --wheel``: the build hook in
``setup.py`` copies the notebooks, parameter sets and demo data into the package) and installed
into a fresh virtual environment. The environment sees the system's site-packages for the
dependencies (no download), so the test first proves that ``judgekit`` itself is the venv's
copy, not this checkout or an editable install; then, in a folder outside the checkout, it runs
``judgekit simulate``, ``judgekit judge --study`` against it and ``judgekit report``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]  # a build and a report: minutes


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh venv with the wheel built from this checkout."""
    root = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"),
          str(config.ROOT)])  # fmt: skip
    (wheel,) = (root / "dist").glob("judgekit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "judgekit/_shipped/notebooks/02_human_agreement.ipynb" in names
    assert "judgekit/_shipped/params/demo/01_run_judging.yaml" in names
    assert "judgekit/_shipped/data/demo/riddles_demo.csv" in names
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(root / "venv")
    bin_dir = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
    # --ignore-installed: the system's judgekit (an editable install) must not count as this one
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--no-index", "--quiet"]
    _run([*pip, "--no-deps", "--ignore-installed", str(wheel)])
    return bin_dir


def _environment(bin_dir: Path) -> dict[str, str]:
    """The caller's environment without this checkout on the path, the venv's bin first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env.pop("PYTHONPATH", None)
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    return {**env, "TQDM_DISABLE": "1"}


def test_the_wheel_judges_and_reports_a_study_in_the_current_folder(
    installed: Path, tmp_path: Path
) -> None:
    env = _environment(installed)
    where = _run(
        [str(installed / "python"), "-c",
         "import judgekit, judgekit.config as c; print(judgekit.__file__); print(c.IN_CHECKOUT)"],
        cwd=tmp_path, env=env,
    ).stdout.split()  # fmt: skip
    assert Path(where[0]).is_relative_to(installed.parent), where  # the venv's copy
    assert where[1] == "False"
    assert not tmp_path.is_relative_to(config.ROOT)

    rows = [(f"q{i}", f"Question {i}?", f"Answer {i}", f"Answer {i}", (0, 3, 5)[i % 3])
            for i in range(1, 9)]  # fmt: skip
    pd.DataFrame(rows, columns=["ID", "Question", "Answer", "Ref_Answer", "human"]).to_csv(
        tmp_path / "items.csv", index=False
    )
    judgekit = str(installed / "judgekit")
    server = subprocess.Popen(
        [judgekit, "simulate"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().split(" at ")[-1].strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        judge_env = {**env, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-canary-wheel",
                     "JUDGEKIT_JUDGE_MODEL": "simulated-judge"}  # fmt: skip
        _run([judgekit, "judge", "items.csv", "--rubric", "riddle_accuracy", "--study", "study",
              "--labels-column", "human", "--runs", "2"], cwd=tmp_path, env=judge_env)  # fmt: skip
    finally:
        server.terminate()
        server.communicate(timeout=60)
    report = _run([judgekit, "report", "study"], cwd=tmp_path, env=env)
    assert "Traceback" not in report.stderr
    executed = sorted(p.name for p in (tmp_path / "study" / "report").glob("*.ipynb"))
    assert "02_human_agreement.ipynb" in executed and "03_run_consistency.ipynb" in executed
    assert list((tmp_path / "study" / "report" / "figures").glob("*.png"))
    assert list((tmp_path / "study" / "report" / "tables").rglob("*.csv"))
    site = Path(where[0]).parent.parent  # the old default wrote runs/ and figures/ here
    assert not (site / "runs").exists() and not (site / "figures").exists()
    assert not (tmp_path / "runs").exists()  # the report writes into the study only


def test_judgekit_notebooks_copies_the_parameterised_notebooks(
    installed: Path, tmp_path: Path
) -> None:
    env = _environment(installed)
    _run([str(installed / "judgekit"), "notebooks", "mine"], cwd=tmp_path, env=env)
    copied = sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb"))
    assert copied == sorted(p.name for p in config.NOTEBOOKS_DIR.glob("*.ipynb"))
