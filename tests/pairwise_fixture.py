"""A pairwise study folder on the contract of ``_coord/pairwise_study.md``, for the tests.

Three answering models of known strength answer 48 prompts; each pair is judged in both orders
by two judges: ``fair`` (sees the true preference) and ``first`` (takes the answer shown first
unless the other is much better: a strong position bias). Two human raters label every pair
from the true preference; a few replies are unparseable.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.types import JUDGMENT_COLUMNS

RUBRIC = "mtbench_pairwise"
MODELS = {"strong": 1.0, "middle": 0.0, "weak": -1.0}


def _preference(rng: np.random.Generator, a: str, b: str) -> str:
    """The true verdict between a and b (the stronger wins more often; close ones tie)."""
    gap = MODELS[a] - MODELS[b] + rng.normal(0, 0.8)
    return "tie" if abs(gap) < 0.25 else "a" if gap > 0 else "b"


def write_pairwise_study(root: Path, *, seed: int = 0, labels: bool = True) -> Path:
    """Write the study folder under ``root`` and return it."""
    rng = np.random.default_rng(seed)
    names = list(MODELS)
    items, rows, human = [], [], []
    for prompt in range(48):
        a, b = rng.choice(names, size=2, replace=False)
        pair = f"p{prompt:02d}"
        truth = _preference(rng, a, b)
        long_a, long_b = (int(n) for n in rng.integers(5, 90, size=2))
        items.append({"ID": pair, "Question": f"question {prompt}?", "Model_A": a,
                      "Model_B": b, "Answer_A": f"reply {prompt} one " + "x" * long_a,
                      "Answer_B": f"reply {prompt} two " + "y" * long_b})  # fmt: skip
        for rater in ("ann", "bob"):
            vote = truth if rng.random() < 0.85 else str(rng.choice(["a", "b", "tie"]))
            human.append({"item_id": pair, "rubric": RUBRIC, "answer_model": "", "score": np.nan,
                          "verdict": vote, "rater": rater})  # fmt: skip
        for judge in ("fair", "first"):
            for order in ("ab", "ba"):
                shown_first = "a" if order == "ab" else "b"
                if judge == "fair":
                    verdict = truth if rng.random() < 0.9 else shown_first
                else:
                    verdict = shown_first if rng.random() < 0.85 else truth
                unparsed = rng.random() < 0.04
                rows.append({
                    "item_id": pair, "rubric": RUBRIC, "variant": "base", "model": judge,
                    "run": 1, "attempt": 1, "status": "unparseable" if unparsed else "ok",
                    "score": np.nan, "expected_score": np.nan,
                    "reason": "no verdict" if unparsed else "", "batch_index": 0, "position": 0,
                    "request_hash": f"{pair}{judge}{order}", "prompt_tokens": 10,
                    "completion_tokens": 5, "latency_s": 0.1, "tolerances": "", "raw_reply": "",
                    "judge": judge, "question": f"question {prompt}?", "order": order,
                    "verdict": "" if unparsed else verdict, "model_a": a, "model_b": b,
                })  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(items).to_csv(root / "items.csv", index=False)
    judgments = pd.DataFrame(rows)
    assert set(JUDGMENT_COLUMNS) <= set(judgments.columns)
    judgments.to_parquet(root / "judgments.parquet", index=False)
    if labels:
        # the labelling tool's long table: one row per pair and rater, a verdict each
        table = pd.DataFrame(human).rename(columns={"rater": "labeller"})
        table = table.assign(status="ok", note="", labelled_at="2026-12-01T00:00:00+00:00",
                             rubric_version="", score="")  # fmt: skip
        columns = ["item_id", "labeller", "score", "status", "note", "labelled_at", "rubric",
                   "rubric_version", "verdict"]  # fmt: skip
        table[columns].to_csv(root / "labels.csv", index=False)
    judges = [{"label": j, "provider": "simulator", "model": j} for j in ("fair", "first")]
    (root / "study.json").write_text(json.dumps({"judges": judges, "commands": []}))
    return root
