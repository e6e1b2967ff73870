"""Build rubrics: packaged ones by name, a user's rubric folder, or a user's own prompt file.

``load_rubric`` takes what ``judgekit judge --rubric`` takes: a packaged name
(``riddle_accuracy``), a rubric folder (``config.yaml`` plus Jinja2 templates under
``variants/``, laid out as the packaged ones, or ``prompt: FILE`` for a prompt file with its
settings), or a prompt file (``.txt``, ``.md``, ...) whose few settings sit in a YAML file of
the same name beside it (``my_prompt.yaml``). The settings
(:data:`~judgekit.rubrics.prompt_file.PROMPT_KEYS`) are the ones a prompt cannot carry: how
the judge answers (which decides whether items are batched), the scale, which column fills
each placeholder, the label column.

A user's rubric folder is a :class:`FolderRubric`: its templates are sent as they render, with
judgekit's user message holding the items; the format's reminder closes that message only with
``format_reminder: true`` (a user's template states its own format; judgekit's reminder line
would contradict one that asks for another), and :meth:`FolderRubric.additions` says all of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.rubrics.base import JinjaRubric
from judgekit.rubrics.criteria import common_scale, validate_criteria
from judgekit.rubrics.environment import RUBRICS_DIR, tidy
from judgekit.rubrics.prompt_file import prompt_rubric
from judgekit.rubrics.settings import NAME_PATTERN, read_yaml, scale_from_config, shared_settings
from judgekit.types import Criterion, Item

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
_OVERRIDABLE = {"label_column", "default_batch_size"}


#: The user message judgekit adds to a rubric folder's prompt, in words.
ITEMS_MESSAGE = "a user message holding the items (a header line, one <item> block each)"


class FolderRubric(JinjaRubric):
    """A user's rubric folder: its own templates, judgekit's items message, a reminder if asked."""

    def render(
        self,
        items: Sequence[Item],
        *,
        variant: str = "base",
        structured: bool = False,
        batch_label: str = "",
    ) -> list[dict[str, str]]:
        """``[system, user]``: the folder's template, then the items (and the reminder if set).

        Raises:
            ValueError: As :meth:`JinjaRubric.render`.
        """
        user = self.items_message(
            items, structured=structured, batch_label=batch_label, reminder=self.format_reminder
        )
        system = self.system_prompt(variant, structured=structured)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def additions(self, structured: bool) -> tuple[str, ...]:
        """What judgekit adds to the folder's text, in words."""
        added = [ITEMS_MESSAGE]
        block = self.environment().get_template(self.format.templates[0])
        shown = tidy(block.render(self.template_context(structured))).strip()
        if shown and shown in self.system_prompt(structured=structured):
            added.append(
                f"{self.format.templates[0]} (the format of {self.output_format}), which the "
                "template includes by extending common/system.j2"
            )
        if self.format_reminder:
            added.append(
                f"the reminder of {self.output_format}'s format closing the user message, and "
                "on re-asks a line saying what was wrong with the last reply"
            )
        return tuple(added)


def list_rubrics(kind: str = "direct") -> list[str]:
    """Names of the packaged rubrics of one ``kind`` (``direct`` or ``pairwise``), sorted.

    A rubric's ``config.yaml`` says ``kind: pairwise`` when it compares two answers (see
    ``docs/pairwise.md``); without the key it scores one answer (``direct``).
    """
    configs = sorted(RUBRICS_DIR.glob("*/config.yaml"))
    return [p.parent.name for p in configs if read_yaml(p).get("kind", "direct") == kind]


def _packaged_folder(spec: str | Path) -> Path | None:
    """The packaged rubric ``spec`` names (a name wins over a same-named local folder)."""
    if isinstance(spec, Path) or not NAME_PATTERN.fullmatch(spec):
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
    if isinstance(spec, str) and NAME_PATTERN.fullmatch(spec) and not path.exists():
        raise ValueError(
            f"unknown rubric {spec!r}; available: {', '.join(list_rubrics())}; pairwise: "
            f"{', '.join(list_rubrics('pairwise'))}; or a rubric folder or prompt file"
        )
    if path.is_dir():
        config_path = path / "config.yaml"
        if not config_path.is_file():
            raise ValueError(f"{path}: a rubric folder needs a config.yaml")
        config = read_yaml(config_path)
        if "prompt" in config:
            return prompt_rubric(path / str(config["prompt"]), config, config_path, params)
        return _folder_rubric(path, params, packaged=False)
    if not path.is_file():
        raise ValueError(f"{path}: no such rubric folder or prompt file")
    sidecar = next((s for s in _sidecars(path) if s.is_file()), None)
    config = read_yaml(sidecar) if sidecar is not None else {}
    if "prompt" in config:
        raise ValueError(f"{sidecar}: 'prompt' belongs in a folder's config.yaml, not here")
    return prompt_rubric(path, config, sidecar or _sidecars(path)[0], params)


def _sidecars(prompt: Path) -> tuple[Path, Path]:
    return prompt.with_suffix(".yaml"), prompt.with_suffix(".yml")


def _folder_rubric(folder: Path, params: Mapping[str, Any], *, packaged: bool) -> JinjaRubric:
    path = folder / "config.yaml"
    config = read_yaml(path)
    missing = sorted((_REQUIRED_KEYS if packaged else _USER_FOLDER_KEYS) - set(config))
    if missing:
        raise ValueError(f"{path}: missing keys {missing}")
    name = str(config["name"])
    if packaged and name != folder.name:
        raise ValueError(f"{path}: 'name' is {name!r}, expected {folder.name!r}")
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{path}: name {name!r} must be 1-56 letters, digits, '_' or '-'")
    settings = shared_settings(config, params, path, reminder=packaged)
    examples_path = folder / "examples.yaml"
    data: dict[str, Any] = {"anchors": [], "examples": [], "output_example": None}
    data.update(config.get("template_data") or {})
    if examples_path.is_file():
        data.update(read_yaml(examples_path))
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
        scale = scale_from_config(config, path)
    for variant in config["variants"]:
        if not (folder / "variants" / f"{variant}.j2").is_file():
            raise ValueError(f"{path}: variant {variant!r} has no template variants/{variant}.j2")
    return (JinjaRubric if packaged else FolderRubric)(
        name=name,
        seed=str(config.get("seed", path)),
        scale=scale,
        input_columns=tuple(config["input_columns"]),
        variants=tuple(config["variants"]),
        criteria=criteria,
        template_data=data,
        template_folder=None if packaged else folder,
        **settings,
    )
