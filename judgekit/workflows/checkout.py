"""Workflows that need the project checkout (notebooks, parameter sets, benchmarks) say so."""

from __future__ import annotations

from pathlib import Path

from judgekit.types import UsageError


def require_checkout(path: Path, command: str) -> Path:
    """Return ``path`` if it exists, else say in one line that ``command`` needs a checkout.

    The notebooks, ``params/`` and ``benchmarks/`` ship with the repository, not the installed
    package, so these commands run from a clone.

    Raises:
        UsageError: When ``path`` is not on disk.
    """
    if not path.exists():
        raise UsageError(
            f"`judgekit {command}` needs the project checkout ({path} not found); run it from "
            "a clone of the judgekit repository"
        )
    return path
