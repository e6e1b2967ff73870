"""A researcher's own prompt as a rubric, sent as written.

With placeholders (``{question}``, ``{{ answer }}``, ``{{#if context}}…{{/if}}``) the file is
the user message, filled from each item's columns; an optional ``system`` text goes before it.
Without placeholders the file is the system message and judgekit adds the user message that
carries the items (a header line and one ``<item>`` block each), which :meth:`additions` says.
Nothing else is added unless asked: with ``format_reminder`` the format's reminder line closes
the user message and a re-ask ends with a line naming what was wrong; the JSON form of the
output format only when structured output is asked for (the engine keeps a verbatim prompt
plain text by default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judgekit.formats import FormatSpec
from judgekit.rubrics.base import JinjaRubric, _one_line
from judgekit.rubrics.environment import tidy
from judgekit.rubrics.placeholders import PromptTemplate
from judgekit.types import Criterion, Item, Scale


class PromptRubric(JinjaRubric):
    """A rubric whose prompt is a user's file, filled per item and otherwise sent unchanged.

    Attributes:
        template: The file's text and its placeholders.
        columns: The item column each placeholder is filled from.
        values: Fixed text for placeholders that are not columns.
        system: Text of a system message sent before the filled prompt (``""`` = none).
        prompt_file: The file the prompt was read from.
        templates: The prompt of each variant (``base`` is ``template``; the others are its
            paraphrases, ``NAME.VARIANT.txt`` beside it, with the same placeholders).
    """

    verbatim = True

    def __init__(
        self,
        *,
        name: str,
        template: PromptTemplate,
        format: FormatSpec,
        scale: Scale,
        columns: Mapping[str, str],
        input_columns: Sequence[str] = (),
        optional_columns: Sequence[str] = (),
        values: Mapping[str, str] | None = None,
        system: str = "",
        prompt_file: Path | None = None,
        default_batch_size: int | None = None,
        label_column: str = "Human_Score",
        tie_rule: str = "none",
        criteria: Sequence[Criterion] = (),
        description: str = "",
        format_reminder: bool = False,
        score_marker: str | None = None,
        variants: Mapping[str, PromptTemplate] | None = None,
    ) -> None:
        fixed = dict(values or {})
        slots = [name for name in template.names if name not in fixed]
        if template.names and format.batched:
            raise ValueError(
                f"{template.source}: a batched prompt cannot hold item placeholders "
                f"({', '.join(template.names)}); its items are sent in the user message"
            )
        if not template.names and not input_columns:
            raise ValueError(
                f"{template.source}: no placeholders, so list the columns to send (columns: ...)"
            )
        mapped = {slot: columns.get(slot, slot) for slot in slots}
        inputs = tuple(dict.fromkeys([*mapped.values(), *input_columns]))
        optional = {mapped[slot] for slot in template.optional if slot in mapped}
        optional |= set(optional_columns)
        super().__init__(
            name=name,
            format=format,
            scale=scale,
            default_batch_size=default_batch_size or (60 if format.batched else 1),
            input_columns=inputs,
            optional_columns=tuple(c for c in inputs if c in optional),
            tie_rule=tie_rule,
            label_column=label_column,
            description=description or f"User rubric from {template.source}",
            seed=str(prompt_file or template.source),
            criteria=criteria,
            template_data={"anchors": [], "examples": [], "output_example": None},
            format_reminder=format_reminder,
            score_marker=score_marker,
            variants=("base", *(variants or {})),
        )
        self.template = template
        self.templates = {"base": template, **(variants or {})}
        self.columns = mapped
        self.values = fixed
        self.system = system
        self.prompt_file = prompt_file

    def __repr__(self) -> str:
        return f"PromptRubric({self.name!r}, {self.template.source}, {self.output_format})"

    def _format_block(self, structured: bool) -> str:
        block = self.environment().get_template(self.format.templates[0])
        return tidy(block.render(self.template_context(structured)))

    def _reminder(self, item_id: str, structured: bool) -> str:
        template = self.environment().get_template(self.format.templates[1])
        context = self.template_context(structured) | {"ids": [item_id], "count": 1}
        return template.render(context).strip()

    def system_prompt(self, variant: str = "base", *, structured: bool = False) -> str:
        """The system message: ``system`` (or the file, without placeholders) as written.

        With ``structured`` the JSON form of the output format is appended, as the schema
        the endpoint enforces needs the judge to know it.
        """
        if variant not in self.variants:
            raise ValueError(
                f"rubric {self.name} has no variant {variant!r}; choose from {self.variants}"
            )
        text = self.system if self.template.names else self.templates[variant].text
        if structured and (text or not self.template.names):
            return f"{text.rstrip()}\n\n{self._format_block(True)}".lstrip()
        return text

    def render(
        self,
        items: Sequence[Item],
        *,
        variant: str = "base",
        structured: bool = False,
        batch_label: str = "",
    ) -> list[dict[str, str]]:
        """The messages for one batch: the system message if there is one, then the user's.

        Raises:
            ValueError: As :meth:`JinjaRubric.render`; a placeholder without a value (a
                missing column of the item) names the file, line and item.
        """
        system = self.system_prompt(variant, structured=structured)
        if not self.template.names:
            user = self.items_message(
                items, structured=structured, batch_label=batch_label, reminder=self.format_reminder
            )
        else:
            if len(items) != 1:
                raise ValueError(
                    f"rubric {self.name} judges one item per request, got {len(items)}"
                )
            view = self._item_view(items[0])
            filled = {slot: view["fields"].get(column) for slot, column in self.columns.items()}
            template = self.templates[variant]
            user = template.fill({**filled, **self.values}, what=f"item {items[0].id}")
            if structured and not system:
                user = f"{user.rstrip()}\n\n{self._format_block(True)}"
            if self.format_reminder:
                user = f"{user.rstrip()}\n\n{self._reminder(items[0].id, structured)}"
        messages = [{"role": "system", "content": system}] if system else []
        return [*messages, {"role": "user", "content": user}]

    def additions(self, structured: bool) -> tuple[str, ...]:
        """What judgekit adds to the file's text, in words (empty: sent as written)."""
        added = []
        if not self.template.names:
            added.append("a user message holding the items (a header line, one <item> block each)")
        if structured:
            added.append(f"the JSON form of {self.output_format} (structured output)")
        if self.format_reminder:
            added.append(
                f"the reminder of {self.output_format}'s format closing the user message, and "
                "on re-asks a line saying what was wrong with the last reply"
            )
        return tuple(added)

    def reask_hint(self, failed: Mapping[str, str]) -> str | None:
        """The re-ask's last paragraph when ``format_reminder`` is set: what was wrong."""
        if not self.format_reminder or not failed:
            return None
        reasons = "; ".join(dict.fromkeys(_one_line(reason) for reason in failed.values()))
        return (
            f"Your previous reply could not be read: {reasons}. "
            "Answer again, giving the rating exactly as the instructions ask."
        )
