"""Seed 004's validation protocol for a judge prompt, as pass/fail checks.

The protocol (seed 004, "Worked Example: Designing a Factual Accuracy Evaluator", step 4):
agreement with humans on 20-30 labelled examples; three paraphrases of the prompt agreeing with
each other at kappa > 0.8; three runs at temperature 0 agreeing 100 %; scores covering the whole
scale. Coverage lives in :mod:`judgekit.stats.coverage`; :func:`seed004_report` joins all four.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from judgekit.stats._bootstrap import CIMethod, SeedLike, as_generator, wilson_ci
from judgekit.stats._prep import (
    ScaleLike,
    abstain_values,
    describe_drops,
    order_columns,
    result_row,
    usable_scores,
)
from judgekit.stats.agreement import WeightBasis, Weights, cohen_kappa, kappa_matrix, pairwise_kappa
from judgekit.stats.multirater import AlphaLevel, fleiss_kappa, krippendorff_alpha

PassRule = Literal["estimate", "ci_low"]
#: Seed 004 asks for 20-30 labelled examples.
MIN_LABELLED = 20


def _passes(value: float, threshold: float, strict: bool = False) -> bool | None:
    """``value >= threshold`` (``>`` when strict), or None when the value is undefined."""
    if not np.isfinite(value):
        return None
    return bool(value > threshold) if strict else bool(value >= threshold)


def human_agreement(
    df: pd.DataFrame,
    judge: object,
    human: object,
    *,
    scale: ScaleLike = None,
    threshold: float = 0.8,
    pass_rule: PassRule = "estimate",
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CIMethod = "bca",
    n_boot: int = 2000,
    seed: SeedLike | None = 0,
    level: float = 0.95,
    min_n: int = MIN_LABELLED,
    item_col: str = "item",
    rater_col: str = "rater",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
) -> pd.DataFrame:
    """Judge-vs-human weighted kappa with a pass/fail against ``threshold``.

    Passes when the estimate (``pass_rule="estimate"``) or, stricter, the lower confidence
    bound (``"ci_low"``) reaches ``threshold``. Fewer than ``min_n`` usable pairs (seed 004 asks
    for 20-30) raises a ``UserWarning`` and a note: with so few items the interval is wide.

    Returns:
        One row: check, rater_a (judge), rater_b (human), estimate, se, ci_low, ci_high, n,
        method, ci_method, n_dropped, dropped_reason, threshold, passed, note.
    """
    row = cohen_kappa(
        df,
        judge,
        human,
        scale=scale,
        weights=weights,
        weight_basis=weight_basis,
        ci=ci,
        n_boot=n_boot,
        seed=seed,
        level=level,
        item_col=item_col,
        rater_col=rater_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    n = int(row["n"].iloc[0])
    note = ""
    if n < min_n:
        width = float(row["ci_high"].iloc[0] - row["ci_low"].iloc[0])
        note = f"only {n} labelled pairs (< {min_n}): the interval is wide ({width:.2f})"
        warnings.warn(f"human agreement for {judge!r}: {note}", UserWarning, stacklevel=2)
    row["check"] = "human_agreement"
    row["threshold"] = threshold
    decisive = "estimate" if pass_rule == "estimate" else "ci_low"
    row["passed"] = pd.array([_passes(float(row[decisive].iloc[0]), threshold)], dtype="boolean")
    row["note"] = note
    return order_columns(row, ["check", "rater_a", "rater_b"])


@dataclass(frozen=True)
class RunConsistency:
    """Run-to-run consistency of one judge.

    Attributes:
        summary: Rows ``statistic`` = share_identical (with pass/fail against the target),
            mean_flip_rate, fleiss_kappa, krippendorff_alpha.
        per_item: item, n_runs (usable), n_distinct, modal_score, flip_rate.
    """

    summary: pd.DataFrame
    per_item: pd.DataFrame


def run_consistency(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    target: float = 1.0,
    alpha_level: AlphaLevel = "interval",
    ci: Literal["percentile", "bca"] | None = "bca",
    n_boot: int = 2000,
    seed: SeedLike | None = 0,
    level: float = 0.95,
    item_col: str = "item",
    run_col: str = "run",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
) -> RunConsistency:
    """Agreement of one judge with itself over k runs of the same items.

    ``share_identical`` = share of items scored identically in every run, over items with a
    usable score in all k runs (an item that failed in some run is dropped and counted; it is
    neither identical nor different). Seed 004's target is 1.0 (passes when share >= target).
    An item's flip rate is the share of its usable runs that differ from its modal score.
    Fleiss' kappa and Krippendorff's alpha treat runs as raters.
    """
    usable = usable_scores(
        df,
        item_col=item_col,
        rater_col=run_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain_values(scale, abstain),
    )
    runs = pd.unique(df[run_col])
    if len(runs) < 2:
        raise ValueError(f"run consistency needs at least two values of {run_col!r}, got {runs}")
    wide = usable.scores.pivot(index="item", columns="rater", values="score")
    wide = wide.reindex(index=pd.unique(df[item_col]), columns=runs)
    n_runs = wide.notna().sum(axis=1)
    modal = wide.mode(axis=1)[0]
    modal_count = wide.eq(modal, axis=0).sum(axis=1)
    per_item = pd.DataFrame(
        {
            "item": wide.index,
            "n_runs": n_runs.to_numpy(),
            "n_distinct": wide.nunique(axis=1).to_numpy(),
            "modal_score": modal.to_numpy(),
            "flip_rate": (1 - modal_count / n_runs.where(n_runs > 0)).to_numpy(),
        }
    )
    complete = per_item[per_item["n_runs"] == len(runs)]
    identical = int((complete["n_distinct"] == 1).sum())
    n = len(complete)
    n_dropped, why = describe_drops(["not usable in every run"] * (len(per_item) - n))
    low, high = wilson_ci(identical, n, level)
    share = identical / n if n else np.nan
    rows = [
        result_row(
            statistic="share_identical",
            estimate=share,
            ci_low=low,
            ci_high=high,
            n=n,
            method=f"identical across {len(runs)} runs",
            ci_method="wilson",
            n_dropped=n_dropped,
            dropped_reason=why,
            threshold=target,
            passed=_passes(share, target),
        ),
        result_row(
            statistic="mean_flip_rate",
            estimate=float(complete["flip_rate"].mean()) if n else np.nan,
            n=n,
            method="share of runs off the modal score",
            ci_method="none",
            n_dropped=n_dropped,
            dropped_reason=why,
        ),
    ]
    rng = as_generator(seed) if ci is not None else None
    fleiss = fleiss_kappa(
        df,
        scale=scale,
        ci=ci,
        n_boot=n_boot,
        seed=rng,
        level=level,
        item_col=item_col,
        rater_col=run_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    alpha = krippendorff_alpha(
        df,
        level_of_measurement=alpha_level,
        scale=scale,
        ci=ci,
        n_boot=n_boot,
        seed=rng,
        level=level,
        item_col=item_col,
        rater_col=run_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    for name, table in (("fleiss_kappa", fleiss), ("krippendorff_alpha", alpha)):
        rows.append({"statistic": name, **{str(k): v for k, v in table.iloc[0].items()}})
    summary = order_columns(pd.DataFrame(rows), ["statistic"])
    return RunConsistency(summary=summary, per_item=per_item)


@dataclass(frozen=True)
class ParaphraseSensitivity:
    """Agreement of one judge with itself across prompt paraphrases (variants).

    Attributes:
        pairwise: One row per variant pair (rater_a, rater_b = variants) with kappa and CI.
        matrix: The same kappas as a symmetric variant x variant table.
        summary: Rows ``statistic`` = min_kappa (with pass/fail) and mean_kappa.
    """

    pairwise: pd.DataFrame
    matrix: pd.DataFrame
    summary: pd.DataFrame


def paraphrase_sensitivity(
    df: pd.DataFrame,
    *,
    scale: ScaleLike = None,
    threshold: float = 0.8,
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    ci: CIMethod = "bca",
    n_boot: int = 2000,
    seed: SeedLike | None = 0,
    level: float = 0.95,
    item_col: str = "item",
    variant_col: str = "variant",
    score_col: str = "score",
    status_col: str | None = "status",
    abstain: tuple[float, ...] = (-1,),
) -> ParaphraseSensitivity:
    """Pairwise kappa between prompt variants; passes when the smallest kappa exceeds threshold.

    Seed 004: "verify that agreement across variants is high (kappa > 0.8)", so the test is a
    strict ``min_kappa > threshold``.
    """
    pairwise = pairwise_kappa(
        df,
        rater_col=variant_col,
        seed=seed,
        scale=scale,
        weights=weights,
        weight_basis=weight_basis,
        ci=ci,
        n_boot=n_boot,
        level=level,
        item_col=item_col,
        score_col=score_col,
        status_col=status_col,
        abstain=abstain,
    )
    kappas = pairwise["estimate"]
    worst = pairwise.iloc[int(np.nanargmin(kappas))] if kappas.notna().any() else pairwise.iloc[0]
    summary = pd.DataFrame(
        [
            result_row(
                statistic="min_kappa",
                estimate=float(kappas.min()),
                ci_low=worst["ci_low"],
                ci_high=worst["ci_high"],
                n=int(pairwise["n"].min()),
                method=f"min over {len(pairwise)} variant pairs",
                ci_method=worst["ci_method"],
                threshold=threshold,
                passed=_passes(float(kappas.min()), threshold, strict=True)
                if kappas.notna().all()
                else None,
                note=f"weakest pair: {worst['rater_a']} vs {worst['rater_b']}",
            ),
            result_row(
                statistic="mean_kappa",
                estimate=float(kappas.mean()),
                n=int(pairwise["n"].min()),
                method=f"mean over {len(pairwise)} variant pairs",
                ci_method="none",
            ),
        ]
    )
    return ParaphraseSensitivity(
        pairwise=pairwise,
        matrix=kappa_matrix(pairwise),
        summary=order_columns(summary, ["statistic"]),
    )
