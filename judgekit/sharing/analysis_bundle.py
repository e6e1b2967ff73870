"""A bundle of an analysis that needs no judge: a parameter set's notebooks, inputs and tables.

The original riddles study is such an analysis: notebook 06 (and the panel notebook) read the
study's published score table and compute every table of the paper from it. ``judgekit paper
--params DIR --bundle OUT`` writes::

    inputs/              every input file a parameter names under the checkout's data/
    report/steps.json    each notebook run and its parameters ({bundle} = the bundle's folder)
    report/tables/       every table the runs wrote
    environment.json     Python's, judgekit's and the numeric libraries' versions
    manifest.json        the sha256 of every file (see judgekit.sharing.export)

``judgekit verify OUT`` executes the steps again on the bundle's own inputs and compares every
table (:func:`rerun_analysis`). Parameters naming the shared datasets keep their
``{datasets_dir}`` placeholder and are read from this machine's copy.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import papermill

from judgekit import __version__, config
from judgekit.data.atomic import atomic_write_text
from judgekit.reporting.html import REPORT_STEPS
from judgekit.reporting.notebooks import NotebookRun, execute, load_parameter_set, notebook_for
from judgekit.sharing.export import (
    BUNDLE_VERSION,
    ENVIRONMENT,
    library_versions,
    sha256_file,
    study_files,
)
from judgekit.sharing.safety import BUNDLE_FORMAT, MANIFEST
from judgekit.study.parameters import check_declared
from judgekit.types import UsageError

BUNDLE_PLACE = "{bundle}"
INPUTS = "inputs"


def _portable(value: Any, run_dir: Path, target: Path) -> Any:
    """A parameter value with checkout paths made bundle-relative (data files copied in)."""
    if not isinstance(value, str) or not value:
        return value
    path = Path(value)
    if path.is_absolute() and path.is_file() and config.DATA_DIR in path.parents:
        relative = Path(INPUTS) / path.relative_to(config.DATA_DIR)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / relative)
        return f"{BUNDLE_PLACE}/{relative.as_posix()}"
    for root, place in (
        (run_dir, f"{BUNDLE_PLACE}/report"),
        (config.DATASETS_DIR, "{datasets_dir}"),
    ):
        if path.is_absolute() and (path == root or root in path.parents):
            rest = path.relative_to(root).as_posix()
            return place if rest == "." else f"{place}/{rest}"
    return value


def export_analysis(params_dir: Path, run_dir: Path, target: Path) -> Path:
    """Write the bundle of a parameter set executed in ``run_dir`` into the folder ``target``.

    Raises:
        UsageError: If ``target`` exists and holds files of anything but an older bundle.
    """
    if target.exists() and any(target.iterdir()) and not (target / MANIFEST).is_file():
        raise UsageError(f"--bundle {target}: the folder holds other files; name a new one")
    runs = load_parameter_set(params_dir, run_dir, run_dir / "figures")
    if target.exists():
        shutil.rmtree(target)
    (target / "report").mkdir(parents=True)
    steps = [
        {
            "notebook": run.name,
            "parameters": {k: _portable(v, run_dir, target) for k, v in run.parameters.items()},
            "skipped": "",
        }
        for run in runs
    ]
    atomic_write_text(target / "report" / REPORT_STEPS, json.dumps(steps, indent=1) + "\n")
    if (run_dir / "tables").is_dir():
        shutil.copytree(run_dir / "tables", target / "report" / "tables")
    atomic_write_text(target / ENVIRONMENT, json.dumps(library_versions(), indent=1) + "\n")
    manifest = {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "judgekit": __version__,
        "study": target.name,
        "files": {
            p.as_posix(): {"sha256": sha256_file(target / p), "bytes": (target / p).stat().st_size}
            for p in study_files(target)
        },
    }
    atomic_write_text(target / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return target


#: Parameters a notebook writes into: they must stay inside the bundle's copy.
WRITTEN = ("output_dir", "figures_dir")


def _filled(name: str, value: Any, root: Path, where: str) -> Any:
    """A step's parameter with its placeholders filled; a path must stay in the bundle.

    Raises:
        UsageError: If a path leaves the bundle (or, for a read, the shared datasets).
    """
    if not isinstance(value, str):
        return value
    filled = value.replace(BUNDLE_PLACE, str(root)).replace(
        "{datasets_dir}", str(config.DATASETS_DIR)
    )
    if name not in WRITTEN and "/" not in filled and "\\" not in filled:
        return filled  # a word (a method's name, a rubric's), not a path
    resolved = (root / "report" / filled).resolve()
    allowed = [root.resolve()] + ([] if name in WRITTEN else [config.DATASETS_DIR.resolve()])
    if not any(resolved == a or a in resolved.parents for a in allowed):
        raise UsageError(
            f"{where}: parameter `{name}` points outside the bundle ({value!r}); refused"
        )
    return filled


def rerun_analysis(root: Path, steps: Sequence[dict[str, Any]], err: TextIO) -> None:
    """Execute a bundle's notebook runs (its ``steps.json``) again into ``root/report``.

    Every step is data: its notebook is the checkout's (named, never a path), its parameters
    are checked by name and type against that notebook, and its paths stay in the bundle.

    Raises:
        UsageError: If a step names no packaged notebook, sets a parameter the notebook does
            not declare, or points outside the bundle (one line, before anything runs).
    """
    report = root / "report"
    report.mkdir(parents=True, exist_ok=True)
    runs = []
    for index, step in enumerate(steps, start=1):
        where = f"{REPORT_STEPS} step {index}"
        if not isinstance(step, dict) or not isinstance(step.get("parameters"), dict):
            raise UsageError(f"{where}: not a notebook run (notebook and parameters)")
        if step.get("skipped"):
            continue
        name = str(step.get("notebook", ""))
        notebook = notebook_for(name)  # checked: a run name, never a path
        declared = papermill.inspect_notebook(str(notebook))
        check_declared(step["parameters"], declared, f"{where} ({notebook.name})")
        parameters = {k: _filled(k, v, root, where) for k, v in step["parameters"].items()}
        runs.append(NotebookRun(name, notebook, parameters))
    for run in runs:
        print(f"running {run.name} ...", file=err, flush=True)
        execute(run, report)
