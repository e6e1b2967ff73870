"""The :class:`JinjaRubric`: a scoring instrument rendered from Jinja2 templates.

A rubric's system message (the instructions) depends only on the variant and on whether the
reply is schema-enforced, so it is identical for every batch of a run and providers can cache
it. The user message holds the batch header, the items wrapped in escaped ``<item>`` blocks
and a closing line that restates how many rows the reply must contain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from judgekit.formats import DEFAULT_MARKER, FormatSpec, parse_marker, parse_reply
from judgekit.rubrics.environment import environment, tidy
from judgekit.types import (
    ChatReply,
    ChatRequest,
    Criterion,
    Item,
    OutputFormat,
    ParsedReply,
    Scale,
)

#: Example IDs used in every output-format illustration.
EXAMPLE_IDS: tuple[str, ...] = ("17", "18", "19")


def _one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def default_output_example(scale: Scale) -> list[str]:
    """Three illustrative ``ID,score`` lines: the top, the bottom and the middle of the scale."""
    values = scale.allowed
    scores = (values[-1], values[0], values[len(values) // 2])
    return [f"{item_id},{score}" for item_id, score in zip(EXAMPLE_IDS, scores, strict=True)]


class JinjaRubric:
    """A rubric whose prompts come from the package's templates or from a user's prompt file.

    Attributes:
        name: Rubric name (the folder name for packaged rubrics).
        description: One-paragraph description of what the rubric measures.
        format: How the judge must answer: the output format's spec, found by name once
            when the rubric loads (the engine reads it here, never in the registry).
        scale: Allowed scores and abstain values.
        default_batch_size: Items per request when the caller does not choose (1 if single).
        input_columns: Canonical columns shown to the judge, in the order the prompt presents
            them (the ID is the ``<item id>`` attribute, not a column).
        required_columns: The input columns every item must carry.
        optional_columns: Input columns rendered only when an item has non-blank text in them.
        variants: ``"base"`` plus the paraphrase variants.
        tie_rule: What the prompt says to do between two scores (``"lower"`` where the seed
            says so).
        label_column: Default name of the human label column for agreement statistics.
        seed: The rubric document this rubric restates.
        criteria: Weighted criteria (direct scoring only).
        score_marker: How the prompt asks for the score (``"Rating: [[N]]"``, ``score_line``
            only; ``None``: ``SCORE: N``); the reader reads that marker (``docs/parsing.md``).
        template_data: Data the templates render (anchors, examples, ...), from the folder's
            YAML files.
        template_folder: A user's rubric folder holding ``variants/`` (``None`` = packaged).
        format_reminder: Re-asks end with a short reminder naming what was wrong.
        verbatim: Whether the prompt is the researcher's own text, sent as written (then the
            engine keeps it plain text unless structured output is asked for).
    """

    verbatim = False

    def __init__(
        self,
        *,
        name: str,
        format: FormatSpec,
        scale: Scale,
        default_batch_size: int,
        input_columns: Sequence[str],
        optional_columns: Sequence[str] = (),
        variants: Sequence[str] = ("base",),
        tie_rule: str = "lower",
        label_column: str = "Human_Score",
        description: str = "",
        seed: str = "",
        criteria: Sequence[Criterion] = (),
        template_data: Mapping[str, Any] | None = None,
        template_folder: Path | None = None,
        format_reminder: bool = True,
        score_marker: str | None = None,
    ) -> None:
        unknown_optional = sorted(set(optional_columns) - set(input_columns))
        if unknown_optional:
            raise ValueError(f"rubric {name}: optional columns {unknown_optional} not in inputs")
        if default_batch_size < 1 or (not format.batched and default_batch_size != 1):
            raise ValueError(f"rubric {name}: bad default batch size {default_batch_size}")
        if "base" not in variants:
            raise ValueError(f"rubric {name}: the variants must include 'base'")
        if score_marker is not None and format.name != "score_line":
            raise ValueError(
                f"rubric {name}: score_marker is read by output_format score_line, not "
                f"{format.name}"
            )
        self.marker = DEFAULT_MARKER if score_marker is None else parse_marker(score_marker)
        self.score_marker = score_marker
        self.name = name
        self.format = format
        self.scale = scale
        self.default_batch_size = default_batch_size
        self.input_columns = tuple(input_columns)
        self.optional_columns = tuple(optional_columns)
        self.required_columns = tuple(c for c in self.input_columns if c not in optional_columns)
        self.variants = tuple(variants)
        self.tie_rule = tie_rule
        self.label_column = label_column
        self.description = description
        self.seed = seed
        self.criteria = tuple(criteria)
        self.template_folder = template_folder
        self.format_reminder = format_reminder
        self.template_data = dict(template_data or {})
        self._system_cache: dict[tuple[str, bool], str] = {}

    def __repr__(self) -> str:
        return f"JinjaRubric({self.name!r}, {self.output_format}, scale={self.scale.allowed})"

    @property
    def output_format(self) -> OutputFormat:
        """The format's name, as ``config.yaml`` gives it."""
        return self.format.name

    @property
    def batched(self) -> bool:
        """Whether several items go in one request: the format's fact, never the rubric's."""
        return self.format.batched

    def environment(self) -> jinja2.Environment:
        """The templates this rubric renders: its own, the packaged ones, its format's."""
        return environment(self.name, self.template_folder, self.format.template_dir)

    def columns_for(self, available: Iterable[str]) -> tuple[str, ...]:
        """The input columns to read from a table with these columns, in the rubric's order.

        Required columns are always included (so a missing one fails loudly downstream);
        optional ones only when the table has them.
        """
        present = set(available)
        return tuple(c for c in self.input_columns if c in self.required_columns or c in present)

    def template_context(self, structured: bool) -> dict[str, Any]:
        """Variables every template sees (data, scale, criteria, columns, output form)."""
        return {
            **self.template_data,
            "rubric_name": self.name,
            "output_format": self.output_format,
            "format_template": self.format.templates[0],
            "reminder_template": self.format.templates[1],
            "scale": self.scale,
            "scale_values": ", ".join(str(v) for v in self.scale.allowed),
            "score_marker": self.marker,
            "abstain_values": ", ".join(str(v) for v in self.scale.abstain),
            "batched": self.batched,
            "criteria": self.criteria,
            "columns": self.input_columns,
            "structured": structured,
            "example_ids": EXAMPLE_IDS,
            "output_example": self.template_data.get("output_example")
            or default_output_example(self.scale),
        }

    def system_prompt(self, variant: str = "base", *, structured: bool = False) -> str:
        """The instructions for ``variant``; the same text for every batch of a run."""
        if variant not in self.variants:
            raise ValueError(
                f"rubric {self.name} has no variant {variant!r}; choose from {self.variants}"
            )
        key = (variant, structured)
        if key not in self._system_cache:
            env = self.environment()
            template = env.get_template(f"{self.name}/variants/{variant}.j2")
            self._system_cache[key] = tidy(template.render(self.template_context(structured)))
        return self._system_cache[key]

    def _item_view(self, item: Item) -> dict[str, Any]:
        """The item's ID and the text of each column it shows, checked against the rubric."""
        item_id = item.id
        if not isinstance(item_id, str) or not item_id.strip() or item_id != item_id.strip():
            raise ValueError(f"rubric {self.name}: item ID {item_id!r} must be non-blank text")
        if "\n" in item_id or "\r" in item_id or "," in item_id:
            raise ValueError(
                f"rubric {self.name}: item ID {item_id!r} cannot contain a comma or a line break"
            )
        fields: dict[str, str] = {}
        for column in self.input_columns:
            value = item.fields.get(column)
            if value is None:
                if column in self.optional_columns:
                    continue
                raise ValueError(
                    f"rubric {self.name}: item {item_id} has no {column!r} column "
                    f"(required: {', '.join(self.required_columns)})"
                )
            if not isinstance(value, str):
                raise ValueError(
                    f"rubric {self.name}: item {item_id} column {column!r} must be text, "
                    f"got {type(value).__name__}"
                )
            if column in self.optional_columns and not value.strip():
                continue
            fields[column] = value
        return {"id": item_id, "fields": fields}

    def render(
        self,
        items: Sequence[Item],
        *,
        variant: str = "base",
        structured: bool = False,
        batch_label: str = "",
    ) -> list[dict[str, str]]:
        """Return ``[system, user]`` messages for one batch (exactly one item if not batched).

        Args:
            items: The items of this batch, in the order the judge sees them.
            variant: ``"base"`` or a paraphrase variant.
            structured: Describe the JSON form of the output format instead of the plain one.
            batch_label: The batch's row range, e.g. ``"rows 61-120"``; defaults to
                ``"rows 1-N"``.

        Raises:
            ValueError: On an unknown variant, an empty batch, several items for a single-item
                rubric, a duplicate or malformed ID, or a missing required column.
        """
        user = self.items_message(
            items, structured=structured, batch_label=batch_label, reminder=True
        )
        system = self.system_prompt(variant, structured=structured)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def items_message(
        self, items: Sequence[Item], *, structured: bool, batch_label: str, reminder: bool
    ) -> str:
        """The user message: the batch header, one ``<item>`` block per item, the reminder.

        Raises:
            ValueError: As :meth:`render`.
        """
        if not items:
            raise ValueError(f"rubric {self.name}: cannot render an empty batch")
        if not self.batched and len(items) != 1:
            raise ValueError(f"rubric {self.name} judges one item per request, got {len(items)}")
        views = [self._item_view(item) for item in items]
        ids = [view["id"] for view in views]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"rubric {self.name}: duplicate item IDs in one batch: {duplicates}")
        context = self.template_context(structured)
        context.update(
            items=views,
            ids=ids,
            count=len(views),
            batch_label=batch_label or f"rows 1-{len(views)}",
            reminder=reminder,
        )
        template = self.environment().get_template("common/user.j2")
        return template.render(context).rstrip()

    def additions(self, structured: bool) -> tuple[str, ...]:
        """What judgekit adds to the rubric's own text (none: a packaged prompt is ours)."""
        return ()

    def reask_hint(self, failed: Mapping[str, str]) -> str | None:
        """The line ending a re-ask: what was wrong with each row's reply (``None`` = no hint).

        Args:
            failed: The reason each re-asked item's last reply could not be used, by ID.
        """
        if not self.format_reminder or not failed:
            return None
        reasons = [f"{item_id}: {_one_line(reason)}" for item_id, reason in failed.items()]
        if not self.batched:
            return (
                f"Your previous reply could not be used: {_one_line(next(iter(failed.values())))}."
            )
        shown = "; ".join(reasons[:3]) + (
            f"; and {len(reasons) - 3} more" if len(reasons) > 3 else ""
        )
        return f"Your previous reply could not be used for these rows ({shown})."

    def shown_texts(self, items: Sequence[Item]) -> tuple[str, ...]:
        """Per item, the text :meth:`render` shows the judge: its shown columns, one per line.

        The engine puts these in :attr:`ChatRequest.shown`, so the reader knows what the judge
        was shown without parsing the rendered messages.
        """
        return tuple("\n".join(self._item_view(item)["fields"].values()) for item in items)

    def response_schema(self, item_ids: Sequence[str]) -> dict[str, Any]:
        """JSON schema of a valid reply for these IDs (IDs and scores as enums)."""
        return self.format.schema(self.scale, item_ids, self.criteria)

    def parse(
        self,
        text: str,
        item_ids: Sequence[str],
        *,
        request: ChatRequest | None = None,
        reply: ChatReply | None = None,
    ) -> ParsedReply:
        """Read a reply against the expected IDs via :func:`judgekit.formats.parse_reply`."""
        return parse_reply(
            text,
            output_format=self.format,
            scale=self.scale,
            item_ids=item_ids,
            criteria=self.criteria,
            request=request,
            reply=reply,
            score_marker=self.score_marker,
        )
