"""Build rubrics: packaged ones by name, a user's rubric folder, or a user's own prompt file.

``load_rubric`` takes what ``judgekit judge --rubric`` takes: a packaged name
(``riddle_accuracy``), a rubric folder (``config.yaml`` plus Jinja2 templates under
``variants/``, laid out as the packaged ones, or ``prompt: FILE`` for a prompt file with its
settings), or a prompt file (``.txt``, ``.md``, ...) whose few settings sit in a YAML file of
the same name beside it (``my_prompt.yaml``). The settings (:data:`PROMPT_KEYS`) are the
ones a prompt cannot carry: how the judge answers (which decides whether items are batched),
the scale, which column fills each placeholder, the label column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from judgekit.data.columns import DEFAULT_ALIASES, alias_key
from judgekit.formats import FormatSpec, format_names, get_format
from judgekit.rubrics.base import JinjaRubric
from judgekit.rubrics.criteria import CriterionLike, common_scale, validate_criteria
from judgekit.rubrics.environment import RUBRICS_DIR
from judgekit.rubrics.placeholders import PromptTemplate
from judgekit.rubrics.prompt import PromptRubric
from judgekit.types import CANONICAL_COLUMNS, Criterion, OutputFormat, Scale

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
#: What a user's rubric folder must say (the rest has defaults).
_USER_FOLDER_KEYS = {"name", "output_format", "input_columns", "variants"}
#: The settings of a prompt file (its sidecar YAML, or a folder's ``config.yaml``).
PROMPT_KEYS = {
    "prompt": "the prompt file (in a folder's config.yaml)",
    "name": "rubric name (default: the file's name)",
    "description": "one line on what it measures",
    "output_format": f"how the judge answers: {', '.join(format_names())}",
    "scale": "allowed scores, e.g. {allowed: [1, 2, 3, 4, 5]}, and abstain values",
    "default_batch_size": "items per request, for a batched format (id_score_lines)",
    "columns": "the item column of each placeholder ({placeholder: Column}), or the columns "
    "to send when the prompt has no placeholders ([Column, ...])",
    "optional_columns": "columns an item may leave blank",
    "values": "fixed text for placeholders that are not columns ({placeholder: text})",
    "system": "a system message sent before the filled prompt",
    "label_column": "the human label column of the items file",
    "format_reminder": "close with the format's reminder, and on re-asks say what was wrong",
    "score_marker": "how the prompt asks for the score (score_line): 'Rating: [[N]]', ...",
    "tie_rule": "what the prompt says between two scores",
    "criteria": "weighted criteria (direct_scoring_json)",
}
_OVERRIDABLE = {"label_column", "default_batch_size"}
_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,56}")
#: A placeholder named like a canonical column or one of its aliases reads that column.
_CANONICAL = {alias_key(column): column for column in CANONICAL_COLUMNS} | {
    alias_key(alias): column for alias, column in DEFAULT_ALIASES.items()
}


def list_rubrics() -> list[str]:
    """Names of the packaged rubrics (folders holding a ``config.yaml``), sorted."""
    return sorted(p.parent.name for p in RUBRICS_DIR.glob("*/config.yaml"))


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
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


def _packaged_folder(spec: str | Path) -> Path | None:
    """The packaged rubric ``spec`` names (a name wins over a same-named local folder)."""
    if isinstance(spec, Path) or not _NAME_PATTERN.fullmatch(spec):
        return None
    folder = RUBRICS_DIR / spec
    return folder if (folder / "config.yaml").is_file() else None


def load_rubric(spec: str | Path, **params: Any) -> JinjaRubric:
    """Load a packaged rubric by name, a user's rubric folder, or a user's prompt file.

    Args:
        spec: One of :func:`list_rubrics`, a folder holding ``config.yaml``, or a prompt file.
        **params: ``label_column`` and ``default_batch_size`` override the config;
            ``criteria`` (a sequence of :class:`~judgekit.types.Criterion` or mappings) replaces
            the default criteria of ``direct_scoring``; for a prompt, ``column_map``
            (``{placeholder: column}``) and ``format_reminder`` override its settings.

    Raises:
        ValueError: On an unknown rubric or parameter, or malformed settings (one line).
    """
    packaged = _packaged_folder(spec)
    if packaged is not None:
        return _folder_rubric(packaged, params, packaged=True)
    path = Path(spec)
    if isinstance(spec, str) and _NAME_PATTERN.fullmatch(spec) and not path.exists():
        raise ValueError(
            f"unknown rubric {spec!r}; available: {', '.join(list_rubrics())}, "
            "or a rubric folder or prompt file"
        )
    if path.is_dir():
        config_path = path / "config.yaml"
        if not config_path.is_file():
            raise ValueError(f"{path}: a rubric folder needs a config.yaml")
        config = _read_yaml(config_path)
        if "prompt" in config:
            return _prompt_rubric(path / str(config["prompt"]), config, config_path, params)
        return _folder_rubric(path, params, packaged=False)
    if not path.is_file():
        raise ValueError(f"{path}: no such rubric folder or prompt file")
    sidecar = next((s for s in _sidecars(path) if s.is_file()), None)
    config = _read_yaml(sidecar) if sidecar is not None else {}
    if "prompt" in config:
        raise ValueError(f"{sidecar}: 'prompt' belongs in a folder's config.yaml, not here")
    return _prompt_rubric(path, config, sidecar or _sidecars(path)[0], params)


def _sidecars(prompt: Path) -> tuple[Path, Path]:
    return prompt.with_suffix(".yaml"), prompt.with_suffix(".yml")


def _folder_rubric(folder: Path, params: Mapping[str, Any], *, packaged: bool) -> JinjaRubric:
    path = folder / "config.yaml"
    config = _read_yaml(path)
    missing = sorted((_REQUIRED_KEYS if packaged else _USER_FOLDER_KEYS) - set(config))
    if missing:
        raise ValueError(f"{path}: missing keys {missing}")
    name = str(config["name"])
    if packaged and name != folder.name:
        raise ValueError(f"{path}: 'name' is {name!r}, expected {folder.name!r}")
    if not _NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{path}: name {name!r} must be 1-56 letters, digits, '_' or '-'")
    spec = _format_spec(config["output_format"], str(path))
    if "batched" in config:
        raise ValueError(_batched_is_the_formats(path, config["batched"], spec))
    examples_path = folder / "examples.yaml"
    data: dict[str, Any] = {"anchors": [], "examples": [], "output_example": None}
    data.update(config.get("template_data") or {})
    if examples_path.is_file():
        data.update(_read_yaml(examples_path))
    allowed_params = _OVERRIDABLE | {"format_reminder"}
    allowed_params |= {"criteria"} if "criteria" in config else set()
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
    reminder = params.get("format_reminder")
    return JinjaRubric(
        name=name,
        description=str(config.get("description", "")).strip(),
        seed=str(config.get("seed", path)),
        format=spec,
        scale=scale,
        default_batch_size=int(
            params.get(
                "default_batch_size", config.get("default_batch_size", 60 if spec.batched else 1)
            )
        ),
        input_columns=tuple(config["input_columns"]),
        optional_columns=tuple(config.get("optional_columns") or ()),
        variants=tuple(config["variants"]),
        tie_rule=str(config.get("tie_rule", "none")),
        label_column=str(params.get("label_column", config.get("label_column", "Human_Score"))),
        criteria=criteria,
        template_data=data,
        template_folder=None if packaged else folder,
        format_reminder=bool(config.get("format_reminder", True) if reminder is None else reminder),
        score_marker=config.get("score_marker"),
    )


def _batched_is_the_formats(path: Path, declared: object, spec: FormatSpec) -> str:
    """The one-line refusal of a ``batched`` key: whether a rubric batches is its format's fact."""
    fact = "batched" if spec.batched else "one item per reply"
    return (
        f"{path}: 'batched: {str(declared).lower()}' is not a rubric setting, the output format "
        f"decides ({spec.name!r} is {fact}); remove the line"
    )


