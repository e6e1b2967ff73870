"""Where things live. Notebooks, the CLI and tests take every path from here.

``JUDGEKIT_SHARED`` overrides the location of the read-only shared datasets (default: the
``shared/`` folder beside the project checkout). ``JUDGEKIT_RUNS`` overrides where run outputs go,
``JUDGEKIT_FIGURES`` where figures go by default.
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
DATA_DIR: Path = ROOT / "data"
FIGURES_DIR: Path = Path(os.environ.get("JUDGEKIT_FIGURES", ROOT / "figures"))
NOTEBOOKS_DIR: Path = ROOT / "notebooks"
PARAMS_DIR: Path = ROOT / "params"
RUNS_DIR: Path = Path(os.environ.get("JUDGEKIT_RUNS", ROOT / "runs"))
SHARED_DIR: Path = Path(os.environ.get("JUDGEKIT_SHARED", ROOT.parent / "shared"))
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
