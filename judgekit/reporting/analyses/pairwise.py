"""Report step 10: a pairwise study's outcomes, biases, agreement with humans and ranking.

Reads :meth:`Study.comparisons` and :meth:`Study.pair_labels` and writes, per judge x variant x
run: the per-pair outcome shares, the first-position win rate, the longer answer's win rate and
the length-controlled win rate, agreement with the human labels (MT-Bench S1/S2, accuracy and
macro-F1 against the labels' majority, Cohen's kappa per order), inter-human and inter-judge
kappas, the Bradley-Terry ranking (seeded, prompt-clustered bootstrap) and the win rates
against a baseline; and ``pairwise_summary`` (the report's ``tables/pairwise_summary.csv``).
Every table carries its interval level and design; each part that does not apply is one
``skipped`` line.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgekit.data.pairwise import games, pair_outcomes, view_inconsistent_as_tie
from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.stats import CI
from judgekit.study.folder import Study
from judgekit.types import UsageError

GROUP = ["judge", "variant", "run"]
SUMMARY_COLUMNS = (
    "rubric", *GROUP, "n_pairs", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
    "position_consistency", "position_consistency_ci_low", "position_consistency_ci_high",
    "kappa", "kappa_ab", "kappa_ab_ci_low", "kappa_ab_ci_high", "kappa_ba", "kappa_ba_ci_low",
    "kappa_ba_ci_high", "level", "design",
)  # fmt: skip


def _answer_lengths(study: Study) -> pd.DataFrame | None:
    """Characters of each pair's two answers from items.csv (None: not there)."""
    if not study.folder.items.is_file():
        return None
    items = pd.read_csv(study.folder.items, dtype=str, keep_default_na=False)
    if not {"ID", "Answer_A", "Answer_B"} <= set(items.columns):
        return None
    return pd.DataFrame({"pair_id": items["ID"], "length_a": items["Answer_A"].str.len(),
                         "length_b": items["Answer_B"].str.len()})  # fmt: skip


def _by_group(frame: pd.DataFrame) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The frame's parts per judge x variant x run, each with its keys."""
    return [
        (dict(zip(GROUP, values, strict=True)), part)
        for values, part in frame.groupby(GROUP, sort=True)
    ]


def _estimates(table: pd.DataFrame, name: str, keys: list[str]) -> pd.DataFrame:
    return table[[*keys, "estimate", "ci_low", "ci_high"]].rename(
        columns={"estimate": name, "ci_low": f"{name}_ci_low", "ci_high": f"{name}_ci_high"}
    )


