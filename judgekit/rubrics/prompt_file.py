"""A user's prompt file and its settings as a :class:`~judgekit.rubrics.prompt.PromptRubric`.

``load_rubric(path)`` reads the settings from the sidecar YAML beside the file (or a folder's
``config.yaml`` naming ``prompt: FILE``); :func:`rubric_from_prompt_file` takes them as
keywords, from Python. Both check the prompt's name, placeholders and criteria here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.data.columns import DEFAULT_ALIASES, alias_key
from judgekit.data.pairwise import ANSWER_A, ANSWER_B, ITEM_MODEL_A, ITEM_MODEL_B, PAIR_ALIASES
from judgekit.formats import FormatSpec, format_names
from judgekit.rubrics.criteria import CriterionLike, common_scale, validate_criteria
from judgekit.rubrics.placeholders import PromptTemplate
from judgekit.rubrics.prompt import PromptRubric
from judgekit.rubrics.settings import NAME_PATTERN, format_spec, scale_from_config, shared_settings
from judgekit.types import CANONICAL_COLUMNS, OutputFormat, Scale

#: The settings of a prompt file (its sidecar YAML, or a folder's ``config.yaml``).
PROMPT_KEYS = {
    "prompt": "the prompt file (in a folder's config.yaml)",
    "name": "rubric name (default: the file's name)",
    "kind": "direct (one answer, the default) or pairwise ({answer_a} and {answer_b} compared)",
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
    "variants": "paraphrases of the prompt: [paraphrase_1, ...] (files NAME.paraphrase_1.txt "
    "beside it) or {paraphrase_1: FILE}; default: every NAME.VARIANT.txt beside it",
}
#: What :func:`rubric_from_prompt_file` passes on to :class:`PromptRubric` as given.
_PASSED_ON = (
    "input_columns",
    "optional_columns",
    "values",
    "system",
    "default_batch_size",
    "label_column",
    "tie_rule",
    "description",
    "format_reminder",
    "score_marker",
)
#: A placeholder named like a canonical column or one of its aliases reads that column.
#: (A pairwise prompt's ``{answer_a}``, ``{response_b}``, ``{model_a}`` read the pair columns.)
_PAIR_COLUMNS = (ANSWER_A, ANSWER_B, ITEM_MODEL_A, ITEM_MODEL_B)
_CANONICAL = (
    {alias_key(alias): column for alias, column in PAIR_ALIASES.items() if column in _PAIR_COLUMNS}
    | {alias_key(column): column for column in (*_PAIR_COLUMNS, *CANONICAL_COLUMNS)}
    | {alias_key(alias): column for alias, column in DEFAULT_ALIASES.items()}
)


def _default_column(placeholder: str) -> str:
    """The column a placeholder names: canonical, in any spelling or alias, else its own."""
    return _CANONICAL.get(alias_key(placeholder), placeholder)


def prompt_rubric(
    prompt: Path, config: Mapping[str, Any], settings: Path, params: Mapping[str, Any]
) -> PromptRubric:
    """A prompt file and its settings (``config``, read from ``settings``) as a rubric."""
    unknown = sorted(set(config) - set(PROMPT_KEYS))
    if unknown:
        raise ValueError(f"{settings}: unknown key(s) {unknown}; known: {', '.join(PROMPT_KEYS)}")
    bad_params = sorted(set(params) - {"column_map", "format_reminder", "label_column"})
    if bad_params:
        raise ValueError(f"prompt {prompt}: unknown parameter(s) {bad_params}")
    absent = [key for key in ("output_format", "scale") if key not in config]
    absent = [key for key in absent if key != "scale" or "criteria" not in config]
    if absent:
        where = "in" if settings.is_file() else "in a file beside it,"
        raise ValueError(
            f"{prompt}: say {' and '.join(absent)} {where} {settings} "
            "(e.g. output_format: score_line and scale: {allowed: [1, 2, 3, 4, 5]})"
        )
    shared = shared_settings(config, params, settings, reminder=False)
    if not prompt.is_file():
        raise ValueError(f"{settings}: prompt file {prompt} not found")
    columns = config.get("columns") or {}
    listed: Sequence[str] = columns if isinstance(columns, list) else ()
    mapping = dict(columns) if isinstance(columns, dict) else {}
    mapping.update(params.get("column_map") or {})
    return _from_template(
        read_prompt(prompt),
        prompt_file=prompt,
        variants=read_variants(prompt, config.get("variants"), settings),
        name=str(config.get("name") or re.sub(r"[^A-Za-z0-9_-]", "_", prompt.stem)[:56]),
        scale=scale_from_config(config, settings) if "scale" in config else Scale((1,)),
        columns={str(k): str(v) for k, v in mapping.items()},
        input_columns=tuple(str(c) for c in listed),
        values={str(k): str(v) for k, v in (config.get("values") or {}).items()},
        system=str(config.get("system") or ""),
        criteria=config.get("criteria") or (),
        **shared,
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


def read_variants(prompt: Path, given: Any, settings: Path) -> dict[str, PromptTemplate]:
    """The prompt's paraphrases: ``variants:`` from the settings, else the files beside it.

    A variant ``V`` of ``NAME.txt`` is the file ``NAME.V.txt`` in the same folder (or the file
    a ``{V: FILE}`` mapping names, relative to the settings).

    Raises:
        ValueError: For a bad ``variants`` entry, a missing file or a bad variant name.
    """
    if given is None:
        pattern = re.compile(rf"{re.escape(prompt.stem)}\.(?P<v>[\w-]+){re.escape(prompt.suffix)}")
        files = {
            found["v"]: path
            for path in sorted(prompt.parent.iterdir())
            if (found := pattern.fullmatch(path.name))
        }
    elif isinstance(given, list):
        files = {str(v): prompt.with_name(f"{prompt.stem}.{v}{prompt.suffix}") for v in given}
    elif isinstance(given, dict):
        files = {str(v): settings.parent / str(file) for v, file in given.items()}
    else:
        raise ValueError(f"{settings}: 'variants' is a list of names or a {{name: file}} mapping")
    for variant, path in files.items():
        if variant == "base" or not NAME_PATTERN.fullmatch(variant):
            raise ValueError(
                f"{path}: variant name {variant!r} must be 1-56 letters, digits, '_' or '-', "
                "not 'base' (the prompt itself)"
            )
        if not path.is_file():
            raise ValueError(f"{settings}: variant {variant!r} has no file {path}")
    return {variant: read_prompt(path) for variant, path in files.items()}


def _from_template(
    template: PromptTemplate,
    *,
    name: str,
    format: FormatSpec,
    scale: Scale,
    columns: Mapping[str, str],
    criteria: Sequence[CriterionLike],
    **settings: Any,
) -> PromptRubric:
    """Check a prompt's name, columns and criteria, and build its :class:`PromptRubric`.

    ``settings`` are the rest of :class:`PromptRubric`'s keywords, passed on as given.
    """
    where = template.source
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{where}: rubric name {name!r} must be 1-56 letters, digits, '_' or '-'")
    stray = sorted(set(columns) - set(template.names))
    if stray:
        raise ValueError(
            f"{where}: no placeholder {', '.join(stray)} to map; it has "
            f"{', '.join(template.names) or 'none'}"
        )
    for variant in (settings.get("variants") or {}).values():
        if set(variant.names) != set(template.names):
            raise ValueError(
                f"{variant.source}: a variant rephrases {where} with the same placeholders "
                f"({', '.join(template.names) or 'none'}); it has "
                f"{', '.join(variant.names) or 'none'}"
            )
    validated = (
        validate_criteria(criteria, f"{where}: criteria")
        if format.needs_criteria or criteria
        else ()
    )
    return PromptRubric(
        name=name,
        template=template,
        format=format,
        scale=common_scale(validated) if validated else scale,
        columns={p: _default_column(p) for p in template.names} | dict(columns),
        criteria=validated,
        **settings,
    )


def rubric_from_prompt_file(
    path: str | Path,
    *,
    name: str,
    output_format: OutputFormat,
    scale: Scale,
    column_map: Mapping[str, str] | None = None,
    criteria: Sequence[CriterionLike] = (),
    **settings: Any,
) -> PromptRubric:
    """Build a rubric from the user's own prompt file, sent as written (from Python).

    With placeholders the file is the user message, filled per item (``column_map`` names the
    column of each placeholder; a canonical column is found in any spelling, ``{question}`` ->
    ``Question``); without, it is the system message and the items follow in judgekit's user
    message, in ``input_columns`` order. ``score_marker`` (``"Rating: [[N]]"``) says how the
    prompt asks for the score, so the reader reads that marker. Every ``NAME.VARIANT.txt``
    beside the file is a variant (a paraphrase, same placeholders). ``load_rubric(path)`` does
    the same from a sidecar.

    Args:
        path: The prompt file.
        name: The rubric's name (1-56 letters, digits, ``_`` or ``-``).
        output_format: How the judge answers (a registered format's name).
        scale: The allowed scores (replaced by the criteria's scale when there are criteria).
        column_map: The item column of each placeholder.
        criteria: Weighted criteria (``direct_scoring_json``).
        **settings: :class:`~judgekit.rubrics.prompt.PromptRubric`'s other settings, as the
            sidecar YAML names them: ``input_columns``, ``optional_columns``, ``values``,
            ``system``, ``default_batch_size``, ``label_column``, ``tie_rule``,
            ``description``, ``format_reminder``, ``score_marker``.

    Raises:
        ValueError: If the file is missing or empty, a placeholder cannot be filled, or a
            parameter is invalid.
    """
    prompt = Path(path)
    if not prompt.is_file():
        raise ValueError(f"{prompt}: prompt file not found")
    unknown = sorted(set(settings) - set(_PASSED_ON))
    if unknown:
        raise ValueError(f"{prompt}: unknown setting(s) {unknown}; known: {', '.join(_PASSED_ON)}")
    return _from_template(
        read_prompt(prompt),
        prompt_file=prompt,
        variants=read_variants(prompt, None, prompt),
        name=name,
        format=format_spec(output_format, str(prompt)),
        scale=scale,
        columns=column_map or {},
        criteria=criteria,
        **settings,
    )
