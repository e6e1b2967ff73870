"""Execute the parameterised notebooks with papermill, with provenance and without secrets.

A *parameter set* is a folder of YAML files, one per notebook run, executed in file-name order.
A file is named after its notebook (``02_human_agreement.yaml``), optionally with a run label
after a double dash (``01_run_judging--paraphrase.yaml``). String values may name these
locations, filled in before the run: ``{run_dir}``, ``{root}``, ``{data_dir}``,
``{datasets_dir}``, ``{riddles_dir}``, ``{figures_dir}``. Relative paths are read by the
notebooks against the run folder, which is their working directory.

Every executed notebook gets a provenance record (package versions, git commit, parameters,
judge settings) in its metadata and in a first markdown cell. Environment variables whose
names contain KEY, TOKEN, SECRET or PASSWORD are never recorded, and their values are
redacted from the executed notebooks should any output have echoed one.

Before papermill writes a notebook, its parameters are checked by name (an identifier the
notebook's parameters cell declares) and type
(:func:`~judgekit.study.parameters.check_declared`), and a run name is never a path
(:data:`RUN_NAME`), so parameters from a file or a bundle can neither inject code nor pick a
notebook of their own.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat
import papermill
import yaml
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from traitlets import default

from judgekit import __version__, config
from judgekit.data.atomic import atomic_copy, atomic_write_text
from judgekit.study.errors import RunFailed
from judgekit.study.parameters import check_declared
from judgekit.types import UsageError

KERNEL_NAME = "python3"
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
WITHHELD = "<withheld>"
#: Distributions whose versions go into every provenance record.
RECORDED_PACKAGES = (
    "judgekit",
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "statsmodels",
    "krippendorff",
    "matplotlib",
    "openai",
    "papermill",
    "llama_cpp_python",
)
#: Environment variables worth recording (by prefix); secret-named ones are withheld.
RECORDED_ENV_PREFIXES = ("JUDGEKIT_", "OPENAI_")


@dataclass(frozen=True)
class NotebookRun:
    """One notebook execution of a parameter set.

    Attributes:
        name: Run name (the YAML file stem), also the executed notebook's file stem.
        notebook: Source notebook path.
        parameters: Parameters after placeholders were filled in.
    """

    name: str
    notebook: Path
    parameters: dict[str, Any]


def secret_values() -> list[str]:
    """Return the values of secret-named environment variables (longest first, 6+ chars)."""
    values = {v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= 6}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Replace every secret environment value inside ``text`` by ``<withheld>``."""
    for value in secret_values() if secrets is None else secrets:
        text = text.replace(value, WITHHELD)
    return text


def scrub(values: Mapping[str, Any]) -> dict[str, Any]:
    """Copy ``values`` with secret-named keys withheld and secret values redacted."""
    secrets = secret_values()
    clean: dict[str, Any] = {}
    for key, value in values.items():
        if SECRET_NAME.search(str(key)):
            clean[str(key)] = WITHHELD
        elif isinstance(value, str):
            clean[str(key)] = redact(value, secrets)
        else:
            clean[str(key)] = value
    return clean


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=config.ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def provenance(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Describe the software and settings behind one notebook run, without any secret.

    Args:
        parameters: The notebook's parameters (judge model, base URL, provider, ...).

    Returns:
        A JSON-serialisable record.
    """
    packages = {}
    for name in RECORDED_PACKAGES:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = __version__ if name == "judgekit" else "not installed"
    environment = {
        key: WITHHELD if SECRET_NAME.search(key) else value
        for key, value in sorted(os.environ.items())
        if key.startswith(RECORDED_ENV_PREFIXES)
    }
    return {
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "git_commit": _git("rev-parse", "HEAD") or "unknown",
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "packages": packages,
        "parameters": scrub(parameters),
        "environment": environment,
    }


def ensure_kernel(name: str = KERNEL_NAME) -> None:
    """Install the ``python3`` ipykernel spec for this interpreter if Jupyter cannot find it."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--user", "--name", name],
            check=True,
            capture_output=True,
        )


