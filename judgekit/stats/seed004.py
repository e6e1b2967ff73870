"""One pass/fail table for seed 004's four checks on a judge prompt."""

from __future__ import annotations

import pandas as pd

from judgekit.stats._bootstrap import SeedLike, as_generator
from judgekit.stats._prep import ScaleLike, require_columns
from judgekit.stats.agreement import WeightBasis, Weights
from judgekit.stats.coverage import score_coverage
from judgekit.stats.reliability import (
    PassRule,
    human_agreement,
    paraphrase_sensitivity,
    run_consistency,
)

#: Columns of :func:`seed004_report`, in order.
REPORT_COLUMNS: tuple[str, ...] = (
    "check",
    "statistic",
    "estimate",
    "ci_low",
    "ci_high",
    "n",
    "threshold",
    "passed",
    "method",
    "note",
)


def _record(row: pd.Series) -> dict[str, object]:
    return {str(key): value for key, value in row.items()}


def _skipped(check: str, statistic: str, why: str) -> dict[str, object]:
    return {"check": check, "statistic": statistic, "passed": None, "note": why}


def seed004_report(
    df: pd.DataFrame,
    *,
    judge: object,
    human: object,
    scale: ScaleLike,
    kappa_threshold: float = 0.8,
    paraphrase_threshold: float = 0.8,
    consistency_target: float = 1.0,
    min_share_used: float = 1.0,
    pass_rule: PassRule = "estimate",
    weights: Weights = "quadratic",
    weight_basis: WeightBasis = "rank",
    base_variant: object = "base",
    n_boot: int = 2000,
    seed: SeedLike = 0,
    level: float = 0.95,
    item_col: str = "item",
    rater_col: str = "rater",
    score_col: str = "score",
    run_col: str = "run",
    variant_col: str = "variant",
    status_col: str | None = "status",
) -> pd.DataFrame:
    """Run seed 004's protocol on one judge and return one row per check.

    The table holds the human rows (``rater == human``; their run and variant are ignored) and
    the judge's rows over runs and variants. Human agreement and coverage use the judge's base
    variant in its first run; run consistency uses the base variant over all runs; paraphrase
    sensitivity uses the first run over all variants. A check without the data it needs (one
    run, one variant) is reported with ``passed`` empty and a note, never as a pass.

    Returns:
        Columns check, statistic, estimate, ci_low, ci_high, n, threshold, passed, method, note.
    """
    require_columns(df, [item_col, rater_col, score_col])
    rng = as_generator(seed)
    judged = df[df[rater_col] == judge]
    humans = df[df[rater_col] == human]
    if judged.empty or humans.empty:
        raise ValueError(f"no rows for judge {judge!r} or human {human!r} in {rater_col!r}")
    has_runs = run_col in judged.columns and judged[run_col].nunique() > 1
    has_variants = variant_col in judged.columns and judged[variant_col].nunique() > 1
    first_run = judged[run_col].min() if run_col in judged.columns else None
    base = judged
    if variant_col in judged.columns:
        base = base[base[variant_col] == base_variant]
        if base.empty:
            raise ValueError(f"judge {judge!r} has no rows with {variant_col} == {base_variant!r}")
    single = base if first_run is None else base[base[run_col] == first_run]
    rows: list[dict[str, object]] = []

    agreement = human_agreement(
        pd.concat([single, humans]),
        judge,
        human,
        scale=scale,
        threshold=kappa_threshold,
        pass_rule=pass_rule,
        weights=weights,
        weight_basis=weight_basis,
        n_boot=n_boot,
        seed=rng,
        level=level,
        rater_col=rater_col,
        item_col=item_col,
        score_col=score_col,
        status_col=status_col,
    ).iloc[0]
    rows.append({**_record(agreement), "statistic": "kappa_vs_human"})

    if has_runs:
        runs = run_consistency(
            base,
            scale=scale,
            target=consistency_target,
            n_boot=n_boot,
            seed=rng,
            level=level,
            run_col=run_col,
            item_col=item_col,
            score_col=score_col,
            status_col=status_col,
        ).summary
        rows.append({"check": "run_consistency", **_record(runs.iloc[0])})
    else:
        rows.append(_skipped("run_consistency", "share_identical", "needs at least two runs"))

    if has_variants:
        first = judged if first_run is None else judged[judged[run_col] == first_run]
        para = paraphrase_sensitivity(
            first,
            scale=scale,
            threshold=paraphrase_threshold,
            weights=weights,
            weight_basis=weight_basis,
            n_boot=n_boot,
            seed=rng,
            level=level,
            variant_col=variant_col,
            item_col=item_col,
            score_col=score_col,
            status_col=status_col,
        ).summary
        rows.append({"check": "paraphrase_sensitivity", **_record(para.iloc[0])})
    else:
        rows.append(_skipped("paraphrase_sensitivity", "min_kappa", "needs at least two variants"))

    coverage = score_coverage(
        pd.concat([single, humans]),
        scale=scale,
        human=human,
        min_share_used=min_share_used,
        rater_col=rater_col,
        item_col=item_col,
        score_col=score_col,
        status_col=status_col,
    ).summary
    cov = coverage[coverage["rater"] == judge].iloc[0]
    rows.append(
        {
            "check": "score_coverage",
            "statistic": "share_of_scale_used",
            "estimate": cov["share_of_scale_used"],
            "n": cov["n"],
            "threshold": min_share_used,
            "passed": cov["passed"],
            "method": f"levels used {cov['levels_used']}; TVD vs human {cov['tvd']:.3f}",
            "note": cov.get("note", ""),
        }
    )
    report = pd.DataFrame(rows).reindex(columns=list(REPORT_COLUMNS))
    report["passed"] = report["passed"].astype("boolean")
    report["note"] = report["note"].fillna("")
    return report
