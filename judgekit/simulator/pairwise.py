"""A simulated pairwise judge with known biases: position, length and self-preference.

Like the rest of the simulator it is not a judge: each pair's true quality difference is
given, and the verdict is drawn from a logistic model whose knobs are the biases a test wants
to see recovered. For the answer shown first (``f``) against the one shown second (``s``),

``logit P(f wins | not a tie) = (q_f - q_s) + position + length * tanh((len_f - len_s) / 100)
+ self_preference * ([f is the judge's own] - [s is the judge's own])``

and a tie has probability ``tie``. The draw is a deterministic function of (seed, pair,
order), so a rerun reproduces every verdict. :func:`simulated_reply` writes it in a pairwise
format's own words, so the format's reader is part of what a test exercises.

Over HTTP (:func:`pairwise_reply`) the server reads a pairwise request from what a real endpoint
receives: the verdict format from the JSON schema's verdict labels or, without a schema, from
the prompt text alone (the tokens its output format shows), the two answers from the
``<Answer_A>``/``<Answer_B>`` blocks of the item as shown (first shown, second shown). An
answer's quality is a hash of its text onto [-1, 1], so both orders of a pair see the same two
qualities; the knobs are :class:`~judgekit.simulator.config.SimulatorConfig`'s
``position_bias``, ``length_bias``, ``self_preference`` (an answer holding ``self_marker`` is
the judge's own) and ``tie_rate``; of the malformations only ``truncated`` applies (the reply
cut before its verdict). A filled own prompt without those blocks has neither
quality nor length: only the position bias moves its verdicts.
"""

from __future__ import annotations

import html
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.formats import pair_arena, pair_mtbench, pair_output_ab
from judgekit.simulator.compose import ComposedReply
from judgekit.simulator.config import SimulatorConfig
from judgekit.simulator.faults import Draw, unit
from judgekit.simulator.reading import message_text, request_schema

#: How each pairwise format writes a verdict (first shown, second shown, tie).
_REPLIES = {
    "pair_mtbench": ("[[A]]", "[[B]]", "[[C]]"),
    "pair_arena": ("[[A>B]]", "[[B>A]]", "[[A=B]]"),
    "pair_output_ab": ("Output (a)", "Output (b)", None),
}


@dataclass(frozen=True)
class PairwiseKnobs:
    """The simulated judge's biases (0 = none) and its tie probability."""

    position: float = 0.0
    length: float = 0.0
    self_preference: float = 0.0
    tie: float = 0.0
    judge_model: str = "judge"
    seed: int = 0


@dataclass(frozen=True)
class ShownPair:
    """One pair as shown in one order: who wrote each answer, their quality and length."""

    pair_id: str
    order: str
    quality_first: float
    quality_second: float
    model_first: str
    model_second: str
    length_first: float
    length_second: float


def _logit(pair: ShownPair, knobs: PairwiseKnobs) -> float:
    """The log-odds that the answer shown first wins (the module's model)."""
    own = (pair.model_first == knobs.judge_model) - (pair.model_second == knobs.judge_model)
    return float(
        pair.quality_first - pair.quality_second + knobs.position
        + knobs.length * np.tanh((pair.length_first - pair.length_second) / 100.0)
        + knobs.self_preference * own
    )  # fmt: skip


def _verdict(logit: float, tie_draw: float, win_draw: float, tie: float) -> str:
    if tie_draw < tie:
        return "tie"
    return "a" if win_draw < 1.0 / (1.0 + np.exp(-logit)) else "b"


def simulated_verdict(pair: ShownPair, knobs: PairwiseKnobs, *, ties: bool = True) -> str:
    """``"a"`` (the first shown wins), ``"b"`` or ``"tie"``, drawn from the biased model.

    ``ties=False`` (a format without a tie) never draws one.
    """
    key = zlib.crc32(f"{pair.pair_id}|{pair.order}".encode())
    rng = np.random.default_rng([knobs.seed, key])
    tie_draw, win_draw = rng.random(), rng.random()
    return _verdict(_logit(pair, knobs), tie_draw, win_draw, knobs.tie if ties else 0.0)


def simulated_reply(pair: ShownPair, knobs: PairwiseKnobs, output_format: str) -> str:
    """The verdict as a reply in ``output_format``'s words (an explanation, then the token)."""
    if output_format not in _REPLIES:
        raise ValueError(f"no simulated replies for {output_format!r}; choose {list(_REPLIES)}")
    first, second, tie = _REPLIES[output_format]
    verdict = simulated_verdict(pair, knobs, ties=tie is not None)
    token = {"a": first, "b": second, "tie": tie}[verdict]
    return f"Both answers address the question; weighing them, my verdict follows.\n{token}"


