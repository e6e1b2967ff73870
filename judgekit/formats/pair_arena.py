"""Arena-Hard-Auto's five-level pairwise verdict: ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ...

The score is the signed preference for the answer shown first: ``A>>B`` = 2, ``A>B`` = 1,
``A=B`` = 0, ``B>A`` = -1, ``B>>A`` = -2; the mirrored spellings (``B<A``, ``A<<B``, ``B=A``)
mean the same. Arena-Hard keeps a verdict only when all its tokens agree; so does this reader
(different levels are INCONSISTENT, see :mod:`judgekit.formats.verdicts`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from judgekit.formats.reply import ReplyInput
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.verdicts import read_verdict, verdict_schema
from judgekit.types import Criterion, ItemVerdict, Scale

LABELS = {"A>>B": 2.0, "A>B": 1.0, "A=B": 0.0, "B>A": -1.0, "B>>A": -2.0}
_MIRRORED = {"B<<A": 2.0, "B<A": 1.0, "B=A": 0.0, "A<B": -1.0, "A<<B": -2.0}
_TOKEN = re.compile(r"\[\[\s*([AB]\s*(?:>>|<<|>|<|=)\s*[AB])\s*\]\]")


def _value(match: re.Match[str]) -> float | None:
    label = "".join(match.group(1).split())
    return LABELS.get(label, _MIRRORED.get(label))


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read one five-level verdict token when the reply gives exactly one level as its own."""
    return read_verdict(reply, _TOKEN, _value, LABELS, "[[A>>B]] ... [[B>>A]] verdict")


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "verdict"}`` with the verdict one of the five levels."""
    return verdict_schema(LABELS)


SPEC = register(
    FormatSpec(
        name="pair_arena",
        batched=False,
        completion_tokens_per_item=600,
        parse=parse,
        schema=schema,
        logprob_anchor="none",
    )
)