def _format_spec(value: OutputFormat, where: str) -> FormatSpec:
    """The registered format a rubric names, found once when the rubric loads."""
    if value not in format_names():
        raise ValueError(f"{where}: unknown output format {value!r}; choose from {format_names()}")
    return get_format(value)


def _default_column(placeholder: str) -> str:
    """The column a placeholder names: canonical, in any spelling or alias, else its own."""
    return _CANONICAL.get(alias_key(placeholder), placeholder)


def _prompt_rubric(
    prompt: Path, config: Mapping[str, Any], settings: Path, params: Mapping[str, Any]
) -> PromptRubric:
    """A prompt file and its settings (``config``, read from ``settings``) as a rubric."""
    unknown = sorted(set(config) - set(PROMPT_KEYS))
    if unknown:
        raise ValueError(f"{settings}: unknown key(s) {unknown}; known: {', '.join(PROMPT_KEYS)}")
    bad_params = sorted(set(params) - {"column_map", "format_reminder", "label_column"})
    if bad_params:
        raise ValueError(f"prompt {prompt}: unknown parameter(s) {bad_params}")
    if "batched" in config and "output_format" in config:
        spec = _format_spec(config["output_format"], str(settings))
        raise ValueError(_batched_is_the_formats(settings, config["batched"], spec))
    absent = [key for key in ("output_format", "scale") if key not in config]
    absent = [key for key in absent if key != "scale" or "criteria" not in config]
    if absent:
        where = "in" if settings.is_file() else "in a file beside it,"
        raise ValueError(
            f"{prompt}: say {' and '.join(absent)} {where} {settings} "
            "(e.g. output_format: score_line and scale: {allowed: [1, 2, 3, 4, 5]})"
        )
    if not prompt.is_file():
        raise ValueError(f"{settings}: prompt file {prompt} not found")
    columns = config.get("columns") or {}
    listed: Sequence[str] = columns if isinstance(columns, list) else ()
    mapping = dict(columns) if isinstance(columns, dict) else {}
    mapping.update(params.get("column_map") or {})
    template = read_prompt(prompt)
    values = {str(k): str(v) for k, v in (config.get("values") or {}).items()}
    stray = sorted(set(mapping) - set(template.names))
    if stray:
        raise ValueError(
            f"{prompt}: no placeholder {', '.join(stray)} to map; it has "
            f"{', '.join(template.names) or 'none'}"
        )
    reminder = params.get("format_reminder")
    return rubric_from_template(
        template,
        name=str(config.get("name") or re.sub(r"[^A-Za-z0-9_-]", "_", prompt.stem)[:56]),
        output_format=str(config["output_format"]),
        scale=_scale_from_config(config, settings) if "scale" in config else Scale((1,)),
        columns={str(k): str(v) for k, v in mapping.items()},
        input_columns=tuple(str(c) for c in listed),
        optional_columns=tuple(str(c) for c in config.get("optional_columns") or ()),
        values=values,
        system=str(config.get("system") or ""),
        prompt_file=prompt,
        default_batch_size=config.get("default_batch_size"),
        label_column=str(params.get("label_column") or config.get("label_column", "Human_Score")),
        tie_rule=str(config.get("tie_rule", "none")),
        criteria=config.get("criteria") or (),
        description=str(config.get("description", "")),
        format_reminder=bool(
            config.get("format_reminder", False) if reminder is None else reminder
        ),
        score_marker=None if config.get("score_marker") is None else str(config["score_marker"]),
    )


