"""A rubric judgekit knows only from ``judgekit import``: its name, scale and output format.

The judgments were made elsewhere, with a prompt judgekit never sent, so an
:class:`ImportedRubric` carries what the import recorded and nothing it would have to invent:
the analyses read its :attr:`~JinjaRubric.scale`; rendering a prompt (re-judging, the
batch-size probe, ``rubrics show``-style display) is refused in one line, and
:meth:`ImportedRubric.system_prompt` is empty (the text judgekit sent: none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from judgekit.formats import FormatSpec, get_format
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import Item, Scale, UsageError

#: The ``output_format`` of an import that took the source's scores as given.
AS_GIVEN = "imported_scores"


def _no_replies(*_: Any) -> NoReturn:
    raise UsageError(f"output format {AS_GIVEN!r}: the import took the scores as given")


_AS_GIVEN_SPEC = FormatSpec(
    name=AS_GIVEN, batched=False, completion_tokens_per_item=0, parse=_no_replies,
    schema=_no_replies, logprob_anchor="none",
)  # fmt: skip


class ImportedRubric(JinjaRubric):
    """The rubric of judgments imported from another tool (no prompt sent by judgekit).

    Attributes:
        adapter: The ``--from`` adapter that read the judgments (``fastchat-single``, ...).
        imported: Always ``True``: what tells an imported rubric from one judgekit judged with.

    >>> from judgekit.types import Scale
    >>> rubric = ImportedRubric(name="mt_bench", scale=Scale(tuple(range(1, 11))),
    ...                         adapter="fastchat-single")
    >>> rubric.output_format, rubric.scale.maximum, rubric.system_prompt()
    ('imported_scores', 10, '')
    """

    imported = True

    def __init__(
        self,
        *,
        name: str,
        scale: Scale,
        adapter: str,
        output_format: str = "",
        score_marker: str | None = None,
    ) -> None:
        """Record the import's scale and, when it read replies with ``--format``, the format."""
        spec = get_format(output_format) if output_format else _AS_GIVEN_SPEC
        super().__init__(
            name=name, format=spec, scale=scale, default_batch_size=1, input_columns=(),
            description=f"imported with `judgekit import --from {adapter}`; "
            "judged elsewhere with a prompt judgekit did not send",
            score_marker=score_marker if spec.name == "score_line" else None,
        )  # fmt: skip
        self.adapter = adapter

    def __repr__(self) -> str:
        return f"ImportedRubric({self.name!r}, from {self.adapter}, scale={self.scale.describe()})"

    def _refuse(self) -> NoReturn:
        raise UsageError(
            f"rubric {self.name!r} was imported (judgekit import --from {self.adapter}): "
            "judgekit has no prompt of it to send or show; judge with --rubric FILE_OR_FOLDER"
        )

    def system_prompt(self, variant: str = "base", *, structured: bool = False) -> str:
        """The instructions judgekit sent: none, so ``""`` (hashes of it say so alike)."""
        return ""

    def render(
        self,
        items: Sequence[Item],
        *,
        variant: str = "base",
        structured: bool = False,
        batch_label: str = "",
    ) -> list[dict[str, str]]:
        """Refused: there is no prompt to render.

        Raises:
            UsageError: Always (one line naming the rubric and the import).
        """
        self._refuse()

    def items_message(
        self, items: Sequence[Item], *, structured: bool, batch_label: str, reminder: bool
    ) -> str:
        """Refused, as :meth:`render`.

        Raises:
            UsageError: Always.
        """
        self._refuse()
