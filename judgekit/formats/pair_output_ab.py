"""LLMBar's pairwise verdict (Zeng et al. 2024): the reply names ``Output (a)`` or ``(b)``.

A mention is a verdict when it is the whole line (``Output (a)``, maybe emphasised, not a
heading ending in ``:``) or says so (``Output (b) is better``); a mention reported as someone
else's argument (``argues that Output (a) is better``) or under a condition is not. LLMBar's own
script takes the first of its two patterns that matches anywhere, checking ``(a)`` first, so
``Output (b) is better.`` followed by a line ``Output (a) lacks ...`` reads as (a) there;
here it is (b), and a reply that states both is INCONSISTENT. The score is the signed
preference for the output shown first: (a) = 1, (b) = -1 (this format has no tie).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from judgekit.formats.reply import ReplyInput
from judgekit.formats.spec import FormatSpec, register
from judgekit.formats.verdicts import read_verdict, verdict_schema
from judgekit.types import Criterion, ItemVerdict, Scale

LABELS = {"Output (a)": 1.0, "Output (b)": -1.0}
_TOKEN = re.compile(
    r"(?im)^[ \t#*>_\-]*Output \(([ab])\)[ \t*_.!]*$"
    r"|Output \(([ab])\) is (?:the |clearly |slightly )?better"
)
_REPORTED = re.compile(
    r"(?:argues?|claims?|says?|thinks?|believes?|states?|if|whether|why)\s+(?:that\s+)?$",
    re.IGNORECASE,
)


def _value(match: re.Match[str]) -> float | None:
    before = match.string[max(0, match.start() - 30) : match.start()]
    if _REPORTED.search(before):
        return None
    side = match.group(1) or match.group(2)
    return 1.0 if side.lower() == "a" else -1.0


def parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    """Read ``Output (a)``/``Output (b)`` when the reply states exactly one as its verdict."""
    return read_verdict(reply, _TOKEN, _value, LABELS, "'Output (a)' or 'Output (b)' verdict")


def schema(scale: Scale, item_ids: Sequence[str], criteria: Sequence[Criterion]) -> dict[str, Any]:
    """``{"explanation", "verdict"}`` with the verdict ``Output (a)`` or ``Output (b)``."""
    return verdict_schema(LABELS)


SPEC = register(
    FormatSpec(
        name="pair_output_ab",
        batched=False,
        completion_tokens_per_item=120,
        parse=parse,
        schema=schema,
        logprob_anchor="none",
    )
)