class LocalSocketKernelManager(AsyncKernelManager):
    """Kernel manager the notebooks run under: local sockets where the OS has them.

    Over TCP, ipykernel warns at every start that its traffic is unencrypted (it is, on
    loopback). Rather than silencing the kernel's log, on POSIX the kernel talks over Unix
    domain sockets (``ipc`` transport) in the private Jupyter runtime folder, so no port is
    open and the warning's cause is gone; every other kernel message stays visible. Windows
    has no ``ipc`` transport and keeps TCP.
    """

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc" if os.name == "posix" else "tcp"

    def _ip_default(self) -> str:
        """Socket path prefix in the runtime folder (jupyter_client's is relative: the cwd)."""
        if self.transport != "ipc":
            return str(super()._ip_default())
        runtime = Path(jupyter_runtime_dir())
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(runtime / f"kernel-{uuid.uuid4().hex[:12]}-ipc")


def _kernel_environment() -> None:
    """Let the kernel import judgekit from this checkout even when it is not pip-installed."""
    if not config.IN_CHECKOUT:  # installed: the kernel's Python has it already
        return
    root = str(config.ROOT)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


#: A run name: a packaged notebook's stem and an optional ``--label`` (never a path).
RUN_NAME = re.compile(r"[0-9]{2}_[A-Za-z0-9_]+(--[A-Za-z0-9_.-]+)?", re.ASCII)


def notebook_for(run_name: str) -> Path:
    """Return the source notebook of a run name (``01_run_judging--x`` -> ``01_run_judging``).

    Raises:
        UsageError: If the name is not ``NN_name`` or ``NN_name--label`` (no path at all).
        FileNotFoundError: If the checkout has no such notebook.
    """
    if not isinstance(run_name, str) or not RUN_NAME.fullmatch(run_name):
        raise UsageError(f"run {run_name!r}: not a notebook run name (NN_name or NN_name--label)")
    path = config.NOTEBOOKS_DIR / f"{run_name.split('--')[0]}.ipynb"
    if not path.is_file():
        raise FileNotFoundError(f"parameter file {run_name}.yaml: no notebook {path}")
    return path


def load_parameter_set(params_dir: Path, run_dir: Path, figures_dir: Path) -> list[NotebookRun]:
    """Read every ``*.yaml`` of ``params_dir`` into runs, checking names against the notebook.

    Raises:
        FileNotFoundError: If the folder has no YAML file or names an unknown notebook.
        ValueError: If a file is not a mapping or sets a parameter the notebook lacks.
    """
    files = sorted(Path(params_dir).glob("*.yaml"))
    if not files:
        raise FileNotFoundError(f"no parameter files (*.yaml) in {params_dir}")
    places = {
        "run_dir": str(run_dir),
        "root": str(config.ROOT),
        "data_dir": str(config.DATA_DIR),
        "datasets_dir": str(config.DATASETS_DIR),
        "riddles_dir": str(config.RIDDLES_DIR),
        "figures_dir": str(figures_dir),
    }
    runs = []
    for file in files:
        raw = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{file}: expected a mapping of parameter names to values")
        notebook = notebook_for(file.stem)
        known = papermill.inspect_notebook(str(notebook))
        check_declared(raw, known, f"{file} ({notebook.name})")
        parameters = {
            key: _fill(value, places) if isinstance(value, str) else value
            for key, value in raw.items()
        }
        if "figures_dir" in known:
            parameters.setdefault("figures_dir", str(figures_dir))
        runs.append(NotebookRun(file.stem, notebook, parameters))
    return runs


def _fill(text: str, places: Mapping[str, str]) -> str:
    """Replace the ``{name}`` placeholders of ``places`` in ``text``; other braces stay."""
    for name, value in places.items():
        text = text.replace("{" + name + "}", value)
    return text


def execute(run: NotebookRun, run_dir: Path) -> Path:
    """Execute one notebook run into ``run_dir/<name>.ipynb`` and stamp its provenance.

    The notebook is written under a temporary name and renamed when it succeeds; a failed run
    is kept as ``<name>.failed.ipynb`` and the error names it. The parameters are checked by
    name and type against the notebook's parameters cell first (nothing is written otherwise).

    Raises:
        ParameterError: If a parameter is not one the notebook declares, or of another type.
        RunFailed: If the notebook failed.
    """
    declared = papermill.inspect_notebook(str(run.notebook))
    check_declared(run.parameters, declared, f"notebook {run.notebook.name} (run {run.name})")
    ensure_kernel()
    _kernel_environment()
    final = run_dir / f"{run.name}.ipynb"
    partial = run_dir / f".{run.name}.running.ipynb"
    failed = run_dir / f"{run.name}.failed.ipynb"
    for stale in (final, failed):  # an earlier run's outcome must not pass for this one's
        stale.unlink(missing_ok=True)
    record = provenance(run.parameters)
    try:
        papermill.execute_notebook(
            str(run.notebook),
            str(partial),
            parameters=run.parameters,
            kernel_name=KERNEL_NAME,
            kernel_manager_class=LocalSocketKernelManager,
            cwd=str(run_dir),
            progress_bar=False,
        )
    except papermill.PapermillExecutionError as error:
        _finish(partial, failed, record)
        raise RunFailed(
            f"notebook {run.notebook.name} (run {run.name}) failed in cell {error.exec_count}: "
            f"{error.ename}: {redact(str(error.evalue))} (see {failed})"
        ) from None
    _finish(partial, final, record)
    return final