def read_prompt(path: Path) -> PromptTemplate:
    """A prompt file's text as sent: Windows line ends as LF, without its final line end.

    Raises:
        ValueError: If the file is empty or its placeholders cannot be filled as written.
    """
    text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    if not text.strip():
        raise ValueError(f"{path}: the prompt file is empty")
    return PromptTemplate(text.removesuffix("\n"), str(path))


def rubric_from_template(
    template: PromptTemplate,
    *,
    name: str,
    output_format: OutputFormat,
    scale: Scale,
    columns: Mapping[str, str] | None = None,
    input_columns: Sequence[str] = (),
    optional_columns: Sequence[str] = (),
    values: Mapping[str, str] | None = None,
    system: str = "",
    prompt_file: Path | None = None,
    default_batch_size: int | None = None,
    label_column: str = "Human_Score",
    tie_rule: str = "none",
    criteria: Sequence[CriterionLike] = (),
    description: str = "",
    format_reminder: bool = False,
    score_marker: str | None = None,
) -> PromptRubric:
    """Check a prompt's settings and build its :class:`PromptRubric`."""
    where = template.source
    if not _NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{where}: rubric name {name!r} must be 1-56 letters, digits, '_' or '-'")
    spec = _format_spec(output_format, where)
    validated = (
        validate_criteria(criteria, f"{where}: criteria") if spec.needs_criteria or criteria else ()
    )
    return PromptRubric(
        name=name,
        template=template,
        format=spec,
        scale=common_scale(validated) if validated else scale,
        columns={p: _default_column(p) for p in template.names} | dict(columns or {}),
        input_columns=input_columns,
        optional_columns=optional_columns,
        values=values,
        system=system,
        prompt_file=prompt_file,
        default_batch_size=default_batch_size,
        label_column=label_column,
        tie_rule=tie_rule,
        criteria=validated,
        description=description,
        format_reminder=format_reminder,
        score_marker=score_marker,
    )


def rubric_from_prompt_file(
    path: str | Path,
    *,
    name: str,
    output_format: OutputFormat,
    scale: Scale,
    input_columns: Sequence[str] = (),
    column_map: Mapping[str, str] | None = None,
    optional_columns: Sequence[str] = (),
    system: str = "",
    default_batch_size: int | None = None,
    label_column: str = "Human_Score",
    tie_rule: str = "none",
    criteria: Sequence[CriterionLike] = (),
    description: str = "",
    format_reminder: bool = False,
    score_marker: str | None = None,
) -> PromptRubric:
    """Build a rubric from the user's own prompt file, sent as written (from Python).

    With placeholders the file is the user message, filled per item (``column_map`` names the
    column of each placeholder; a canonical column is found in any spelling, ``{question}`` ->
    ``Question``); without, it is the system message and the items follow in judgekit's user
    message, in ``input_columns`` order. ``score_marker`` (``"Rating: [[N]]"``) says how the
    prompt asks for the score, so the reader reads that marker. ``load_rubric(path)`` does
    the same from a sidecar.

    Raises:
        ValueError: If the file is missing or empty, a placeholder cannot be filled, or a
            parameter is invalid.
    """
    prompt = Path(path)
    if not prompt.is_file():
        raise ValueError(f"{prompt}: prompt file not found")
    return rubric_from_template(
        read_prompt(prompt),
        name=name,
        output_format=output_format,
        scale=scale,
        columns=column_map,
        input_columns=input_columns,
        optional_columns=optional_columns,
        system=system,
        prompt_file=prompt,
        default_batch_size=default_batch_size,
        label_column=label_column,
        tie_rule=tie_rule,
        criteria=criteria,
        description=description,
        format_reminder=format_reminder,
        score_marker=score_marker,
    )
