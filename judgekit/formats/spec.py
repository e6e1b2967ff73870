"""What an output format is, and the registry that finds one by its ``output_format`` name.

A format is one module in this package exporting a :class:`FormatSpec`: how to read a reply,
the JSON schema of a valid reply, a guess of its size, whether it judges several items per
reply, where a logprob-weighted score is found, and its two prompt templates. Rubrics name
their format in ``config.yaml`` and find its spec here once, when they load (rendering,
parsing and the engine use the spec the rubric holds); the simulator looks formats up here.
Adding a format is one module, its two templates and its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.formats.reply import ReplyInput
from judgekit.types import Criterion, ItemVerdict, LogprobAnchor, Scale, UsageError


@dataclass(frozen=True)
class FormatSpec:
    """Everything the package needs to know about one output format.

    Attributes:
        name: The ``output_format`` value a rubric's ``config.yaml`` uses.
        batched: Whether one reply scores several items (single-item formats judge one).
        completion_tokens_per_item: Guessed output tokens per item, for the cost estimate.
        parse: Reads a prepared reply into one verdict per expected ID (then foreign IDs).
        schema: ``(scale, item_ids, criteria) -> JSON schema`` of a valid reply.
        logprob_anchor: Where the score token sits, for logprob-weighted scores.
        needs_criteria: The reply is checked against the rubric's weighted criteria.
        template_dir: Folder holding the two templates when they are not packaged rubric
            templates (``None`` = ``judgekit/rubrics/common``).
    """

    name: str
    batched: bool
    completion_tokens_per_item: int
    parse: Callable[[ReplyInput], tuple[ItemVerdict, ...]]
    schema: Callable[[Scale, Sequence[str], Sequence[Criterion]], dict[str, Any]]
    logprob_anchor: LogprobAnchor
    needs_criteria: bool = False
    template_dir: Path | None = None

    @property
    def templates(self) -> tuple[str, str]:
        """The format block of the system prompt and the reminder closing the user message."""
        return (f"common/format_{self.name}.j2", f"common/reminder_{self.name}.j2")


_REGISTRY: dict[str, FormatSpec] = {}


def register(spec: FormatSpec) -> FormatSpec:
    """Make a format available under its name (a name can be registered once)."""
    known = _REGISTRY.get(spec.name)
    if known is not None and known is not spec:
        raise ValueError(f"output format {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def get_format(name: str) -> FormatSpec:
    """The registered format called ``name``.

    Raises:
        UsageError: When no format has that name (the message lists the known ones).
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown output format {name!r}; choose from {', '.join(format_names())}"
        ) from None


def format_names() -> tuple[str, ...]:
    """The registered format names, in registration order."""
    return tuple(_REGISTRY)
