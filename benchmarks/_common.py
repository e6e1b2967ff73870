"""Shared pieces of the benchmark scripts: items, oracles, simulator settings, tables, metrics.

Every script runs from the repository root as ``python3 -m benchmarks.<name>``, prints one or
more markdown tables on stdout and, given ``--metrics PATH``, writes its headline numbers as
JSON there (``judgekit.cli.bench`` reads them to mark the targets met or missed).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit import config
from judgekit.data import items_from_frame
from judgekit.riddles import load_riddles_v1
from judgekit.rubrics import load_rubric
from judgekit.simulator import RequestLog
from judgekit.types import Item

#: The simulated judge's fixed latency in every benchmark (a fast hosted model's order).
LATENCY_S = 0.3


def riddle_items(columns: Sequence[str], limit: int | None = None) -> tuple[list[Item], str]:
    """The 600 real v1 riddle rows if ``../shared`` is there, else synthetic rows of similar size.

    Returns:
        The items and a one-line description of where they came from.
    """
    if config.RIDDLES_DIR.is_dir():
        frame = load_riddles_v1()
        items = items_from_frame(frame, columns)
        source = f"{len(items)} real rows of the Hungarian riddles v1 pilot (Boczka)"
    else:
        items = synthetic_items(600, columns)
        source = "600 synthetic rows (shared datasets not found)"
    items = items[:limit] if limit else items
    return items, source


def synthetic_items(count: int, columns: Sequence[str]) -> list[Item]:
    """Rows with riddle-sized texts (a question, a one-phrase answer, a two-sentence reasoning)."""
    texts = {
        "Question": "Melyik magyar találmány forog hat színes oldalon, mégsem kerék? ({i})",
        "Answer": "Rubik-kocka {i}",
        "Ref_Answer": "Rubik-kocka",
        "Reasoning": (
            "Rubik Ernő alkotta meg; hat oldalát forgatással kell rendbe tenni, ezért forog, "
            "de nem gurul, így nem kerék. Válasz {i}."
        ),
        "Ref_Reasoning": "Rubik Ernő alkotta meg 1974-ben; hat oldala hat színű.",
    }
    return [
        Item(f"S{i:03d}", {c: texts[c].format(i=i) for c in columns}) for i in range(1, count + 1)
    ]


def oracle_scores(items: Sequence[Item], allowed: Sequence[int]) -> dict[str, float]:
    """A fixed score per item: spread over the scale by the item's position in the list."""
    return {item.id: float(allowed[i % len(allowed)]) for i, item in enumerate(items)}


def rubric_items(rubric_name: str, limit: int | None = None) -> tuple[Any, list[Item], str]:
    """Load a rubric and the riddle items carrying its input columns."""
    rubric = load_rubric(rubric_name)
    items, source = riddle_items(rubric.input_columns, limit)
    return rubric, items, source


def scored_items(
    rubric_name: str, limit: int | None = None
) -> tuple[Any, list[Item], dict[str, float]]:
    """A rubric, its riddle items and the simulator's oracle score for each of them."""
    rubric, items, _ = rubric_items(rubric_name, limit)
    return rubric, items, oracle_scores(items, rubric.scale.allowed)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table (numbers already formatted by the caller)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def begin_benchmark(description: str) -> tuple[argparse.Namespace, str]:
    """Begin a benchmark: keep progress bars out of the tables, parse ``--metrics PATH``.

    Returns:
        The parsed options and the one-line description of the riddle items the tables use.
    """
    os.environ.setdefault("TQDM_DISABLE", "1")
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--metrics", type=Path, default=None, help="write headline numbers here")
    options = parser.parse_args()
    _, _, source = rubric_items("riddle_accuracy")
    return options, source


def write_metrics(path: Path | None, metrics: Mapping[str, Any]) -> None:
    """Write the headline numbers as JSON (when a path was given)."""
    if path is not None:
        path.write_text(json.dumps(dict(metrics), indent=2, default=float), encoding="utf-8")


def answered_requests(log: RequestLog) -> int:
    """Requests the simulator answered with a reply (not refused with 429 or failed)."""
    return sum(1 for entry in log if entry.status_code == 200)


class Stopwatch:
    """Wall-clock timer: ``with Stopwatch() as clock: ...; clock.seconds``."""

    def __enter__(self) -> Stopwatch:
        self.started = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.started
