"""Build rubrics: the packaged ones from their folders, or a user's own from a prompt file."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from judgekit.formats import format_names, get_format
from judgekit.rubrics.base import JinjaRubric
from judgekit.rubrics.criteria import CriterionLike, common_scale, validate_criteria
from judgekit.rubrics.environment import RUBRICS_DIR
from judgekit.types import Criterion, OutputFormat, Scale

_REQUIRED_KEYS = {
    "name",
    "description",
    "seed",
    "output_format",
    "default_batch_size",
    "tie_rule",
    "input_columns",
    "label_column",
    "variants",
}
_OVERRIDABLE = {"label_column", "default_batch_size"}
_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,56}")
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")


def list_rubrics() -> list[str]:
    """Names of the packaged rubrics (folders holding a ``config.yaml``), sorted."""
    return sorted(p.parent.name for p in RUBRICS_DIR.glob("*/config.yaml"))


def _read_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


def _scale_from_config(config: Mapping[str, Any], path: Path) -> Scale:
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


def load_rubric(name: str, **params: Any) -> JinjaRubric:
    """Load a packaged rubric by name.

    Args:
        name: One of :func:`list_rubrics`.
        **params: ``label_column`` and ``default_batch_size`` override the folder's config;
            ``criteria`` (a sequence of :class:`~judgekit.types.Criterion` or mappings) replaces
            the default criteria of ``direct_scoring``.

    Raises:
        ValueError: On an unknown rubric or parameter, or a malformed config.
    """
    folder = RUBRICS_DIR / name
    path = folder / "config.yaml"
    if not _NAME_PATTERN.fullmatch(name) or not path.is_file():
        raise ValueError(f"unknown rubric {name!r}; available: {', '.join(list_rubrics())}")
    config = _read_yaml(path)
    missing = sorted(_REQUIRED_KEYS - set(config))
    if missing:
        raise ValueError(f"{path}: missing keys {missing}")
    if config["name"] != name:
        raise ValueError(f"{path}: 'name' is {config['name']!r}, expected {name!r}")
    output_format = _output_format(config["output_format"], str(path))
    if "batched" in config:
        raise ValueError(_batched_is_the_formats(path, config["batched"], output_format))
    examples_path = folder / "examples.yaml"
    data: dict[str, Any] = {"anchors": [], "examples": [], "output_example": None}
    data.update(config.get("template_data") or {})
    if examples_path.is_file():
        data.update(_read_yaml(examples_path))
    allowed_params = _OVERRIDABLE | ({"criteria"} if "criteria" in config else set())
    unknown = sorted(set(params) - allowed_params)
    if unknown:
        raise ValueError(
            f"rubric {name}: unknown parameter(s) {unknown}; allowed: {sorted(allowed_params)}"
        )
    criteria: tuple[Criterion, ...] = ()
    if "criteria" in config:
        given = params.get("criteria") or config["criteria"]
        criteria = validate_criteria(given, f"{name}.criteria")
        scale = common_scale(criteria)
    else:
        scale = _scale_from_config(config, path)
    for variant in config["variants"]:
        if not (folder / "variants" / f"{variant}.j2").is_file():
            raise ValueError(f"{path}: variant {variant!r} has no template variants/{variant}.j2")
    return JinjaRubric(
        name=name,
        description=str(config["description"]).strip(),
        seed=str(config["seed"]),
        output_format=output_format,
        scale=scale,
        default_batch_size=int(params.get("default_batch_size", config["default_batch_size"])),
        input_columns=tuple(config["input_columns"]),
        optional_columns=tuple(config.get("optional_columns") or ()),
        variants=tuple(config["variants"]),
        tie_rule=str(config["tie_rule"]),
        label_column=str(params.get("label_column", config["label_column"])),
        criteria=criteria,
        template_data=data,
        score_marker=config.get("score_marker"),
    )


def _batched_is_the_formats(path: Path, declared: object, output_format: OutputFormat) -> str:
    """The one-line refusal of a ``batched`` key: whether a rubric batches is its format's fact."""
    fact = "batched" if get_format(output_format).batched else "one item per reply"
    return (
        f"{path}: 'batched: {str(declared).lower()}' is not a rubric setting, the output format "
        f"decides ({output_format!r} is {fact}); remove the line"
    )


def _output_format(value: str, where: str) -> OutputFormat:
    if value not in format_names():
        raise ValueError(f"{where}: unknown output format {value!r}; choose from {format_names()}")
    return value


def rubric_from_prompt_file(
    path: str | Path,
    *,
    name: str,
    output_format: OutputFormat,
    scale: Scale,
    input_columns: Sequence[str],
    optional_columns: Sequence[str] = (),
    default_batch_size: int | None = None,
    label_column: str = "Human_Score",
    tie_rule: str = "lower",
    criteria: Sequence[CriterionLike] = (),
    description: str = "",
    score_marker: str | None = None,
) -> JinjaRubric:
    """Build a rubric from the user's own prompt file (e.g. a study's master prompt).

    The file's text becomes the system message verbatim (it is not a template); the standard
    batch header and ``<item>`` blocks in ``input_columns`` order form the user message. With
    ``structured=True`` the shared description of the format's JSON form is appended to the
    file's text. Only the ``"base"`` variant exists. ``score_marker`` (``"Rating: [[N]]"``)
    says how the prompt asks for the score, so the reader reads that marker.

    Raises:
        ValueError: If the file is missing or empty, holds template placeholders (items are
            sent in the user message, so a ``{{ context }}`` slot would stay unfilled), or a
            parameter is invalid.
    """
    prompt_path = Path(path)
    if not prompt_path.is_file():
        raise ValueError(f"{prompt_path}: prompt file not found")
    text = prompt_path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").strip()
    if not text:
        raise ValueError(f"{prompt_path}: the prompt file is empty")
    placeholder = _PLACEHOLDER.search(text)
    if placeholder:
        line = text.count("\n", 0, placeholder.start()) + 1
        raise ValueError(
            f"{prompt_path}, line {line}: template placeholder {placeholder.group()!r}; "
            "remove it, items are sent in the user message"
        )
    if not _NAME_PATTERN.fullmatch(name):
        raise ValueError(f"rubric name {name!r} must be 1-56 letters, digits, '_' or '-'")
    spec = get_format(_output_format(output_format, str(prompt_path)))
    validated = (
        validate_criteria(criteria, f"{prompt_path}: criteria")
        if spec.needs_criteria or criteria
        else ()
    )
    return JinjaRubric(
        name=name,
        description=description or f"User rubric from {prompt_path.name}",
        seed=str(prompt_path),
        output_format=spec.name,
        scale=common_scale(validated) if validated else scale,
        default_batch_size=default_batch_size or (60 if spec.batched else 1),
        input_columns=tuple(input_columns),
        optional_columns=tuple(optional_columns),
        tie_rule=tie_rule,
        label_column=label_column,
        criteria=validated,
        prompt_text=text,
        prompt_file=prompt_path,
        score_marker=score_marker,
    )