# --- over HTTP ------------------------------------------------------------------------------------

#: Verdict formats: what a prompt without a schema shows of each (tried in this order) and the
#: JSON labels of the first-shown, second-shown and tie verdicts.
_PROMPT_MARKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pair_arena", ("A>>B",)),
    ("pair_output_ab", ("Output (a)",)),
    ("pair_rating", ("Score A:", '"score_a"')),
    ("pair_mtbench", ("[[C]]", '"verdict": "A"')),
)
_JSON_LABELS = {
    "pair_mtbench": ("A", "B", "C"),
    "pair_arena": ("A>B", "B>A", "A=B"),
    "pair_output_ab": ("Output (a)", "Output (b)", None),
}
_LABEL_SETS = {
    frozenset(pair_mtbench.LABELS): "pair_mtbench",
    frozenset(pair_arena.LABELS): "pair_arena",
    frozenset(pair_output_ab.LABELS): "pair_output_ab",
}
_ANSWER = {side: re.compile(rf"<Answer_{side}>(.*?)</Answer_{side}>", re.DOTALL) for side in "AB"}
_RATINGS = {"a": (8, 6), "b": (6, 8), "tie": (7, 7)}


def pair_format(body: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The verdict format a request asks for and whether the reply is JSON; ``None``: none.

    From the schema's verdict labels (or its ``score_a``) when there is one, else from the
    tokens the prompt text shows.
    """
    schema, json_reply = request_schema(body)
    properties = (schema or {}).get("properties") or {}
    if properties:
        if "score_a" in properties and "score_b" in properties:
            return "pair_rating", True
        labels = (properties.get("verdict") or {}).get("enum")
        found = _LABEL_SETS.get(frozenset(labels)) if labels else None
        return (found, True) if found else None
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    text = "\n".join(message_text(m) for m in messages)
    for name, marks in _PROMPT_MARKS:
        if any(mark in text for mark in marks):
            return name, json_reply or '"verdict"' in text or '"score_a"' in text
    return None


def pairwise_reply(body: Any, config: SimulatorConfig, draw: Draw) -> ComposedReply | None:
    """The simulated judge's reply to a pairwise request; ``None`` for any other request."""
    if not isinstance(body, Mapping):
        return None
    found = pair_format(body)
    if found is None:
        return None
    name, as_json = found
    users = [
        m for m in body.get("messages") or () if isinstance(m, Mapping) and m.get("role") == "user"
    ]
    shown = message_text(users[-1]) if users else ""
    first, second = (
        html.unescape(m.group(1)) if (m := _ANSWER[s].search(shown)) else "" for s in "AB"
    )
    mark = config.self_marker
    pair = ShownPair(
        "", "", answer_quality(config.seed, first), answer_quality(config.seed, second),
        "judge" if mark and first and mark in first else "first",
        "judge" if mark and second and mark in second else "second",
        len(first), len(second),
    )  # fmt: skip
    knobs = PairwiseKnobs(config.position_bias, config.length_bias, config.self_preference)
    has_tie = name == "pair_rating" or _JSON_LABELS[name][2] is not None
    tie = config.tie_rate if has_tie else 0.0
    verdict = _verdict(
        _logit(pair, knobs), draw.fraction("pair_tie"), draw.fraction("pair_win"), tie
    )
    text = _written(name, verdict, as_json)
    if draw.chance("truncated", config.malformed.get("truncated", 0.0)):  # cut before the verdict
        return ComposedReply(text[: len(text) // 3], ("truncated",), "length")
    return ComposedReply(text, (), "stop")


def answer_quality(seed: int, answer: str) -> float:
    """An answer's simulated quality: its text hashed onto [-1, 1] (0 when no answer is seen)."""
    return 2.0 * unit(seed, "pair_quality", answer) - 1.0 if answer else 0.0


def _written(name: str, verdict: str, as_json: bool) -> str:
    explanation = "Simulated comparison: the verdict is drawn from the simulator's biases."
    if name == "pair_rating":
        a, b = _RATINGS[verdict]
        if as_json:
            return json.dumps({"explanation": explanation, "score_a": a, "score_b": b})
        return f"{explanation}\nScore A: {a}\nScore B: {b}"
    index = {"a": 0, "b": 1, "tie": 2}[verdict]
    if as_json:
        return json.dumps({"explanation": explanation, "verdict": _JSON_LABELS[name][index]})
    token = _REPLIES[name][index]
    return f"{explanation}\n{token}"
