"""Reading judge replies: one parser per output format, plus logprob-weighted scores.

:func:`parse_reply` returns one verdict per expected ID (then one per foreign ID) and names
every leniency it needed in ``ParsedReply.tolerances`` (see :data:`TOLERANCE_DESCRIPTIONS`).
A reply that cannot be read is recorded with a status and the raw text, never given a number.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgekit.parsing.common import TRUNCATION_HINT, looks_truncated
from judgekit.parsing.direct_scoring import OVERALL_TOLERANCE, parse_direct_scoring
from judgekit.parsing.id_score_lines import parse_id_score_lines
from judgekit.parsing.logprobs import expected_score, expected_scores_by_id
from judgekit.parsing.rating_json import parse_rating_json
from judgekit.parsing.score_line import parse_score_line
from judgekit.parsing.tolerances import TOLERANCE_DESCRIPTIONS
from judgekit.types import Criterion, OutputFormat, ParsedReply, Scale


def parse_reply(
    text: str,
    *,
    output_format: OutputFormat,
    scale: Scale,
    item_ids: Sequence[str],
    criteria: Sequence[Criterion] = (),
) -> ParsedReply:
    """Read a judge's reply (plain text or the format's JSON form) against the expected IDs.

    Args:
        text: The reply exactly as received.
        output_format: The rubric's output format; selects the parser.
        scale: The rubric's scale (allowed scores and abstain values).
        item_ids: The IDs the batch expected, in batch order (exactly one for single-item
            formats).
        criteria: The rubric's criteria; required for ``direct_scoring_json``.

    Returns:
        One verdict per expected ID in ``item_ids`` order, then one UNKNOWN_ID verdict per
        foreign ID, and the tolerances used.

    Raises:
        ValueError: For caller errors: an unknown format, no or repeated IDs, several IDs for a
            single-item format, or missing criteria for direct scoring.
    """
    if not item_ids or len(set(item_ids)) != len(item_ids):
        raise ValueError(f"item_ids must be non-empty and unique, got {list(item_ids)}")
    if output_format == "id_score_lines":
        return parse_id_score_lines(text, scale, item_ids)
    if output_format == "rating_json":
        return parse_rating_json(text, scale, item_ids)
    if output_format == "direct_scoring_json":
        return parse_direct_scoring(text, item_ids, criteria)
    if output_format == "score_line":
        return parse_score_line(text, scale, item_ids)
    raise ValueError(f"unknown output format {output_format!r}")


__all__ = [
    "OVERALL_TOLERANCE",
    "TOLERANCE_DESCRIPTIONS",
    "TRUNCATION_HINT",
    "expected_score",
    "expected_scores_by_id",
    "looks_truncated",
    "parse_reply",
]
