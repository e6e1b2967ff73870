"""Where things live. Notebooks, the CLI and tests take every path from here.

Run from a clone of the repository (a checkout), the notebooks, parameter sets and demo data are
the checkout's own and outputs (``runs/``, ``figures/``) go into it. Installed from a wheel, the
same files come from the copy shipped inside the package (``judgekit/_shipped``, made by
``setup.py`` at build time) and outputs go to the current folder.

``JUDGEKIT_SHARED`` overrides the location of the read-only shared datasets (default: the
``shared/`` folder beside the project checkout, or in the current folder). ``JUDGEKIT_RUNS``
overrides where run outputs go, ``JUDGEKIT_FIGURES`` where figures go by default.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

ROOT: Path = Path(__file__).resolve().parent.parent
#: True when judgekit is imported from a clone of its repository rather than an installed wheel.
IN_CHECKOUT: bool = (ROOT / "pyproject.toml").is_file() and (ROOT / "notebooks").is_dir()
#: The notebooks, parameter sets and demo data a wheel carries (see ``setup.py``).
SHIPPED_DIR: Path = Path(__file__).resolve().parent / "_shipped"


def shipped(name: str) -> Path:
    """The checkout's folder ``name`` (``notebooks``, ``params``, ``data``), else the wheel's."""
    return ROOT / name if IN_CHECKOUT else SHIPPED_DIR / name


#: Where outputs go by default: the checkout, or the current folder of an installed package.
WORK_DIR: Path = ROOT if IN_CHECKOUT else Path.cwd()
DATA_DIR: Path = shipped("data")
FIGURES_DIR: Path = Path(os.environ.get("JUDGEKIT_FIGURES", WORK_DIR / "figures"))
NOTEBOOKS_DIR: Path = shipped("notebooks")
PARAMS_DIR: Path = shipped("params")
RUNS_DIR: Path = Path(os.environ.get("JUDGEKIT_RUNS", WORK_DIR / "runs"))
_BESIDE: Path = ROOT.parent if IN_CHECKOUT else WORK_DIR  # the shared datasets' folder is here
SHARED_DIR: Path = Path(os.environ.get("JUDGEKIT_SHARED", _BESIDE / "shared"))
DATASETS_DIR: Path = SHARED_DIR / "datasets"
RIDDLES_DIR: Path = DATASETS_DIR / "hungarian-riddles"
EVOUNA_DIR: Path = DATASETS_DIR / "evouna"


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """Handle SIGTERM exactly as Ctrl-C: re-deliver it as SIGINT to whoever handles that now.

    Under ``asyncio.run`` that is the runner, which cancels its main task (every ``finally``
    runs, the store is closed) and then raises ``KeyboardInterrupt``; elsewhere it is Python's
    own handler. Raising ``KeyboardInterrupt`` here instead would land inside whatever code
    runs at that moment (asyncio's own, for one), which can leave the loop unable to finish.
    """
    signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM stop the work as Ctrl-C does (main thread only).

    A process started with SIGINT ignored (``nohup make test &``, a background job, some CI
    runners) inherits that, so a command that waits for Ctrl-C would never stop without this.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),  # asyncio-aware
        signal.SIGTERM: signal.signal(signal.SIGTERM, _as_ctrl_c),
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
