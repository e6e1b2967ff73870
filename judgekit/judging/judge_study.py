"""``judgekit judge`` as one Python call: :func:`judge_study` (``jk.judge_study``).

The command line and notebook 01 both call it; it records the ``judgekit judge`` command that
does the same, so a study judged from Python says how to judge it again from a shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, TextIO

from judgekit.engine import JudgeOptions
from judgekit.judging.clients import EndpointOptions
from judgekit.judging.command import JudgeCommand
from judgekit.judging.judge import execute
from judgekit.types import UsageError

#: The flag of each setting whose flag is not ``--`` and its name with ``-`` (the others are).
_FLAG_NAMES = {"judges": "--judge", "variants": "--variant", "requests_per_minute": "--rpm",
               "tokens_per_minute": "--tpm", "timeout_s": "--timeout"}  # fmt: skip
#: Settings ``judgekit judge`` has a flag for (its parameters, less ``items`` and ``rubric``).
FLAG_SETTINGS = (
    "study", "output", "labels_column", "model", "base_url", "provider", "judges", "panel",
    "label_map", "no_labels", "orders", "runs", "variants", "batch_size", "temperature",
    "max_tokens", "store", "id_score_csv", "limit", "max_concurrency", "requests_per_minute",
    "tokens_per_minute", "timeout_s", "max_retries", "endpoint_name", "max_reasks",
    "max_unscored", "seed", "offline", "dry_run", "mode", "context_tokens", "shuffle_seed",
    "encoding", "sep", "sheet", "batch_api", "write_requests", "prices", "column_map",
    "format_reminder",
)  # fmt: skip
#: Settings without a flag: how the run looks, never what it judges (not on the command line).
_UNRECORDED = ("progress", "command_line")
_PATHS = ("study", "output", "id_score_csv", "panel", "write_requests", "store")
_TUPLES = ("variants", "judges", "column_map")


def flag(name: str) -> str:
    """The ``judgekit judge`` flag of a setting (``requests_per_minute`` -> ``--rpm``)."""
    return _FLAG_NAMES.get(name, "--" + name.replace("_", "-"))


def _defaults() -> dict[str, Any]:
    """Each setting's default: the field's default, which is the flag's."""
    found = {}
    for f in (*fields(JudgeCommand), *fields(JudgeOptions), *fields(EndpointOptions)):
        if f.default is not MISSING:
            found[f.name] = f.default
        elif f.default_factory is not MISSING:
            found[f.name] = f.default_factory()
    return found


def command_line(items: Path, rubric: str, settings: Mapping[str, Any]) -> str:
    """The ``judgekit judge`` command of these settings: the flags that are not defaults.

    Flags follow :data:`FLAG_SETTINGS`' order; a repeatable one is given once per value.
    """
    words = ["judgekit", "judge", str(items), "--rubric", rubric]
    defaults = _defaults()
    for name in FLAG_SETTINGS:
        value = settings.get(name, defaults[name])
        if value == defaults[name]:
            continue
        if isinstance(value, bool):
            words.append(flag(name) if value else f"--no-{flag(name)[2:]}")
        elif name in _TUPLES:
            words += [word for item in value for word in (flag(name), str(item))]
        elif name == "prices":
            words += [flag(name), f"{value['input']:g},{value['output']:g}"]
        else:
            words += [flag(name), str(value)]
    return shlex.join(words)


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

    The same checks, dry run, panel, online or Batch API judging and writing (it runs the
    command's own :func:`~judgekit.judging.judge.execute`); a study judged again
    accumulates. Each setting is a ``judgekit judge`` flag by its parameter name (``runs=3``,
    ``variants=("base", "strict")``, ``judges=("openai:gpt-4o-mini",)``, ``output=PATH``,
    ``requests_per_minute=60``, ``prices={"input": 2, "output": 8}``, ``dry_run=True``, ...),
    plus ``progress=False`` (no estimate line and progress bar). ``study.json`` records the
    ``judgekit judge`` command of the call (:func:`command_line`) unless ``command_line`` is
    given (the CLI gives the one typed).

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
    known = {*FLAG_SETTINGS, *_UNRECORDED} - {"study"}
    if unknown := sorted(set(settings) - known):
        raise UsageError(f"judge_study: unknown setting(s) {unknown}; known: {sorted(known)}")
    for name in _TUPLES:  # the CLI's repeatable flags: tuples
        if name in settings:
            value = settings[name]
            settings[name] = (value,) if isinstance(value, str) else tuple(value)
    for name in _PATHS:
        if settings.get(name) is not None:
            settings[name] = Path(settings[name])
    where = None if study is None else Path(study)
    settings.update(items=Path(items), rubric=rubric, study=where)
    if not settings.get("command_line"):
        settings["command_line"] = command_line(Path(items), rubric, settings)
    execute(JudgeCommand.from_flags(settings), out, err)
    return where if where is not None else Path(settings["output"])