def _finish(partial: Path, target: Path, record: dict[str, Any]) -> None:
    """Add the provenance record, redact secrets, and move the notebook into place."""
    notebook = nbformat.read(partial, as_version=4)
    record["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    notebook.metadata["judgekit"] = {"provenance": record}
    lines = [
        "**Provenance** (recorded by `judgekit.reporting.notebooks`; secrets are never recorded)",
        "",
    ]
    lines += [
        f"- git commit: `{record['git_commit']}`" + (" (dirty)" if record["git_dirty"] else "")
    ]
    lines += [f"- python {record['python']} on {record['platform']}"]
    lines += ["- packages: " + ", ".join(f"{k} {v}" for k, v in record["packages"].items())]
    lines += [f"- parameters: `{json.dumps(record['parameters'], default=str)}`"]
    cell = nbformat.v4.new_markdown_cell("\n".join(lines))
    cell.metadata["tags"] = ["provenance"]
    notebook.cells.insert(0, cell)
    atomic_write_text(target, redact(nbformat.writes(notebook)))
    partial.unlink(missing_ok=True)


def run_parameter_set(
    params_dir: Path, run_dir: Path, *, figures_dir: Path | None = None, log: bool = True
) -> list[Path]:
    """Execute every run of a parameter set in ``run_dir``; return the executed notebooks.

    Args:
        params_dir: Folder of YAML parameter files.
        run_dir: Run folder (created); the notebooks' working directory.
        figures_dir: Where the notebooks save figures; default ``run_dir/figures``.
        log: Print one progress line per notebook to stderr.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    figures = figures_dir or run_dir / "figures"
    runs = load_parameter_set(params_dir, run_dir, figures)
    executed = []
    for index, run in enumerate(runs, start=1):
        started = time.perf_counter()
        if log:
            print(f"[judgekit] notebook {index}/{len(runs)}: {run.name} ...", file=sys.stderr)
        executed.append(execute(run, run_dir))
        if log:
            took = time.perf_counter() - started
            print(f"[judgekit]   done in {took:.1f} s -> {executed[-1]}", file=sys.stderr)
    return executed


def new_run_dir(out_dir: Path | None, label: str) -> Path:
    """Return ``out_dir`` or a fresh ``config.RUNS_DIR/<label>-<UTC timestamp>`` folder."""
    if out_dir is not None:
        return Path(out_dir)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return config.RUNS_DIR / f"{label}-{stamp}"


def run_paper(
    params_dir: Path = config.PARAMS_DIR / "paper",
    out_dir: Path | None = None,
    *,
    figures_dir: Path | None = config.FIGURES_DIR,
) -> Path:
    """Regenerate the paper: run every notebook of ``params_dir`` and collect the figures.

    Args:
        params_dir: Parameter set (one YAML per notebook run).
        out_dir: Run folder; default ``config.RUNS_DIR/paper-<timestamp>``.
        figures_dir: Where the final figures are copied (default ``config.FIGURES_DIR``);
            None leaves them in the run folder only.

    Returns:
        The run folder holding the executed notebooks, tables and ``figures/``.
    """
    run_dir = new_run_dir(out_dir, "paper")
    run_parameter_set(Path(params_dir), run_dir)
    if figures_dir is not None:
        for figure in sorted((run_dir / "figures").glob("*.*")):
            atomic_copy(figure, Path(figures_dir) / figure.name)
    print(f"[judgekit] paper run complete: {run_dir}", file=sys.stderr)
    return run_dir


def skipped_parts(notebook: Path) -> list[str]:
    """The lines an executed notebook printed for each part it skipped (``skipped ...: why``)."""
    lines = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                text = str(output.get("text", ""))
                lines += [line for line in text.splitlines() if line.startswith("skipped ")]
    return lines
