"""Importers: judgments made elsewhere, read into the judgments table ``judgekit judge`` writes.

Each adapter is registered by name (:func:`register`) and reads its source files into an
:class:`Imported`: the judgments (:data:`judgekit.types.JUDGMENT_COLUMNS` plus ``judge``,
the item context and the sample counts of :func:`judgekit.importers.rows.judgments_table`),
the items and, where the source has them, human labels. ``judgekit import --from NAME``
(:mod:`judgekit.study.importing`) writes them into a study folder. Importers sit
beside the engine: they may read data, formats and rubrics, never call a judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from judgekit.types import ParsedReply, Scale, UsageError


class ReplyReader(Protocol):
    """What reads a judge's raw reply: a rubric, or an output format with its scale."""

    def parse(self, text: str, item_ids: Sequence[str]) -> ParsedReply:
        """Read ``text`` against the expected ``item_ids`` (one verdict per ID)."""
        ...


@dataclass(frozen=True)
class ImportOptions:
    """What the user chose for an import.

    Attributes:
        rubric: The rubric name the judgments are filed under (default: the adapter's).
        variant: The prompt variant they are filed under.
        columns: ``ROLE=COLUMN`` choices of the long table (``item``, ``judge``, ``score``, ...).
        reader: Reads raw replies into verdicts (``--format`` or ``--rubric``); None: scores
            are taken as given.
        judge: A judge label for sources that do not name one.
        extra: Adapter-specific choices (e.g. promptfoo's assertion type).
    """

    rubric: str = ""
    variant: str = "base"
    columns: Mapping[str, str] = field(default_factory=dict)
    reader: ReplyReader | None = None
    judge: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Imported:
    """What an adapter read.

    Attributes:
        judgments: The judgments table (see the module docstring).
        items: One row per item: ``ID`` and the canonical columns the source has
            (``Question``, ``Answer``, ``Model``, ...).
        labels: Human labels ``item_id, rater, score`` (possibly empty).
        notes: One line per thing the user should know (replies not read, rule used, ...).
        scale: The scale the source states (FastChat's 1-10, AlpacaEval's 0, 0.5, 1), if it
            states one: recorded in ``study.json`` as the imported rubric's scale.
        pairwise: The judgments compare two answers (:mod:`judgekit.importers.pairs`): the
            items are pairs, ``labels`` hold ``item_id, rater, verdict``.
    """

    judgments: pd.DataFrame
    items: pd.DataFrame
    labels: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["item_id", "rater", "score"])
    )
    notes: tuple[str, ...] = ()
    scale: Scale | None = None
    pairwise: bool = False


Adapter = Callable[[Sequence[Path], ImportOptions], Imported]
_ADAPTERS: dict[str, Adapter] = {}


def register(name: str) -> Callable[[Adapter], Adapter]:
    """Register an adapter under ``name`` (``--from NAME``)."""

    def add(adapter: Adapter) -> Adapter:
        _ADAPTERS[name] = adapter
        return adapter

    return add


def adapter_names() -> list[str]:
    """The registered adapters' names, sorted."""
    return sorted(_ADAPTERS)


def get_adapter(name: str) -> Adapter:
    """The adapter called ``name``.

    Raises:
        UsageError: For an unknown name, listing the known ones.
    """
    if name not in _ADAPTERS:
        raise UsageError(
            f"--from {name!r}: no such adapter; choose one of {', '.join(adapter_names())}"
        )
    return _ADAPTERS[name]


from judgekit.importers import (  # noqa: E402, F401  (importing an adapter registers it)
    alpaca_eval,
    fastchat,
    inspect_ai,
    llmbar,
    long,
    pandalm,
    promptfoo,
)

__all__ = [
    "Adapter",
    "ImportOptions",
    "Imported",
    "ReplyReader",
    "adapter_names",
    "get_adapter",
    "register",
]
