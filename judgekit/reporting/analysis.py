"""What one report step computes from a loaded study: its tables, figures and the lines it says.

A report step is a function ``step(study, **parameters) -> Analysis`` (registered in
:data:`judgekit.reporting.analyses.ANALYSES` under its notebook's name). Its notebook, which
``judgekit report`` executes, calls it, writes what it returns and shows it; ``judgekit verify``
calls it in-process (:mod:`judgekit.reporting.compute`), as a script or a test does, so a table
is computed one way wherever it is read. Steps 02-05 and 07-10 are functions; 01 judges and
06 (the riddles study reproduced from its shipped data, never a study's step) computes in its
notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Analysis:
    """The outcome of one report step.

    Attributes:
        step: The step's name (its notebook's, e.g. ``03_run_consistency``).
        tables: Each table by file name without ``.csv`` (e.g. ``consistency_summary``), in the
            order written; the study's ``report/tables/<folder>/`` holds them.
        figures: Each figure (a matplotlib figure) by file stem, in the order shown.
        lines: What the step says beside its tables, in order: the design of each table, figure
            notes, and for each part that does not apply, ``skipped PART: why``.
    """

    step: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        """Add a line (shown by the notebook, recorded by the report)."""
        self.lines.append(line)

    def skip(self, part: str, why: str) -> None:
        """Record that ``part`` does not apply to this study, and why (one line)."""
        self.lines.append(f"skipped {part}: {why}")

    @property
    def skipped(self) -> list[str]:
        """The ``skipped PART: why`` lines."""
        return [line for line in self.lines if line.startswith("skipped ")]

    def write(self, tables_dir: Path, figures_dir: Path | None = None) -> list[Path]:
        """Write every table as CSV (and every figure, if ``figures_dir``); return the paths."""
        from judgekit import plots
        from judgekit.data import write_table

        tables_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables.items():
            path = tables_dir / f"{name}.csv"
            write_table(table, path)
            written.append(path)
        if figures_dir is not None:
            for name, figure in self.figures.items():
                written += list(plots.save_figure(figure, name, folder=figures_dir))
        return written
