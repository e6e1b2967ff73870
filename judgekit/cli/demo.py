"""The demo: judge the illustrative set with the local model, analyse it, reproduce the study.

``run_demo()`` is what ``judgekit demo`` (and ``make demo``) runs on a fresh machine with no
key. It always judges offline with the bundled local model, whatever keys the environment
holds, so it never spends money or sends data anywhere. Steps (the parameter set
``params/demo/``): judge ``data/demo/riddles_demo.csv`` (accuracy and reasoning, base prompt
and one paraphrase, plus two repeat runs), run the analysis notebooks 02-05 and 07 (batch
effects) on those judgments, reproduce the reliability analysis of the original riddles study
(notebook 06), and take human labels headless from the demo set's human column (notebook 08).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from judgekit import config
from judgekit.judging.clients import REMOTE_ENV_VARS
from judgekit.local import find_local_model, require_local_extra
from judgekit.reporting.notebooks import new_run_dir, run_parameter_set

DEMO_PARAMS_DIR: Path = config.PARAMS_DIR / "demo"


@contextmanager
def offline_environment() -> Iterator[None]:
    """Hide the remote-endpoint variables from the notebooks' kernels for the block's duration."""
    hidden = {name: os.environ.pop(name) for name in REMOTE_ENV_VARS if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(hidden)


def _log(message: str) -> None:
    print(f"[judgekit demo] {message}", file=sys.stderr, flush=True)


def run_demo(out_dir: Path | None = None, *, params_dir: Path = DEMO_PARAMS_DIR) -> Path:
    """Run the demo pipeline and print where its figures and tables are.

    Args:
        out_dir: Run folder; default ``config.RUNS_DIR/demo-<UTC timestamp>``.
        params_dir: Parameter set to run (default ``params/demo``).

    Returns:
        The run folder: executed notebooks, ``judging/`` and ``repeats/`` (judgments, ``ID,score``
        files, response store), ``tables/`` and ``figures/``.

    Raises:
        judgekit.local.LocalJudgeUnavailable: If the ``local`` extra or the model is missing
            (run ``make install-local``).
        RuntimeError: If a notebook fails (the failed copy is kept next to the others).
    """
    started = time.perf_counter()
    require_local_extra()
    model = find_local_model()
    run_dir = new_run_dir(out_dir, "demo")
    _log(f"local judge model: {model.name}; run folder: {run_dir}")
    with offline_environment():
        notebooks = run_parameter_set(Path(params_dir), run_dir)
    elapsed = time.perf_counter() - started
    figures = sorted((run_dir / "figures").glob("*.png"))
    tables = sorted((run_dir / "tables").rglob("*.csv"))
    lines = [
        f"Demo finished in {elapsed / 60:.1f} min ({elapsed:.0f} s).",
        f"  executed notebooks: {len(notebooks)} in {run_dir}",
        f"  figures (PDF + PNG): {len(figures)} in {run_dir / 'figures'}",
        f"  tables (CSV): {len(tables)} under {run_dir / 'tables'}",
        f"  judgments: {run_dir / 'judging' / 'judgments.parquet'}",
        f"  seed-style ID,score files: {run_dir / 'judging' / 'scores'}",
        "The local judge is a plumbing check, not a research-grade judge: its agreement numbers",
        "say nothing about real judges. Notebook 06 reproduces the published riddles study.",
    ]
    print("\n".join(lines), flush=True)
    return run_dir
