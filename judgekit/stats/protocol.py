"""Seed 004's validation protocol for a judge prompt: four checks, each pass/fail.

The protocol (seed 004, "Worked Example: Designing a Factual Accuracy Evaluator", step 4):
agreement with humans on 20-30 labelled examples; three paraphrases of the prompt agreeing with
each other at kappa > 0.8; three runs at temperature 0 agreeing 100 %; scores covering the whole
scale. The estimators live with their kind (:mod:`~judgekit.stats.agreement`,
:mod:`~judgekit.stats.consistency`, :mod:`~judgekit.stats.coverage`); this module applies the
thresholds and joins the four checks in :func:`seed004_report`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Literal

import pandas as pd

from judgekit.stats._bootstrap import CI
from judgekit.stats._prep import DEFAULT_COLUMNS, Columns, ScaleLike, order_columns, require_columns
from judgekit.stats.agreement import WeightBasis, Weights, cohen_kappa
from judgekit.stats.consistency import paraphrase_sensitivity, passes, run_consistency
from judgekit.stats.coverage import score_coverage

PassRule = Literal["estimate", "ci_low"]
#: Seed 004 asks for 20-30 labelled examples.
MIN_LABELLED = 20


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
    ci: CI = CI("bca", seed=0),
    min_n: int = MIN_LABELLED,
    columns: Columns = DEFAULT_COLUMNS,
) -> pd.DataFrame:
    """Judge-vs-human weighted kappa with a pass/fail against ``threshold``.

    Passes when the estimate (``pass_rule="estimate"``) or, stricter, the lower confidence
    bound (``"ci_low"``) reaches ``threshold``. Fewer than ``min_n`` usable pairs (seed 004 asks
    for 20-30) raises a ``UserWarning`` and a note: with so few items the interval is wide.

    Returns:
        One row: check, rater_a (judge), rater_b (human), estimate, se, ci_low, ci_high, n,
        method, ci_method, n_dropped, dropped_reason, threshold, passed, note.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> table = human_agreement(long, "judge", "human", scale=(1, 2, 3, 4), min_n=10)
        >>> row = table.iloc[0]
        >>> print(row["check"], round(row["estimate"], 3), row["threshold"], row["passed"])
        human_agreement 0.893 0.8 True
    """
    row = cohen_kappa(
        df,
        judge,
        human,
        scale=scale,
        weights=weights,
        weight_basis=weight_basis,
        ci=ci,
        columns=columns,
    )
    n = int(row["n"].iloc[0])
    note = ""
    if n < min_n:
        note = f"only {n} labelled pairs (< {min_n}): too few to trust the interval"
        warnings.warn(f"human agreement for {judge!r}: {note}", UserWarning, stacklevel=2)
    row["check"] = "human_agreement"
    row["threshold"] = threshold
    decisive = "estimate" if pass_rule == "estimate" else "ci_low"
    row["passed"] = pd.array([passes(float(row[decisive].iloc[0]), threshold)], dtype="boolean")
    row["note"] = "; ".join(t for t in (note, str(row["note"].iloc[0])) if t)
    return order_columns(row, ["check", "rater_a", "rater_b"])


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


def _base_variant(
    judged: pd.DataFrame, judge: object, variant_col: str, base_variant: object
) -> pd.DataFrame:
    """The judge's rows under the base prompt variant (all rows when there are no variants)."""
    if variant_col not in judged.columns:
        return judged
    base = judged[judged[variant_col] == base_variant]
    if base.empty:
        raise ValueError(f"judge {judge!r} has no rows with {variant_col} == {base_variant!r}")
    return base


def _first_run(judged: pd.DataFrame, run_col: str) -> pd.DataFrame:
    """The rows of the judge's first run (all rows when there is no run column)."""
    if run_col not in judged.columns:
        return judged
    return judged[judged[run_col] == judged[run_col].min()]


def _coverage_check(
    table: pd.DataFrame,
    judge: object,
    human: object,
    scale: ScaleLike,
    min_share_used: float,
    columns: Columns,
) -> dict[str, object]:
    """Seed 004's coverage check of the judge, with its distance to the human's distribution."""
    coverage = score_coverage(
        table, scale=scale, human=human, min_share_used=min_share_used, columns=columns
    ).summary
    cov = coverage[coverage["rater"] == judge].iloc[0]
    return {
        "check": "score_coverage",
        "statistic": "share_of_scale_used",
        "estimate": cov["share_of_scale_used"],
        "n": cov["n"],
        "threshold": min_share_used,
        "passed": cov["passed"],
        "method": f"levels used {cov['levels_used']}; TVD vs human {cov['tvd']:.3f}",
        "note": cov.get("note", ""),
    }


