"""What the pairwise verdict formats share: reading a verdict token only when it is unambiguous.

A pairwise reply's score is a *signed preference for the answer shown first*: positive = the
first answer (A) is better, negative = the second (B), 0 = a tie; the five-level format uses
±2 for "much better". ``details["verdict"]`` holds ``"a"``, ``"b"`` or ``"tie"`` (still in the
order shown; :func:`judgekit.data.pairwise.unswap` maps it back to the original A/B).

A token is the judge's verdict only when nothing says otherwise:

* a token on a line that lists two or more different tokens is a quoted list of options
  (``"[[A]]" if assistant A is better, "[[B]]" if ...``), never a verdict;
* a token followed by ``if`` / ``when`` / ``for a tie`` / ``means`` states a rule, not a verdict;
* a line copied from the request's instructions or an item's text is an echo
  (tolerance ``echoed_text_ignored``).

The remaining tokens must all name one value: different values make the item INCONSISTENT
(every value kept in ``details``), none makes it UNPARSEABLE with the reason (never "the first
token wins", which is how a quoted instruction becomes an A). The JSON form
``{"explanation": "...", "verdict": "<label>"}`` is read for structured outputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from judgekit.formats.reply import ReplyInput, normalise_line
from judgekit.formats.schemas import closed_object
from judgekit.types import ItemVerdict, Status

_RULE_AFTER = re.compile(
    r"[\s\"'`*)\]]*(?:if|when|for\s+(?:a\s+)?tie|means|indicates|denotes|=\s*assistant)\b",
    re.IGNORECASE,
)
#: The registered formats that read a verdict between two answers (a pairwise rubric's).
PAIRWISE_FORMATS = frozenset({"pair_mtbench", "pair_arena", "pair_output_ab", "pair_rating"})
#: The longest explanation kept as the verdict's reason (the reply stays in ``raw``).
_REASON_CHARS = 2000


@dataclass(frozen=True)
class Token:
    """One verdict token found in a reply."""

    value: float
    raw: str
    start: int
    end: int


def find_tokens(
    text: str, pattern: re.Pattern[str], value_of: Callable[[re.Match[str]], float | None]
) -> list[Token]:
    """Every match of ``pattern`` whose label ``value_of`` knows, in reply order."""
    found = []
    for match in pattern.finditer(text):
        value = value_of(match)
        if value is not None:
            found.append(Token(value, match.group(0), match.start(), match.end()))
    return found


def _line_of(text: str, token: Token) -> str:
    start = text.rfind("\n", 0, token.start) + 1
    end = text.find("\n", token.end)
    return text[start : len(text) if end < 0 else end]


def own_tokens(reply: ReplyInput, tokens: list[Token]) -> tuple[list[Token], list[str]]:
    """The tokens that are the judge's own verdicts, and why each other one was set aside."""
    text = reply.text
    by_line: dict[str, set[float]] = {}
    for token in tokens:
        by_line.setdefault(_line_of(text, token), set()).add(token.value)
    kept: list[Token] = []
    set_aside: list[str] = []
    for token in tokens:
        line = _line_of(text, token)
        collapsed = normalise_line(line)
        if len(by_line[line]) > 1:
            set_aside.append(
                f"{token.raw!r} shares its line with a different verdict (a list of options "
                "or a change of mind)"
            )
        elif _RULE_AFTER.match(text, token.end):
            set_aside.append(f"{token.raw!r} states a rule ('... if ...'), not a verdict")
        elif len(collapsed) > len(token.raw) + 3 and (
            collapsed in reply.echoes.instructions or reply.echoes.has_line(line)
        ):
            reply.log.add("echoed_text_ignored")
            set_aside.append(f"{token.raw!r} is on a line copied from the request")
        else:
            kept.append(token)
    return kept, set_aside


def verdict_label(preference: float) -> str:
    """``"a"``, ``"b"`` or ``"tie"`` for a signed preference (in the order shown)."""
    return "a" if preference > 0 else "b" if preference < 0 else "tie"


def read_verdict(
    reply: ReplyInput,
    pattern: re.Pattern[str],
    value_of: Callable[[re.Match[str]], float | None],
    labels: Mapping[str, float],
    expected: str,
) -> tuple[ItemVerdict, ...]:
    """One item's verdict from its tokens (or the JSON form), or a status with the reason.

    Args:
        reply: The prepared reply (one expected ID).
        pattern: The verdict token's regular expression.
        value_of: The signed preference of a match (``None``: not a verdict label).
        labels: The JSON form's labels (case-folded) and their preferences.
        expected: What the prompt asked for, for the UNPARSEABLE reason.
    """
    (item_id,) = reply.item_ids
    from_json = _json_verdict(reply.text, labels)
    if from_json is not None:
        return (from_json(item_id),)
    kept, set_aside = own_tokens(reply, find_tokens(reply.text, pattern, value_of))
    values = sorted({t.value for t in kept}, reverse=True)
    if not values:
        why = "; ".join(dict.fromkeys(set_aside)) or f"no {expected} in the reply"
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, why, reply.text),)
    if len(values) > 1:
        shown = ", ".join(dict.fromkeys(t.raw for t in kept))
        reason = f"the reply gives different verdicts ({shown}); none is chosen"
        raw = "\n".join(t.raw for t in kept)
        return (ItemVerdict.unscored(item_id, Status.INCONSISTENT, reason, raw, values=values),)
    last = kept[-1]
    explanation = reply.text[: kept[0].start].strip()[-_REASON_CHARS:]
    verdict = ItemVerdict(
        item_id, Status.OK, score=values[0], reason=explanation, raw=last.raw,
        details={"verdict": verdict_label(values[0])},
    )  # fmt: skip
    return (verdict,)


def _json_verdict(text: str, labels: Mapping[str, float]) -> Callable[[str], ItemVerdict] | None:
    """The structured form ``{"explanation", "verdict"}`` when the whole reply is one."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or "verdict" not in value:
        return None
    label = str(value["verdict"]).strip().strip("[]").casefold()
    reason = str(value.get("explanation", ""))
    lookup = {k.casefold(): v for k, v in labels.items()}
    if label not in lookup:
        problem = f"the verdict {value['verdict']!r} is not one of {', '.join(labels)}"
        return lambda i: ItemVerdict.unscored(i, Status.UNPARSEABLE, problem, stripped)
    preference = lookup[label]
    return lambda i: ItemVerdict(
        i, Status.OK, score=preference, reason=reason, raw=stripped,
        details={"verdict": verdict_label(preference)},
    )  # fmt: skip


def verdict_schema(labels: Mapping[str, float]) -> dict[str, object]:
    """``{"explanation", "verdict"}`` with the verdict one of the format's labels."""
    return closed_object(
        {"explanation": {"type": "string"}, "verdict": {"type": "string", "enum": list(labels)}}
    )
