"""nbval runs notebooks here with their default parameters (``pytest --nbval-lax notebooks/...``).

Their defaults write tables to ``runs/`` and figures to ``figures/``; during a test session both
go to one temporary folder instead (the kernels read ``JUDGEKIT_RUNS`` and ``JUDGEKIT_FIGURES``),
so validating a notebook never touches the committed figures.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

SCRATCH_VARIABLES = ("JUDGEKIT_RUNS", "JUDGEKIT_FIGURES")
_SCRATCH = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Point the notebooks' default output folders at a fresh temporary folder (nbval runs)."""
    if not (config.getoption("nbval", False) or config.getoption("nbval_lax", False)):
        return
    scratch = tempfile.mkdtemp(prefix="judgekit-nbval-")
    config.stash[_SCRATCH] = scratch
    for name in SCRATCH_VARIABLES:
        os.environ[name] = os.path.join(scratch, name.removeprefix("JUDGEKIT_").lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the temporary folder."""
    shutil.rmtree(config.stash.get(_SCRATCH, ""), ignore_errors=True)