def _run_check(
    base: pd.DataFrame | None, scale: ScaleLike, target: float, ci: CI, columns: Columns
) -> dict[str, object]:
    """Run consistency of the base variant over runs (``columns.rater`` names the run).

    ``base`` is None when the judge has a single run: the check is reported as skipped.
    """
    if base is None:
        return _skipped("run_consistency", "share_identical", "needs at least two runs")
    runs = run_consistency(base, scale=scale, target=target, ci=ci, columns=columns).summary
    return {"check": "run_consistency", **_record(runs.iloc[0])}


def _paraphrase_check(
    first: pd.DataFrame | None,
    scale: ScaleLike,
    threshold: float,
    weighting: tuple[Weights, WeightBasis],
    ci: CI,
    columns: Columns,
) -> dict[str, object]:
    """Paraphrase sensitivity over the first run's variants (``columns.rater`` names them).

    ``first`` is None when the judge has a single variant: the check is reported as skipped.
    """
    if first is None:
        return _skipped("paraphrase_sensitivity", "min_kappa", "needs at least two variants")
    para = paraphrase_sensitivity(
        first,
        scale=scale,
        threshold=threshold,
        weights=weighting[0],
        weight_basis=weighting[1],
        ci=ci,
        columns=columns,
    ).summary
    return {"check": "paraphrase_sensitivity", **_record(para.iloc[0])}


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
    ci: CI = CI("bca", seed=0),
    columns: Columns = DEFAULT_COLUMNS,
    run_col: str = "run",
    variant_col: str = "variant",
) -> pd.DataFrame:
    """Run seed 004's protocol on one judge and return one row per check.

    The table holds the human rows (``rater == human``; their run and variant are ignored) and
    the judge's rows over runs and variants. Human agreement and coverage use the judge's base
    variant in its first run; run consistency uses the base variant over all runs; paraphrase
    sensitivity uses the first run over all variants. A check without the data it needs (one
    run, one variant) is reported with ``passed`` empty and a note, never as a pass.

    ``columns`` names the item, rater (judge / human), score, status and cluster columns;
    ``run_col`` and ``variant_col`` name the judge's run and prompt-variant columns. The checks'
    intervals (``ci``: "percentile" or "bca") draw in turn from one generator.

    Returns:
        Columns check, statistic, estimate, ci_low, ci_high, n, threshold, passed, method, note.

    Examples:
        >>> from judgekit.stats.examples import two_raters
        >>> long = two_raters()
        >>> import pandas as pd
        >>> judge = long[long["rater"] == "judge"]
        >>> runs = [long.assign(run=1, variant="base"), judge.assign(run=2, variant="base")]
        >>> report = seed004_report(
        ...     pd.concat(runs), judge="judge", human="human", scale=(1, 2, 3, 4),
        ...     ci=CI("bca", n_boot=200, seed=0),
        ... )
        >>> print(report[["check", "estimate", "passed"]].round(3).to_string(index=False))
                         check  estimate  passed
               human_agreement     0.893    True
               run_consistency     1.000    True
        paraphrase_sensitivity       NaN    <NA>
                score_coverage     1.000    True
    """
    rater_col = columns.rater
    require_columns(df, [columns.item, rater_col, columns.score])
    ci = ci.offered(("percentile", "bca"), "seed004_report").shared()
    judged = df[df[rater_col] == judge]
    humans = df[df[rater_col] == human]
    if judged.empty or humans.empty:
        raise ValueError(f"no rows for judge {judge!r} or human {human!r} in {rater_col!r}")
    base = _base_variant(judged, judge, variant_col, base_variant)
    single, first = _first_run(base, run_col), _first_run(judged, run_col)
    rows: list[dict[str, object]] = []

    with_humans = pd.concat([single, humans])
    agreement = human_agreement(
        with_humans, judge, human, scale=scale, threshold=kappa_threshold, pass_rule=pass_rule,
        weights=weights, weight_basis=weight_basis, ci=ci, columns=columns,
    ).iloc[0]  # fmt: skip
    rows.append({**_record(agreement), "statistic": "kappa_vs_human"})

    has_runs = run_col in judged.columns and judged[run_col].nunique() > 1
    has_variants = variant_col in judged.columns and judged[variant_col].nunique() > 1
    by_run = replace(columns, rater=run_col)
    rows.append(_run_check(base if has_runs else None, scale, consistency_target, ci, by_run))
    rows.append(
        _paraphrase_check(
            first if has_variants else None,
            scale,
            paraphrase_threshold,
            (weights, weight_basis),
            ci,
            replace(columns, rater=variant_col),
        )
    )

    rows.append(_coverage_check(with_humans, judge, human, scale, min_share_used, columns))
    report = pd.DataFrame(rows).reindex(columns=list(REPORT_COLUMNS))
    report["passed"] = report["passed"].astype("boolean")
    report["note"] = report["note"].fillna("")
    return report
