"""One publication style for every judgekit figure.

Colours come from the Okabe–Ito palette (distinguishable under the common colour-vision
deficiencies); ordered score levels use the perceptually uniform, colour-blind-safe ``cividis``
map. Sizes follow the usual journal layouts: 3.5 in for one column, 7.2 in for two columns.
A figure is saved at exactly its size (no tight bounding box), so the text sizes below are the
printed sizes: nothing is smaller than :data:`MIN_FONT_PT`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import matplotlib as mpl
import numpy as np
import pandas as pd
from cycler import cycler

#: Okabe & Ito (2008) colour-blind-safe qualitative palette, black last.
OKABE_ITO: tuple[str, ...] = (
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#009E73",  # bluish green
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#F0E442",  # yellow
    "#000000",  # black
)

#: Figure widths in inches.
ONE_COLUMN_IN = 3.5
TWO_COLUMN_IN = 7.2

Width = Literal["one", "two"]

#: Smallest text at print size, in points (journals ask for 6-8 pt; we keep to 8).
MIN_FONT_PT = 8.0

#: Landis & Koch (1977) bands of kappa, as guide lines: the value where each band starts.
LANDIS_KOCH: dict[float, str] = {0.6: "substantial", 0.8: "almost perfect"}

#: Line styles of guide lines, in order of their value (each is named in a legend).
GUIDE_STYLES: tuple[str, ...] = (":", "--", "-.")

STYLE: dict[Any, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "legend.frameon": False,
    "figure.titlesize": 9,
    "figure.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
    "axes.titlelocation": "left",
    "grid.linewidth": 0.4,
    "grid.color": "#d9d9d9",
    "lines.linewidth": 1.0,
    "lines.markersize": 4,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "figure.dpi": 110,
    "savefig.dpi": 300,
    "savefig.bbox": "standard",  # the figure's own size: constrained layout fits the text
    "pdf.fonttype": 42,  # embed TrueType so text stays editable and searchable
    "svg.hashsalt": "judgekit",  # stable SVG element ids: same figure, same file
    "ps.fonttype": 42,
    "image.cmap": "cividis",
}


#: Decimals of a displayed table's floats (the CSVs keep every digit).
TABLE_DECIMALS = 3


def readable_float(value: float) -> str:
    """A float as a table shows it: 3 decimals; a tiny one (a p-value) in scientific notation.

    >>> [readable_float(v) for v in (0.8734123456789, 1.2e-06, 0.0, float("nan"))]
    ['0.873', '1.20e-06', '0.000', 'NaN']
    """
    if not np.isfinite(value):
        return "NaN" if np.isnan(value) else str(value)
    if value != 0 and abs(value) < 10**-TABLE_DECIMALS:
        return f"{value:.2e}"
    return f"{value:.{TABLE_DECIMALS}f}"


def apply_style() -> None:
    """Make the judgekit style the process-wide default (notebooks call this once).

    Figures get :data:`STYLE`; displayed tables (the notebooks' output and the HTML report made
    from it) show floats as :func:`readable_float` writes them.
    """
    mpl.rcParams.update(STYLE)
    pd.set_option("display.float_format", readable_float)


@contextmanager
def publication_style() -> Iterator[None]:
    """Apply the judgekit style inside a ``with`` block only.

    Only the style's own settings are saved and restored. ``matplotlib.rc_context`` would
    restore every setting, including the interactive mode a notebook backend switches on when
    pyplot is first imported inside the block, and later figures would then not be displayed.
    """
    saved = {key: mpl.rcParams[key] for key in STYLE}
    mpl.rcParams.update(STYLE)
    try:
        yield
    finally:
        mpl.rcParams.update(saved)


def figure_size(width: Width = "one", aspect: float = 0.75) -> tuple[float, float]:
    """Return ``(width, height)`` in inches for a one- or two-column figure.

    Args:
        width: ``"one"`` (3.5 in) or ``"two"`` (7.2 in).
        aspect: Height as a fraction of the width.
    """
    inches = ONE_COLUMN_IN if width == "one" else TWO_COLUMN_IN
    return inches, round(inches * aspect, 3)


def categorical_colours(levels: Sequence[object]) -> dict[object, str]:
    """Map each level to an Okabe–Ito colour, in order (cycling after eight levels)."""
    return {level: OKABE_ITO[i % len(OKABE_ITO)] for i, level in enumerate(levels)}


def ordinal_colours(n_levels: int) -> list[tuple[float, float, float, float]]:
    """Return ``n_levels`` colours from cividis, low score dark blue to high score yellow."""
    cmap = mpl.colormaps["cividis"]
    positions = np.linspace(0.05, 0.95, n_levels) if n_levels > 1 else np.array([0.5])
    return [cmap(float(p)) for p in positions]


def panel_grid(n_panels: int, max_columns: int = 4) -> tuple[int, int]:
    """Return ``(rows, columns)`` of a small-multiples grid that holds ``n_panels``."""
    columns = min(max(n_panels, 1), max_columns)
    rows = -(-max(n_panels, 1) // columns)
    return rows, columns
