"""Where things live. Notebooks, the CLI and tests take every path from here.

``JUDGEKIT_SHARED`` overrides the location of the read-only shared datasets (default: the
``shared/`` folder beside the project checkout). ``JUDGEKIT_RUNS`` overrides where run outputs go,
``JUDGEKIT_FIGURES`` where figures go by default.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT: Path = Path(__file__).resolve().parent.parent
DATA_DIR: Path = ROOT / "data"
FIGURES_DIR: Path = Path(os.environ.get("JUDGEKIT_FIGURES", ROOT / "figures"))
NOTEBOOKS_DIR: Path = ROOT / "notebooks"
PARAMS_DIR: Path = ROOT / "params"
RUNS_DIR: Path = Path(os.environ.get("JUDGEKIT_RUNS", ROOT / "runs"))
SHARED_DIR: Path = Path(os.environ.get("JUDGEKIT_SHARED", ROOT.parent / "shared"))
DATASETS_DIR: Path = SHARED_DIR / "datasets"
RIDDLES_DIR: Path = DATASETS_DIR / "hungarian-riddles"
EVOUNA_DIR: Path = DATASETS_DIR / "evouna"
