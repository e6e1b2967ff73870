"""Token estimates and plausible ``top_logprobs`` for simulated replies.

Tokenisation is deliberately simple: each digit is its own token (so "10" is "1", "0" and
multi-token scores are exercised), words and runs of whitespace are tokens, any other
character is a token. Prompt tokens are estimated as characters / 4.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

TOKEN_PATTERN = re.compile(r"\d|[^\W\d_]+|\s+|[^\w\s]|_", re.UNICODE)
# Where a score's digits sit in a reply of any format.
SCORE_PATTERN = re.compile(
    r'(?:"(?:score|rating|overallScore)"\s*:\s*|SCORE:\s*|^[^,\n{}"]*,)(-?\d+)', re.MULTILINE
)
FILLER_ALTERNATIVES = (" ", ",", ".", "\n", "the", "a", '"', ":")


def tokenize(text: str) -> list[str]:
    """Split text into the simulator's tokens (their concatenation is the text)."""
    return TOKEN_PATTERN.findall(text)


def prompt_tokens(
    messages: Sequence[Mapping[str, Any]], text_of: Callable[[Mapping[str, Any]], str]
) -> int:
    """Estimate prompt tokens: characters / 4 per message plus 4 per message of framing."""
    return sum(len(text_of(m)) // 4 + 4 for m in messages)


def _value_distribution(value: int, allowed: Sequence[int], confidence: float) -> dict[int, float]:
    """Probability over scale values: ``confidence`` on ``value``, the rest decaying by distance."""
    others = [a for a in allowed if a != value]
    if not others:
        return {value: 1.0}
    if value in allowed:  # neighbours on the scale get more of the remaining mass
        home = allowed.index(value)
        weights = {a: 2.0 ** -abs(allowed.index(a) - home) for a in others}
    else:  # an off-scale value (out_of_range fault): spread the rest evenly
        weights = dict.fromkeys(others, 1.0)
    total = sum(weights.values())
    distribution = {a: (1 - confidence) * w / total for a, w in weights.items()}
    distribution[value] = confidence
    return distribution


def _digit_alternatives(
    value: str, index: int, distribution: Mapping[int, float], terminator: str
) -> dict[str, float]:
    """Probability of the next token after ``value[:index]``, marginalised over values.

    A value that is complete at ``index`` (``1`` after the prefix "1" of "10") continues with
    ``terminator``, the token that follows the number in the reply.
    """
    prefix = value[:index]
    mass: dict[str, float] = defaultdict(float)
    for candidate, probability in distribution.items():
        text = str(candidate)
        if text.startswith(prefix) and len(text) > index:
            mass[text[index]] += probability
        elif text == prefix:
            mass[terminator] += probability
    total = sum(mass.values()) or 1.0
    return {token: p / total for token, p in mass.items()}


def _entry(token: str, logprob: float, alternatives: Mapping[str, float], k: int) -> dict[str, Any]:
    ranked = sorted(alternatives.items(), key=lambda kv: -kv[1])[:k]
    if token not in dict(ranked) and k > 0:
        ranked = [*ranked[: k - 1], (token, math.exp(logprob))]
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode("utf-8")),
        "top_logprobs": [
            {"token": t, "logprob": math.log(max(p, 1e-12)), "bytes": list(t.encode("utf-8"))}
            for t, p in ranked
        ],
    }


def logprobs_content(
    text: str, allowed: Sequence[int], confidence: float, k: int
) -> list[dict[str, Any]]:
    """Per-token logprobs for ``text`` with ``k`` alternatives each.

    Score digits get a distribution centred on the written score (``confidence`` on it, the
    rest spread over neighbouring scale values); other tokens are near-certain.
    """
    # char offset -> (score text, digit index, token after the number)
    score_digits: dict[int, tuple[str, int, str]] = {}
    for found in SCORE_PATTERN.finditer(text):
        digits = found.group(1).lstrip("-")
        start = found.start(1) + (len(found.group(1)) - len(digits))
        terminator = (tokenize(text[found.end(1) :]) or ["\n"])[0]
        # every digit, and the token right after the number (where shorter values end)
        for index in range(len(digits) + 1):
            score_digits[start + index] = (digits, index, terminator)
    content, offset = [], 0
    for token in tokenize(text):
        if offset in score_digits:
            digits, index, terminator = score_digits[offset]
            distribution = _value_distribution(int(digits), list(allowed), confidence)
            alternatives = _digit_alternatives(digits, index, distribution, terminator)
            probability = alternatives.get(token, confidence)
        else:
            probability = 0.98
            fillers = [f for f in FILLER_ALTERNATIVES if f != token]
            alternatives = {token: probability} | {
                f: (1 - probability) / 2 ** (rank + 1) for rank, f in enumerate(fillers)
            }
        content.append(_entry(token, math.log(probability), alternatives, k))
        offset += len(token)
    return content
