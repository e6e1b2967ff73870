"""Compare two runs' tables: the same rows and columns, numbers within a tolerance.

The one comparison behind ``judgekit compare BASELINE RUN`` and ``judgekit verify``. Every
``*.csv`` under the baseline folder must exist at the same relative path in the run folder,
with every baseline column (a run may add columns: they are new results, not changed ones) and
the same number of rows. Numeric cells may differ by ``rtol``/``atol`` (:func:`numpy.isclose`;
two missing values are equal); every other cell must be equal as text. Columns that measure
the machine or the clock rather than the study (:data:`MEASURED_COLUMNS`) are not compared:
they differ on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: Columns that measure the machine (elapsed time) or the clock, not the study: a batch size's
#: wall time, a request's latency, when a request was sent or answered, when a label was made.
MEASURED_COLUMNS: tuple[str, ...] = (
    "wall_time_s",
    "latency_s",
    "labelled_at",
    "requested_at",
    "answered_at",
)


@dataclass(frozen=True)
class Tolerance:
    """How close two numbers must be to count as equal, and which columns are not compared."""

    rtol: float = 1e-6
    atol: float = 1e-9
    ignore: tuple[str, ...] = MEASURED_COLUMNS


def read_csv(path: Path) -> pd.DataFrame:
    """Read one table, whichever of ``,`` or ``;`` separates its fields."""
    return pd.read_csv(path, sep=None, engine="python", keep_default_na=True)


def table_differences(
    expected: pd.DataFrame, actual: pd.DataFrame, tolerance: Tolerance = Tolerance()
) -> list[str]:
    """Describe how ``actual`` differs from ``expected``, one line per column (empty: equal).

    Each line names the column, how many cells differ and the first differing row
    (0-based, in the baseline's order) with both values.
    """
    absent = [c for c in expected.columns if c not in actual.columns]
    if absent:
        return [f"columns {absent} are missing"]
    if len(expected) != len(actual):
        return [f"{len(actual)} rows instead of {len(expected)}"]
    problems = []
    for column in (c for c in expected.columns if c not in tolerance.ignore):
        want, got = expected[column], actual[column]
        if pd.api.types.is_numeric_dtype(want) and pd.api.types.is_numeric_dtype(got):
            same = np.isclose(
                want.to_numpy(float),
                got.to_numpy(float),
                rtol=tolerance.rtol,
                atol=tolerance.atol,
                equal_nan=True,
            )
        else:
            same = ((want.isna() & got.isna()) | (want.astype(str) == got.astype(str))).to_numpy()
        if not same.all():
            row = int(np.flatnonzero(~same)[0])
            problems.append(
                f"column {column!r}: {int((~same).sum())} cell(s) differ, first in row {row}: "
                f"{got.tolist()[row]!r} instead of {want.tolist()[row]!r}"
            )
    return problems


def compare_folders(
    baseline: Path, run: Path, tolerance: Tolerance = Tolerance()
) -> tuple[int, list[str]]:
    """Compare every ``*.csv`` under ``baseline`` with its namesake in ``run``.

    Returns:
        How many baseline tables there are, and one line per difference, each starting with
        the table's path relative to ``baseline``.
    """
    tables = sorted(baseline.rglob("*.csv"))
    problems = []
    for expected_path in tables:
        relative = expected_path.relative_to(baseline)
        actual_path = run / relative
        if not actual_path.is_file():
            problems.append(f"{relative}: missing from {run}")
            continue
        found = table_differences(read_csv(expected_path), read_csv(actual_path), tolerance)
        problems += [f"{relative}: {problem}" for problem in found]
    return len(tables), problems


def differing_tables(problems: Sequence[str]) -> list[str]:
    """The tables named by :func:`compare_folders`'s lines, once each, in order."""
    return list(dict.fromkeys(problem.split(":")[0] for problem in problems))
