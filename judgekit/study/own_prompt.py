"""A researcher's own prompt on the command line: loading it, checking it, saying what is added.

``--rubric`` takes a packaged name, a rubric folder or a prompt file
(:func:`judgekit.rubrics.load_rubric`); ``--column-map`` names the column of a placeholder and
``--format-reminder`` overrides the rubric's ``format_reminder``. Before any call, a placeholder
without a column is one line, and :func:`prompt_notice` says whose prompt is sent and what, if
anything, judgekit adds to it (the dry run's first line and a run's first line on stderr).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgekit.data.columns import TABLE_COLUMNS
from judgekit.engine import JudgeOptions
from judgekit.rubrics import JinjaRubric, PromptRubric, load_rubric
from judgekit.rubrics.loader import FolderRubric
from judgekit.types import JudgeClient, Rubric, UsageError


def load_any_rubric(
    spec: str, column_map: Sequence[str], format_reminder: bool | None, option: str = "--rubric"
) -> JinjaRubric:
    """The packaged rubric, rubric folder or prompt file ``spec``, with the CLI's overrides.

    ``--column-map`` pairs map a prompt's placeholders (``question=Question``); the pairs
    :func:`header_pairs` leaves to the items table (``model=Model``) are not the rubric's.

    Raises:
        UsageError: One line naming what to fix.
    """
    pairs = [pair.partition("=") for pair in column_map]
    bad = next(
        (p for p, (_, eq, column) in zip(column_map, pairs, strict=True) if not eq or not column),
        None,
    )
    if bad is not None:
        raise UsageError(f"--column-map {bad!r}: write PLACEHOLDER=COLUMN, e.g. question=Question")
    params: dict[str, object] = {}
    if format_reminder is not None:
        params["format_reminder"] = format_reminder
    rubric = _load(spec, params, option)
    if not isinstance(rubric, PromptRubric):
        return rubric
    headers = set(header_pairs(rubric, column_map))
    slots = {
        name.strip(" {}"): column.strip()
        for pair, (name, _, column) in zip(column_map, pairs, strict=True)
        if pair not in headers
    }
    return _load(spec, params | {"column_map": slots}, option) if slots else rubric


def _load(spec: str, params: dict[str, object], option: str) -> JinjaRubric:
    try:
        return load_rubric(spec, **params)
    except ValueError as error:
        raise UsageError(f"{option}: {' '.join(str(error).split())}") from None


def header_pairs(rubric: JinjaRubric, column_map: Sequence[str]) -> tuple[str, ...]:
    """The ``--column-map`` pairs that rename a header of the items table.

    For a packaged rubric or a rubric folder every pair does (``HEADER=COLUMN``); for a
    prompt file a pair does when it names no placeholder and a column judgekit reads
    (:data:`~judgekit.data.columns.TABLE_COLUMNS`, e.g. ``model=Model``).
    """
    if not isinstance(rubric, PromptRubric):
        return tuple(column_map)
    names = set(rubric.template.names)
    return tuple(
        pair
        for pair in column_map
        if (split := pair.partition("="))[0].strip(" {}") not in names
        and split[2].strip() in TABLE_COLUMNS
    )


def check_placeholders(rubric: PromptRubric, headers: Sequence[str], items: Path) -> None:
    """Refuse a prompt whose required placeholders have no column, before any call.

    Raises:
        UsageError: Naming the placeholder, its line, the column it needs and how to map it.
    """
    for slot, column in rubric.columns.items():
        if column not in headers and column in rubric.required_columns:
            raise UsageError(
                f"{rubric.template.source}, line {rubric.template.line_of(slot)}: placeholder "
                f"{slot!r} needs a column {column!r}, which {items.name} does not have (it has "
                f"{', '.join(headers)}); map it with --column-map {slot}=COLUMN"
            )


def prompt_notice(rubric: Rubric, client: JudgeClient, options: JudgeOptions) -> str:
    """One line: whose prompt is sent, what judgekit adds to it, and structured output."""
    structured = options.settings(client, rubric).structured
    mode = client.structured_mode
    enforced = STRUCTURED_REQUEST.get(mode, "")
    preset = getattr(getattr(client, "preset", None), "name", "this endpoint")
    if isinstance(rubric, FolderRubric):
        line = f"prompt: rubric folder {rubric.template_folder} as its templates render; "
        line += f"judgekit adds {'; '.join(rubric.additions(structured))}"
        return f"{line}; structured: {enforced} (preset {preset})" if structured else line
    if not isinstance(rubric, PromptRubric):
        if not structured:
            return f"prompt: judgekit's rubric {rubric.name}, plain text"
        return (
            f"prompt: judgekit's rubric {rubric.name}, structured: its format block in JSON "
            f"form and {enforced} (preset {preset})"
        )
    added = rubric.additions(structured)
    line = f"prompt: {rubric.template.source} sent as written; judgekit adds "
    line += "; ".join(added) if added else "nothing"
    if structured:
        return f"{line}; the endpoint enforces the schema with {enforced}"
    if enforced:
        line += f"; preset {preset}'s structured output ({enforced}) is not used: plain text"
    return line


#: What each structured mode adds to a request.
STRUCTURED_REQUEST = {
    "json_schema": "response_format (json_schema)",
    "guided_json": "extra_body.guided_json",
    "json_object_schema": "response_format (json_object with the schema)",
}
