"""Compare the tables of a fresh run with a stored baseline, numbers within a tolerance.

Every ``*.csv`` under the baseline folder must exist at the same relative path in the run
folder, with every baseline column (a run may add columns: they are new results, not changed
ones) and the same rows; numeric cells may differ by ``--rtol``/``--atol``
(``numpy.isclose``; two missing values are equal), every other cell must be equal. Columns that
hold a measurement of the machine or the clock rather than a result (``--ignore``, default
:data:`MEASURED_COLUMNS`) are not compared. Files only in the run are ignored. Exit status 0
when every table matches, 1 otherwise (one line per difference), 2 on a usage mistake.

Usage::

    python scripts/compare_tables.py tests/fixtures/baseline_tables/demo runs/demo-<time>
    python scripts/compare_tables.py tests/fixtures/baseline_tables/paper runs/paper-<time>
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: Columns that measure the machine (elapsed time) or the clock, not the study: they differ on
#: every run (a batch size's wall time, a request's latency, when a label was recorded).
MEASURED_COLUMNS = ("wall_time_s", "latency_s", "labelled_at")


def read_csv(path: Path) -> pd.DataFrame:
    """Read one table, whichever of ``,`` or ``;`` separates its fields."""
    return pd.read_csv(path, sep=None, engine="python", keep_default_na=True)


def table_differences(
    expected: pd.DataFrame,
    actual: pd.DataFrame,
    rtol: float,
    atol: float,
    ignore: tuple[str, ...] = MEASURED_COLUMNS,
) -> list[str]:
    """Describe how ``actual`` differs from ``expected`` (an empty list when they match)."""
    absent = [c for c in expected.columns if c not in actual.columns]
    if absent:
        return [f"columns {absent} are missing"]
    if len(expected) != len(actual):
        return [f"{len(actual)} rows instead of {len(expected)}"]
    problems = []
    for column in (c for c in expected.columns if c not in ignore):
        want, got = expected[column], actual[column]
        if pd.api.types.is_numeric_dtype(want) and pd.api.types.is_numeric_dtype(got):
            same = np.isclose(
                want.to_numpy(float), got.to_numpy(float), rtol=rtol, atol=atol, equal_nan=True
            )
        else:
            same = (want.isna() & got.isna()) | (want.astype(str) == got.astype(str))
            same = same.to_numpy()
        if not same.all():
            row = int(np.flatnonzero(~same)[0])
            problems.append(
                f"column {column!r}: {int((~same).sum())} cell(s) differ, first in row {row}: "
                f"{got.tolist()[row]!r} instead of {want.tolist()[row]!r}"
            )
    return problems


def compare_folders(
    baseline: Path, run: Path, rtol: float, atol: float, ignore: tuple[str, ...] = MEASURED_COLUMNS
) -> tuple[int, list[str]]:
    """Compare every baseline table with its namesake in ``run``; return (count, problems)."""
    tables = sorted(baseline.rglob("*.csv"))
    problems = []
    for expected_path in tables:
        relative = expected_path.relative_to(baseline)
        actual_path = run / relative
        if not actual_path.is_file():
            problems.append(f"{relative}: missing from {run}")
            continue
        expected, actual = read_csv(expected_path), read_csv(actual_path)
        found = table_differences(expected, actual, rtol, atol, ignore)
        problems += [f"{relative}: {problem}" for problem in found]
    return len(tables), problems


def main(argv: list[str] | None = None) -> int:
    """Run the comparison from the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, help="folder of baseline tables")
    parser.add_argument("run", type=Path, help="run folder holding the fresh tables")
    parser.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance")
    parser.add_argument("--atol", type=float, default=1e-9, help="absolute tolerance")
    parser.add_argument(
        "--ignore",
        nargs="*",
        default=list(MEASURED_COLUMNS),
        help="columns not compared (measurements of the machine or the clock)",
    )
    args = parser.parse_args(argv)
    for folder in (args.baseline, args.run):
        if not folder.is_dir():
            print(f"compare_tables: {folder} is not a folder", file=sys.stderr)
            return 2
    count, problems = compare_folders(
        args.baseline, args.run, args.rtol, args.atol, tuple(args.ignore)
    )
    if count == 0:
        print(f"compare_tables: no *.csv under {args.baseline}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    differing = len({problem.split(":")[0] for problem in problems})
    print(f"{count - differing} of {count} tables match {args.baseline}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
