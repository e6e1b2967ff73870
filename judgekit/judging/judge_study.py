"""``judgekit judge`` as one Python call: :func:`judge_study` (``jk.judge_study``)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, TextIO

from judgekit.engine import JudgeOptions
from judgekit.judging.clients import EndpointOptions
from judgekit.judging.command import JudgeCommand
from judgekit.judging.judge import execute
from judgekit.types import UsageError


def judge_study(
    items: str | Path,
    rubric: str,
    *,
    study: str | Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    **settings: Any,
) -> Path:
    """Judge ``items`` with ``rubric`` into a study folder, exactly as ``judgekit judge`` does.

    The same checks, dry run, panel, online or Batch API judging and writing (it calls the
    command's own :func:`~judgekit.judging.judge.execute`); a study judged again
    accumulates. Each setting is named after a ``judgekit judge`` flag (``runs=3``,
    ``variants=("base", "strict")``, ``judges=("openai:gpt-4o-mini",)``, ``output=PATH``,
    ``dry_run=True``, ...): a field of :class:`~judgekit.engine.JudgeOptions`,
    :class:`~judgekit.judging.clients.EndpointOptions` or
    :class:`~judgekit.judging.command.JudgeCommand`.

    Args:
        items: The items table (``.csv``, ``.tsv`` or ``.xlsx``; never written to).
        rubric: A rubric name (``judgekit rubrics``), rubric folder or prompt file.
        study: The study folder to write (or pass ``output=`` for a judgments table).
        out: Where the dry run's preview goes (default stdout).
        err: Where progress and the summary go (default stderr).
        **settings: ``judgekit judge``'s other flags, by their parameter names.

    Returns:
        The study folder (or, without one, the judgments table written).

    Raises:
        UsageError: For a mistake found before any call, or a setting no flag has.
        RunFailed: If the run ended without doing its job (its outputs are written).
    """
    known = {f.name for f in (*fields(JudgeCommand), *fields(JudgeOptions))}
    known = (known | {f.name for f in fields(EndpointOptions)}) - {"endpoint", "judging"}
    if unknown := sorted(set(settings) - known):
        raise UsageError(f"judge_study: unknown setting(s) {unknown}; known: {sorted(known)}")
    for name in ("variants", "judges", "column_map"):  # the CLI's repeatable flags: tuples
        if name in settings:
            value = settings[name]
            settings[name] = (value,) if isinstance(value, str) else tuple(value)
    for name in ("output", "id_score_csv", "panel", "write_requests"):
        if settings.get(name) is not None:
            settings[name] = Path(settings[name])
    where = None if study is None else Path(study)
    command = JudgeCommand.from_flags({**settings, "items": Path(items), "rubric": rubric,
                                       "study": where})  # fmt: skip
    execute(command, out, err)
    return where if where is not None else Path(settings["output"])
