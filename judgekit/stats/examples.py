"""Small made-up tables the docstring examples run on (as pingouin's ``read_dataset``).

They are illustrations, not data: a few items, chosen so that each statistic has something to
show. Each call returns a fresh table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

_JUDGE = [1, 2, 3, 4, 4, 3, 2, 1, 2, 3, 4, 1]
_HUMAN = [1, 2, 3, 4, 3, 3, 2, 2, 2, 4, 4, 1]


def two_raters() -> pd.DataFrame:
    """A judge and a human scoring 12 items on 1-4: columns ``item``, ``rater``, ``score``."""
    return pd.DataFrame(
        {"item": list(range(1, 13)) * 2, "rater": ["judge"] * 12 + ["human"] * 12,
         "score": _JUDGE + _HUMAN}
    )  # fmt: skip


def three_runs(rater: str = "run") -> pd.DataFrame:
    """One judge scoring 6 items three times: columns ``item``, ``rater`` (named), ``score``."""
    scores = [1, 2, 3, 4, 2, 3, 1, 2, 3, 4, 2, 3, 1, 2, 3, 3, 2, 3]
    return pd.DataFrame({"item": list(range(1, 7)) * 3, rater: np.repeat([1, 2, 3], 6),
                         "score": scores})  # fmt: skip


def batch_judgments() -> tuple[pd.DataFrame, dict[str, float]]:
    """A judged table of 12 items in two batches of 6, and the human score of each item."""
    human = dict(zip([f"q{i}" for i in range(12)], map(float, _HUMAN), strict=True))
    scores = [3, 3, 3, 4, 4, 4, 2, 3, 3, 3, 4, 5]
    judgments = pd.DataFrame(
        {"item_id": list(human), "status": "ok", "score": scores, "attempt": 1,
         "position": list(range(6)) * 2, "batch_index": [0] * 6 + [1] * 6}
    )  # fmt: skip
    return judgments, human


def judged_answers() -> pd.DataFrame:
    """One judge on 12 answers to 6 questions, half written by its own model, with human scores.

    Columns ``rater``, ``model`` (who wrote the answer), ``score``, ``human_score``,
    ``question`` and ``length`` (characters).
    """
    return pd.DataFrame(
        {
            "rater": "judge-a",
            "model": ["judge-a", "other"] * 6,
            "score": [5, 3, 4, 3, 5, 2, 4, 4, 5, 3, 4, 2],
            "human_score": [4, 3, 4, 2, 5, 2, 3, 4, 4, 3, 4, 1],
            "question": np.repeat(range(1, 7), 2),
            "length": [120, 80, 150, 90, 130, 60, 110, 100, 140, 70, 120, 50],
        }
    )


def labelled_judgments(every_label: bool = False, seed: int = 0) -> pd.DataFrame:
    """200 judged answers of two models (``judge_score``), one in ten labelled (``human_score``).

    With ``every_label`` every answer carries its human score and the judge errs by up to one
    point (the setting a coverage study hides labels from).
    """
    rng = np.random.default_rng(seed)
    models = np.repeat(["a", "b"], 100)
    if every_label:
        human = rng.integers(1, 5, 200).astype(float)
        judge = np.clip(human + rng.integers(-1, 2, 200), 1, 4)
    else:
        judge = rng.integers(1, 5, 200).astype(float)
        human = np.where(np.arange(200) % 10 == 0, judge - 0.5, np.nan)
    return pd.DataFrame({"model": models, "judge_score": judge, "human_score": human})