@step("10_pairwise")
def pairwise_analysis(
    study: Study,
    *,
    rubric: str = "",
    baseline: str = "",
    ties: str = "half",
    bt_alpha: float = 0.0,
    level: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> Analysis:
    """The pairwise report of ``rubric`` (empty: of every pairwise rubric the study judged).

    Every table starts with a ``rubric`` column. With several rubrics, each figure's name ends
    in its rubric's and each line names it.

    Args:
        study: The loaded study.
        rubric: The pairwise rubric (empty: every one).
        baseline: The model the win rates are against (empty: each rubric's most frequent
            model).
        ties: Bradley-Terry's tie handling: ``half``, ``davidson`` or ``rao-kupper``.
        bt_alpha: Bradley-Terry's Gaussian prior on the strengths (0: maximum likelihood, which
            does not exist for a group that never wins or ties against the others; that
            group's ranking is then one ``skipped`` line).
        level: The interval level of every table.
        n_boot: Bootstrap replicates (seeded with ``seed``).
        seed: The seed of every bootstrap.
    """
    if ties not in ("half", "davidson", "rao-kupper"):
        raise UsageError(f"ties {ties!r}: use 'half', 'davidson' or 'rao-kupper'")
    rubrics = [rubric] if rubric else study.pairwise_rubrics()
    if not rubrics:
        study.comparisons(None)  # raises the one line naming what the study judged

    def one(name: str) -> Analysis:
        return _with_rubric(_one_rubric(study, name, baseline, ties, bt_alpha, level, n_boot,
                                        seed), name)  # fmt: skip

    if len(rubrics) == 1:
        return one(rubrics[0])
    result = Analysis("10_pairwise")
    for name in rubrics:
        part = one(name)
        for table, frame in part.tables.items():
            before = result.tables.get(table)
            result.tables[table] = frame if before is None else pd.concat(
                [before, frame], ignore_index=True
            )  # fmt: skip
        result.figures.update({f"{figure}_{name}": f for figure, f in part.figures.items()})
        result.lines += [
            f"skipped {line[8:].replace(': ', f' ({name}): ', 1)}"
            if line.startswith("skipped ") else f"{name}: {line}"
            for line in part.lines
        ]  # fmt: skip
    return result


def _with_rubric(result: Analysis, rubric: str) -> Analysis:
    """``result`` with a ``rubric`` column first in every table."""
    for name, table in result.tables.items():
        result.tables[name] = table.drop(columns="rubric", errors="ignore").assign(rubric=rubric)[
            ["rubric", *[c for c in table.columns if c != "rubric"]]
        ]
    return result


def _one_rubric(
    study: Study,
    rubric: str,
    baseline: str,
    ties: str,
    bt_alpha: float,
    level: float,
    n_boot: int,
    seed: int,
) -> Analysis:
    """:func:`pairwise_analysis` of one pairwise rubric."""
    from judgekit import plots, stats

    result = Analysis("10_pairwise")
    comparisons = study.comparisons(rubric)
    cluster = "cluster" if "cluster" in comparisons.columns else None
    unit = "prompt (question)" if cluster else "pair"
    design = f"{level:.0%} intervals; resampling unit: {unit}; {n_boot} replicates, seed {seed}"
    result.say(f"design: {design}")
    ci = CI("percentile", level=level, n_boot=n_boot, seed=seed)
    wilson = CI("analytic", level=level)
    both_orders = comparisons.groupby("pair_id")["order"].nunique().max() == 2
    outcomes = pair_outcomes(comparisons)

    shares = stats.outcome_shares(comparisons, ci=wilson, cluster=cluster)
    result.tables["outcome_shares"] = shares.assign(design=design)
    result.figures["pairwise_outcomes"] = plots.plot_outcome_shares(shares)
    consistency = stats.position_consistency(comparisons, ci=wilson, cluster=cluster)
    first = stats.first_position_win_rate(comparisons, ci=wilson, cluster=cluster)
    result.tables["position_bias"] = pd.concat([consistency, first]).assign(design=design)
    if not both_orders:
        result.skip("position consistency", "each pair was judged in one order only")

    parsed = games(comparisons)
    lengths = _answer_lengths(study)
    if lengths is None:
        result.skip("length bias", "items.csv holds no Answer_A / Answer_B to measure")
    else:
        played = parsed.merge(lengths, on="pair_id", how="left")
        rows = [
            stats.longer_answer_win_rate(part, cluster=cluster, ci=wilson).assign(**keys)
            for keys, part in _by_group(played)
        ]
        result.tables["length_bias"] = pd.concat(rows).assign(design=design)

    models = pd.concat([comparisons["model_a"], comparisons["model_b"]])
    chosen = baseline or str(models.value_counts().idxmax())
    if chosen not in set(models):
        raise UsageError(
            f"baseline {chosen!r} is no model of the study: {', '.join(sorted(set(models)))}"
        )
    ranking_rows, win_rows, lc_rows = [], [], []
    for keys, part in _by_group(parsed):
        try:
            ranking = stats.bradley_terry(part, cluster=cluster, ties=ties, alpha=bt_alpha, ci=ci)
            ranking_rows.append(ranking.assign(**keys))
        except ValueError as unbounded:  # no maximum-likelihood estimate: said, not drawn
            where = " · ".join(str(keys[k]) for k in GROUP)
            result.skip(f"Bradley–Terry ranking ({where})", str(unbounded).split(": ", 1)[1])
        win_rows.append(
            stats.win_rate_vs_baseline(part, chosen, cluster=cluster, ci=wilson).assign(**keys)
        )
        if lengths is not None:
            lc = stats.length_controlled_win_rate(
                part.merge(lengths, on="pair_id"), chosen, cluster=cluster, level=level
            )
            lc_rows.append(lc.assign(**keys))
    if ranking_rows:
        ranking = pd.concat(ranking_rows, ignore_index=True)
        result.tables["bradley_terry"] = ranking.assign(design=design)
        rater = ranking.assign(rater=lambda f: f["judge"] + " · " + f["variant"] + " · run " +
                               f["run"].astype(str))  # fmt: skip
        result.figures["pairwise_bradley_terry"] = plots.plot_strength_forest(
            rater, rater="rater", level=level
        )
    result.tables["win_rate_vs_baseline"] = pd.concat(win_rows).assign(design=design)
    if lc_rows:
        result.tables["length_controlled_win_rate"] = pd.concat(lc_rows).assign(design=design)
    result.say(f"win rates against baseline {chosen!r} (a tie is half a win)")

    judges = sorted(set(outcomes["judge"]))
    if len(judges) < 2:
        result.skip("judges against each other", "the study has one judge")
    else:
        view = view_inconsistent_as_tie(outcomes)
        view = view.loc[view["winner"] != ""]
        kappas = [  # the judges of one variant and run, against each other
            stats.rater_kappas(part.assign(rater=part["judge"], label=part["winner"]), ci=wilson)
            .assign(variant=str(part["variant"].iloc[0]), run=part["run"].iloc[0])
            for _, part in view.groupby(["variant", "run"], sort=True)
            if part["judge"].nunique() >= 2
        ]  # fmt: skip
        if kappas:
            result.tables["judge_kappas"] = pd.concat(kappas, ignore_index=True).assign(
                method="Cohen's kappa between judges (per-pair verdicts, a flip counts as a tie)",
                design=f"{level:.0%} analytic intervals",
            )

    labels = study.pair_labels(rubric).rename(columns={"verdict": "label"})
    summary = outcomes.groupby(GROUP).size().rename("n_pairs").reset_index()
    summary = summary.merge(
        _estimates(consistency, "position_consistency", GROUP), on=GROUP, how="left"
    )
    if labels.empty:
        result.skip("agreement with humans", "the study has no human pairwise labels")
    else:
        _human_parts(result, comparisons, labels, ci, wilson, cluster, design)
        accuracy = result.tables["accuracy"]
        accuracy = accuracy.loc[accuracy["measure"] == "accuracy"]
        summary = summary.merge(_estimates(accuracy, "accuracy", GROUP), on=GROUP, how="left")
        kappa = result.tables["kappa"]
        for order in ("ab", "ba"):
            part = _estimates(kappa.loc[kappa["order"] == order], f"kappa_{order}", GROUP)
            summary = summary.merge(part, on=GROUP, how="left")
    summary = summary.reindex(columns=[c for c in SUMMARY_COLUMNS if c != "rubric"])
    summary["kappa"] = summary[["kappa_ab", "kappa_ba"]].mean(axis=1)
    summary["level"], summary["design"] = level, design + "; kappa: mean of the two orders'"
    result.tables["pairwise_summary"] = summary
    return result


def _human_parts(
    result: Analysis,
    comparisons: pd.DataFrame,
    labels: pd.DataFrame,
    ci: CI,
    wilson: CI,
    cluster: str | None,
    design: str,
) -> None:
    """Agreement with the human labels, and between the human raters."""
    from judgekit import stats

    result.tables["human_s1_s2"] = stats.human_agreement_s1_s2(
        comparisons, labels, ci=wilson, cluster=cluster
    ).assign(design=design)
    result.tables["accuracy"] = stats.verdict_accuracy(
        comparisons, labels, ci=ci, cluster=cluster
    ).assign(design=design)
    result.tables["kappa"] = stats.verdict_kappa(comparisons, labels, ci=wilson).assign(
        design="analytic interval; every order its own table"
    )
    if labels["rater"].nunique() < 2:
        result.skip("inter-human agreement", "one human rater labelled the pairs")
    else:
        result.tables["human_kappas"] = stats.rater_kappas(labels, ci=wilson).assign(
            design=f"{wilson.level:.0%} analytic intervals"
        )
