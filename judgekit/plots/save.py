"""Write a figure as PDF and 300-dpi PNG, atomically, with scrubbed metadata."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from matplotlib.figure import Figure

from judgekit import config
from judgekit.data.atomic import atomic_write

#: The only authorship either file carries; no user names, paths or library banners.
PDF_METADATA: dict[str, str | None] = {
    "Creator": "judgekit",
    "Producer": None,
    "CreationDate": None,  # no timestamp: identical figures give identical files
}
PNG_METADATA: dict[str, str] = {"Software": "judgekit"}


def save_figure(fig: Figure, name: str, *, folder: Path | None = None) -> tuple[Path, Path]:
    """Save ``fig`` as ``<folder>/<name>.pdf`` and ``<folder>/<name>.png`` (300 dpi).

    Each file is written to a temporary sibling first and moved into place, so a reader never
    sees a half-written figure and an interrupted save leaves the previous version intact.

    Args:
        fig: The figure to save.
        name: File stem; letters, digits, ``-``, ``_`` and ``.`` only.
        folder: Output folder (created if missing); default ``config.FIGURES_DIR``.

    Returns:
        ``(pdf_path, png_path)``.

    Raises:
        ValueError: If ``name`` is empty or would leave ``folder``.
    """
    if not name or any(not (ch.isalnum() or ch in "-_.") for ch in name) or name.startswith("."):
        raise ValueError(f"figure name {name!r} must be a plain file stem (letters, digits, -_.)")
    target = Path(config.FIGURES_DIR if folder is None else folder)
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, metadata in (("pdf", PDF_METADATA), ("png", PNG_METADATA)):
        final = target / f"{name}.{fmt}"
        atomic_write(final, partial(fig.savefig, format=fmt, dpi=300, metadata=metadata))
        paths.append(final)
    return paths[0], paths[1]


def figure_name(*parts: object) -> str:
    """Join ``parts`` into a safe figure file stem (other characters become ``_``)."""
    joined = "_".join(str(part) for part in parts if str(part))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", joined).strip("._") or "figure"


def save_pages(
    figures: Sequence[Figure], name: str, *, folder: Path | None = None
) -> list[tuple[Path, Path]]:
    """Save the pages of one figure: ``name`` when there is one, ``name_p1``, ``name_p2``, ...

    Returns:
        One ``(pdf_path, png_path)`` per page, in order.
    """
    if len(figures) == 1:
        return [save_figure(figures[0], name, folder=folder)]
    return [
        save_figure(fig, f"{name}_p{number}", folder=folder)
        for number, fig in enumerate(figures, start=1)
    ]
