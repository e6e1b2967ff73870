"""Reading a rubric's settings, one way for a folder's ``config.yaml`` and a prompt's sidecar.

Both hold an output format (found in the registry here, once), a scale and the keys of
:func:`shared_settings`; the loaders add what only their kind has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from judgekit.formats import FormatSpec, format_names, get_format
from judgekit.formats.verdicts import PAIRWISE_FORMATS
from judgekit.types import OutputFormat, Scale

#: What a rubric name may be (it names files and columns).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,56}")


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping (a bad file is one line naming it)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


def scale_from_config(config: Mapping[str, Any], path: Path) -> Scale:
    """``scale: {allowed: [...]}`` or ``{range: [low, high]}``, with ``abstain`` and ``step``.

    ``step: 0.5`` also allows half points between the whole values; ``step: continuous``
    allows any number from the lowest to the highest value.
    """
    try:
        scale = config["scale"]
        if "range" in scale:
            low, high = (int(v) for v in scale["range"])
            allowed = tuple(range(low, high + 1))
        else:
            allowed = tuple(int(v) for v in scale["allowed"])
        step = scale.get("step")
        return Scale(
            allowed=allowed,
            abstain=tuple(int(v) for v in scale.get("abstain") or ()),
            step=0.0 if step == "continuous" else None if step is None else float(step),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: bad 'scale' entry ({error})") from error


def shared_settings(
    config: Mapping[str, Any], params: Mapping[str, Any], where: Path, *, reminder: bool
) -> dict[str, Any]:
    """The settings a rubric folder's config and a prompt's sidecar both hold, read one way.

    ``params`` (:func:`load_rubric`'s keywords) override ``label_column``,
    ``default_batch_size`` and ``format_reminder`` (whose default is ``reminder``).

    Raises:
        ValueError: On an unknown output format, or a ``batched`` key (the format decides).
    """
    spec = format_spec(config["output_format"], str(where))
    check_kind(config.get("kind", "direct"), spec, where)
    if "batched" in config:
        raise ValueError(batched_is_the_formats(where, config["batched"], spec))
    batch_size = params.get("default_batch_size", config.get("default_batch_size"))
    if batch_size is None:
        batch_size = 60 if spec.batched else 1
    label_column = params.get("label_column") or config.get("label_column", "Human_Score")
    given_reminder = params.get("format_reminder")
    marker = config.get("score_marker")
    return {
        "format": spec,
        "description": str(config.get("description") or "").strip(),
        "default_batch_size": int(batch_size),
        "optional_columns": tuple(str(c) for c in config.get("optional_columns") or ()),
        "label_column": str(label_column),
        "tie_rule": str(config.get("tie_rule", "none")),
        "format_reminder": bool(
            config.get("format_reminder", reminder) if given_reminder is None else given_reminder
        ),
        "score_marker": None if marker is None else str(marker),
    }


def check_kind(kind: object, spec: FormatSpec, where: Path) -> None:
    """Refuse a ``kind`` the output format contradicts: ``pairwise`` needs a verdict format.

    Raises:
        ValueError: One line naming the settings file, the kind and the formats that fit it.
    """
    pairwise = spec.name in PAIRWISE_FORMATS
    if kind not in ("direct", "pairwise"):
        raise ValueError(f"{where}: kind {kind!r}: say direct (one answer) or pairwise (two)")
    if (kind == "pairwise") != pairwise:
        fits = ", ".join(sorted(PAIRWISE_FORMATS))
        raise ValueError(
            f"{where}: kind {kind} with output_format {spec.name}: a pairwise rubric reads a "
            f"verdict ({fits}); "
            + ("say kind: pairwise" if pairwise else "choose one of them, or leave kind out")
        )


def batched_is_the_formats(path: Path, declared: object, spec: FormatSpec) -> str:
    """The one-line refusal of a ``batched`` key: whether a rubric batches is its format's fact."""
    fact = "batched" if spec.batched else "one item per reply"
    return (
        f"{path}: 'batched: {str(declared).lower()}' is not a rubric setting, the output format "
        f"decides ({spec.name!r} is {fact}); remove the line"
    )


def format_spec(value: OutputFormat, where: str) -> FormatSpec:
    """The registered format a rubric names, found once when the rubric loads."""
    if value not in format_names():
        raise ValueError(f"{where}: unknown output format {value!r}; choose from {format_names()}")
    return get_format(value)
