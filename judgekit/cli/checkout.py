"""What the checkout or the wheel carries: the notebooks to copy; the bench needs a checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

from judgekit import config
from judgekit.types import UsageError


def require_checkout(path: Path, command: str) -> Path:
    """Return ``path`` if it exists, else say in one line that ``command`` needs a checkout.

    Only ``judgekit bench`` needs one: it runs ``benchmarks/`` and rewrites
    ``docs/benchmarks.md``, which ship with the repository, not the package.

    Raises:
        UsageError: When ``path`` is not on disk.
    """
    if not path.exists():
        raise UsageError(
            f"`judgekit {command}` needs the project checkout ({path} not found); run it from "
            "a clone of the judgekit repository"
        )
    return path


def copy_notebooks(folder: Path) -> list[Path]:
    """Copy the parameterised analysis notebooks into ``folder`` (created) for JupyterLab.

    Each notebook's first code cell holds its parameters (a study folder, a rubric, ...); set
    them and run. Nothing already in ``folder`` is overwritten.

    Returns:
        The copies, in notebook order.

    Raises:
        UsageError: If ``folder`` is a file or already holds a notebook of the same name.
    """
    sources = sorted(config.NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file; give a folder for the notebooks")
    taken = [folder / s.name for s in sources if (folder / s.name).exists()]
    if taken:
        raise UsageError(f"{taken[0]} exists; give an empty folder (nothing is overwritten)")
    folder.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy2(source, folder / source.name)) for source in sources]
