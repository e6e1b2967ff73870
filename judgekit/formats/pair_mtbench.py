"""MT-Bench's pairwise verdict (Zheng et al. 2023): ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a tie).

The score is the signed preference for the answer shown first: ``[[A]]`` = 1, ``[[C]]`` = 0,
``[[B]]`` = -1 (see :mod:`judgekit.formats.verdicts` for when a token is read). FastChat takes
the first of ``[[A]]``/``[[B]]``/``[[C]]`` found as a substring, so a reply that quotes the
instruction reads as A there; here it is UNPARSEABLE, and two different verdicts are
INCONSISTENT.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from judgekit.formats.reply import ReplyInput
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.verdicts import read_verdict, verdict_schema
from judgekit.types import Criterion, ItemVerdict, Scale

LABELS = {"A": 1.0, "B": -1.0, "C": 0.0}
_TOKEN = re.compile(r"\[\[\s*([ABC])\s*\]\]")


def _value(match: re.Match[str]) -> float | None:
    return LABELS.get(match.group(1))


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read ``[[A]]``/``[[B]]``/``[[C]]`` when the reply gives exactly one of them as its own."""
    return read_verdict(reply, _TOKEN, _value, LABELS, "[[A]], [[B]] or [[C]] verdict")


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "verdict"}`` with the verdict ``A``, ``B`` or ``C``."""
    return verdict_schema(LABELS)


SPEC = register(
    FormatSpec(
        name="pair_mtbench",
        batched=False,
        completion_tokens_per_item=250,
        parse=parse,
        schema=schema,
        logprob_anchor="none",
    )
)
