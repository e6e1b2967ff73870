"""A simulated pairwise judge with known biases: position, length and self-preference.

Like the rest of the simulator it is not a judge: each pair's true quality difference is
given, and the verdict is drawn from a logistic model whose knobs are the biases a test wants
to see recovered. For the answer shown first (``f``) against the one shown second (``s``),

``logit P(f wins | not a tie) = (q_f - q_s) + position + length * tanh((len_f - len_s) / 100)
+ self_preference * ([f is the judge's own] - [s is the judge's own])``

and a tie has probability ``tie``. The draw is a deterministic function of (seed, pair,
order), so a rerun reproduces every verdict. :func:`simulated_reply` writes it in a pairwise
format's own words, so the format's reader is part of what a test exercises. Not yet served
over HTTP: the simulator's server learns pairwise requests when ``judgekit judge`` does.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

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


def simulated_verdict(pair: ShownPair, knobs: PairwiseKnobs, *, ties: bool = True) -> str:
    """``"a"`` (the first shown wins), ``"b"`` or ``"tie"``, drawn from the biased model.

    ``ties=False`` (a format without a tie) never draws one.
    """
    key = zlib.crc32(f"{pair.pair_id}|{pair.order}".encode())
    rng = np.random.default_rng([knobs.seed, key])
    own = (pair.model_first == knobs.judge_model) - (pair.model_second == knobs.judge_model)
    logit = (
        pair.quality_first - pair.quality_second + knobs.position
        + knobs.length * np.tanh((pair.length_first - pair.length_second) / 100.0)
        + knobs.self_preference * own
    )  # fmt: skip
    if rng.random() < knobs.tie and ties:
        return "tie"
    return "a" if rng.random() < 1.0 / (1.0 + np.exp(-logit)) else "b"


def simulated_reply(pair: ShownPair, knobs: PairwiseKnobs, output_format: str) -> str:
    """The verdict as a reply in ``output_format``'s words (an explanation, then the token)."""
    if output_format not in _REPLIES:
        raise ValueError(f"no simulated replies for {output_format!r}; choose {list(_REPLIES)}")
    first, second, tie = _REPLIES[output_format]
    verdict = simulated_verdict(pair, knobs, ties=tie is not None)
    token = {"a": first, "b": second, "tie": tie}[verdict]
    return f"Both answers address the question; weighing them, my verdict follows.\n{token}"
