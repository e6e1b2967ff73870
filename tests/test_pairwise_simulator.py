"""The simulated pairwise judge's known biases are recovered through formats, data and stats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgekit.data.pairwise import unswap
from judgekit.formats import parse_reply
from judgekit.formats.verdicts import verdict_label
from judgekit.simulator.pairwise import PairwiseKnobs, ShownPair, simulated_reply
from judgekit.stats import CI, first_position_win_rate, longer_answer_win_rate
from judgekit.types import Scale


def _judge(knobs: PairwiseKnobs, pairs: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    quality = rng.normal(0, 1, (pairs, 2))
    length = rng.uniform(50, 400, (pairs, 2))
    rows = []
    for k in range(pairs):
        for order, (f, s) in (("ab", (0, 1)), ("ba", (1, 0))):
            shown = ShownPair(f"p{k}", order, quality[k, f], quality[k, s], "x", "y",
                              length[k, f], length[k, s])  # fmt: skip
            reply = simulated_reply(shown, knobs, "pair_mtbench")
            (verdict,) = parse_reply(
                reply, output_format="pair_mtbench", scale=Scale((-1, 0, 1)), item_ids=["p"]
            ).verdicts
            assert verdict.score is not None
            rows.append((f"p{k}", order, unswap(verdict_label(verdict.score), order),
                         length[k, 0], length[k, 1]))  # fmt: skip
    frame = pd.DataFrame(rows, columns=["pair_id", "order", "verdict", "length_a", "length_b"])
    return frame.assign(judge="sim", variant="base", run=1, status="ok", reason="",
                        model_a="x", model_b="y")  # fmt: skip


def test_a_position_biased_judge_shows_its_bias_and_a_fair_one_does_not() -> None:
    biased = first_position_win_rate(_judge(PairwiseKnobs(position=1.0, tie=0.1))).iloc[0]
    fair = first_position_win_rate(_judge(PairwiseKnobs(tie=0.1))).iloc[0]
    assert biased["ci_low"] > 0.6
    assert fair["ci_low"] < 0.5 < fair["ci_high"]


def test_a_length_biased_judge_prefers_the_longer_answer() -> None:
    games = _judge(PairwiseKnobs(length=2.0)).rename(columns={"verdict": "winner"})
    row = longer_answer_win_rate(games, cluster="pair_id", ci=CI("analytic")).iloc[0]
    assert row["ci_low"] > 0.55
