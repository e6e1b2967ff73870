"""Output formats: one module per format, a registry keyed by name, and reading replies.

A rubric names its format in ``config.yaml`` (``output_format: id_score_lines``);
:func:`get_format` returns that format's :class:`FormatSpec` (reader, schema, token guess,
single or batched, logprob anchor, templates). :func:`parse_reply` is the one entry point that
reads a reply: it handles what every format shares (a provider refusal, reasoning blocks,
full-width digits, echoes of the request, truncation) and hands the answer to the format's
reader. Every leniency used is named in ``ParsedReply.tolerances`` (see
:data:`TOLERANCE_DESCRIPTIONS`); a reply that cannot be read is recorded with a status and the
raw text, never given a number. ``docs/parsing.md`` states the rules in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgekit.formats import (  # noqa: F401 (importing a format's module registers it)
    direct_scoring_json,
    id_score_lines,
    pair_arena,
    pair_mtbench,
    pair_output_ab,
    pair_rating,
    rating_json,
    score_line,
)
from judgekit.formats.common import TRUNCATION_HINT, clean_text, looks_truncated
from judgekit.formats.direct_scoring_json import OVERALL_TOLERANCE
from judgekit.formats.logprobs import expected_score, expected_scores_by_id
from judgekit.formats.markers import DEFAULT_MARKER, ScoreMarker, parse_marker
from judgekit.formats.reply import (
    TRUNCATED,
    UNCLOSED_REASONING,
    Echoes,
    ReplyInput,
    strip_reasoning,
    unify_fullwidth,
)
from judgekit.formats.spec import FormatSpec, format_names, get_format, register
from judgekit.formats.tolerances import TOLERANCE_DESCRIPTIONS, ToleranceLog
from judgekit.types import (
    ChatReply,
    ChatRequest,
    Criterion,
    ItemVerdict,
    OutputFormat,
    ParsedReply,
    Scale,
    Status,
)


def parse_reply(
    text: str,
    *,
    output_format: OutputFormat | FormatSpec,
    scale: Scale,
    item_ids: Sequence[str],
    criteria: Sequence[Criterion] = (),
    request: ChatRequest | None = None,
    reply: ChatReply | None = None,
    score_marker: str | None = None,
) -> ParsedReply:
    """Read a judge's reply (plain text or the format's JSON form) against the expected IDs.

    Args:
        text: The reply's content exactly as received.
        output_format: The format's name, or its spec (a rubric passes the one it holds, so
            nothing is looked up); selects the reader.
        scale: The rubric's scale (allowed scores and abstain values).
        item_ids: The IDs the request expected, in order (exactly one for single-item formats).
        criteria: The rubric's criteria; required for ``direct_scoring_json``.
        request: The request that was sent; lines copied from its items or its format
            example cannot score an item. Without it no echo is detected.
        reply: The whole reply, for its ``refusal`` and ``finish_reason``.
        score_marker: How the prompt asked for the score (``"Rating: [[N]]"``); ``score_line``
            reads it wherever a careful reader takes it as the verdict. ``None``: the
            format's own (``SCORE: N``).

    Returns:
        One verdict per expected ID in ``item_ids`` order, then one UNKNOWN_ID verdict per
        foreign ID, and the tolerances used.

    Raises:
        ValueError: For caller errors: an unknown format, no or repeated IDs, several IDs for a
            single-item format, missing criteria for direct scoring, or a bad score marker.
    """
    spec = get_format(output_format) if isinstance(output_format, str) else output_format
    if not item_ids or len(set(item_ids)) != len(item_ids):
        raise ValueError(f"item_ids must be non-empty and unique, got {list(item_ids)}")
    if not spec.batched and len(item_ids) != 1:
        raise ValueError(f"{spec.name} judges one item per reply, got {len(item_ids)} IDs")
    marker = DEFAULT_MARKER if score_marker is None else parse_marker(score_marker)
    log = ToleranceLog()
    if reply is not None and reply.refusal and not text.strip():
        reason = f"the provider returned a refusal: {reply.refusal}"
        verdicts = [ItemVerdict.unscored(i, Status.REFUSED, reason) for i in item_ids]
        return ParsedReply(tuple(verdicts), ())
    answer, left_open = strip_reasoning(unify_fullwidth(clean_text(text, log), log), log)
    truncated = reply is not None and reply.finish_reason == "length"
    if left_open and not answer.strip():
        verdicts = [
            ItemVerdict.unscored(i, Status.UNPARSEABLE, UNCLOSED_REASONING, text) for i in item_ids
        ]
    else:
        prepared = ReplyInput(
            answer, scale, tuple(item_ids), tuple(criteria), Echoes.from_request(request),
            truncated, log, marker,
        )  # fmt: skip
        verdicts = list(spec.parse(prepared))
    if truncated:
        verdicts = [_truncated(v) for v in verdicts]
    return ParsedReply(tuple(verdicts), log.as_tuple())


def _truncated(verdict: ItemVerdict) -> ItemVerdict:
    """A row the cut-off reply never reached is MISSING with the reason "truncated"."""
    if verdict.status not in (Status.MISSING, Status.UNPARSEABLE):
        return verdict
    return ItemVerdict.unscored(verdict.item_id, Status.MISSING, TRUNCATED, verdict.raw)


__all__ = [
    "DEFAULT_MARKER",
    "OVERALL_TOLERANCE",
    "TOLERANCE_DESCRIPTIONS",
    "TRUNCATION_HINT",
    "FormatSpec",
    "ScoreMarker",
    "expected_score",
    "expected_scores_by_id",
    "format_names",
    "get_format",
    "looks_truncated",
    "parse_marker",
    "parse_reply",
    "register",
]
