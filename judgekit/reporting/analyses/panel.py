"""Report step 09: what a panel of judges is worth, against the human.

For each (rubric, variant, run) two or more judges scored and a human labelled (or each
dimension of the riddles study, :func:`riddles_panel_analysis`): the judges' agreement with
each other, how much their errors against the human move together (and the effective number
of independent judges), every jury (mean, median, strict majority, Dawid-Skene, cross-fitted
weights) and judge against the human, each jury against the best single judge with a
selection-aware interval, every subset of the panel against its cost, and self-preference
across the panel. Every interval resamples whole clusters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.stats import CI, Columns
from judgekit.study.folder import Study

JURIES = ["jury:mean", "jury:median", "jury:majority", "jury:dawid_skene", "jury:weights"]


@dataclass
class _Panel:
    """What the analysis reads, whichever source: one long table per facet, and its naming."""

    long: dict[str, pd.DataFrame]  # each facet's rater table (judges and the human)
    scales: dict[str, tuple[float, ...]]
    keys: dict[str, dict[str, Any]]  # the columns each facet's rows carry
    human: str
    author: str  # the column naming who wrote each answer
    default_costs: dict[Any, float]
    columns: Columns
    figure: str  # figure stem prefix
    facet: str  # the column naming each facet in tables and figures


@step("09_judge_panel")
def panel_analysis(
    study: Study,
    *,
    variant: str = "",
    run: int = 1,
    judge_costs: Mapping[str, float] | None = None,
    own_models: Mapping[str, str] | None = None,
    kappa_weights: str = "quadratic",
    subset_jury: str = "mean",
    min_coverage: float = 0.95,
    n_folds: int = 5,
    n_boot: int = 2000,
    seed: int = 2025,
) -> Analysis:
    """The panel of every (rubric, variant, run) of ``study`` two or more judges scored.

    Only the rubrics with human labels are analysed; each combination is named
    ``rubric · variant · run N`` (the ``combination`` column), its judges by their labels.

    Args:
        study: The loaded study.
        variant: The prompt variant analysed (empty: every variant judged).
        run: The run analysed (0: every run judged).
        judge_costs: Judge -> cost per item (empty: the judge's tokens per item, else 1).
        own_models: Judge -> the answering model of its family (empty: each judge its own).
        kappa_weights: ``quadratic``, ``linear`` or ``none``.
        subset_jury: How a subset of judges is combined: ``mean``, ``median``, ``majority``.
        min_coverage: Share of items a subset's jury must score to join the Pareto front.
        n_folds: Cross-fitting folds (whole clusters) of the learned weights.
        n_boot: Bootstrap replicates.
        seed: Seed of every resampling step.

    Returns:
        Tables ``panel_agreement``, ``error_correlation``, ``jury_scores``,
        ``dawid_skene_confusion``, ``judges_and_juries_vs_human``, ``jury_vs_best_judge``,
        ``panel_subsets`` and ``self_preference_panel``; figures ``panel_judge_agreement``,
        ``panel_error_correlation``, ``panel_forest`` and ``panel_subsets_cost``. No table when
        no combination has two judges (its ``skipped`` lines say why).
    """
    from judgekit.data.tidy import HUMAN, rater_table
    from judgekit.reporting.combinations import combinations, label, selected

    verdicts = selected(study.verdicts, variant, run)
    labelled = verdicts[verdicts["rubric"].isin(set(study.labels["rubric"]))]  # human needed
    keys, long = {}, {}
    for combination, rows in combinations(labelled, ["rubric", "variant", "run"]):
        name = label(combination)
        keys[name] = {"combination": name, **combination}
        long[name] = rater_table(rows, study.labels, rubric=combination["rubric"], rater="judge")
    # A batched request's tokens are counted once, then shared over the items it held.
    calls = verdicts.drop_duplicates("request_hash")
    spent = (calls["prompt_tokens"] + calls["completion_tokens"]).groupby(calls["judge"]).sum()
    measured = spent / verdicts.groupby("judge")["item_id"].nunique()
    panel = _Panel(
        long=long,
        scales={n: study.rubric(keys[n]["rubric"]).scale.allowed for n in long},
        keys=keys,
        human=HUMAN,
        author="answer_model",
        default_costs=measured.to_dict() if measured.notna().all() and measured.gt(0).all() else {},
        columns=Columns(cluster=study.cluster),  # the study names its cluster (or has none)
        figure="panel",
        facet="combination",
    )
    return _analyse(panel, judge_costs or {}, own_models or {}, kappa_weights, subset_jury,
                    min_coverage, n_folds, n_boot, seed)  # fmt: skip


def riddles_panel_analysis(
    *,
    scores_path: str = "",
    cluster_column: str = "q_id",
    judge_costs: Mapping[str, float] | None = None,
    own_models: Mapping[str, str] | None = None,
    kappa_weights: str = "quadratic",
    subset_jury: str = "mean",
    min_coverage: float = 0.95,
    n_folds: int = 5,
    n_boot: int = 2000,
    seed: int = 2025,
) -> Analysis:
    """The panel of the riddles study: four judges and the author on three dimensions.

    What notebook 09 reproduces without a study (``judgekit paper``, ``make figures``); its
    figures are committed, named ``riddles_panel_*``.

    Args:
        scores_path: The riddles v2 scores (empty: ``config.DATA_DIR``'s copy).
        cluster_column: The column whose rows are resampled together (empty: none).
        judge_costs: Judge -> cost per item (empty: 1 per judge).
        own_models: Judge -> the answering model of its family (empty: each judge its own).
        kappa_weights: ``quadratic``, ``linear`` or ``none``.
        subset_jury: How a subset of judges is combined: ``mean``, ``median``, ``majority``.
        min_coverage: Share of items a subset's jury must score to join the Pareto front.
        n_folds: Cross-fitting folds (whole clusters) of the learned weights.
        n_boot: Bootstrap replicates.
        seed: Seed of every resampling step.

    Returns:
        The tables of :func:`panel_analysis` (a ``rubric`` column naming each dimension) and
        its figures, each named ``riddles_panel_*``.
    """
    from judgekit import config
    from judgekit.riddles import RIDDLE_LABEL_SCALES, load_riddles_v2_scores

    scores = load_riddles_v2_scores(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
    rubrics = ["accuracy", "reasoning", "grammar"]
    panel = _Panel(
        long={d: scores[scores["dimension"] == d] for d in rubrics},
        scales={d: RIDDLE_LABEL_SCALES[f"Human_{d.title()}"] for d in rubrics},
        keys={d: {"rubric": d} for d in rubrics},
        human="Human",
        author="model",
        default_costs={},
        columns=Columns(item="output_id", cluster=cluster_column or None),
        figure="riddles_panel",  # committed figures
        facet="rubric",
    )
    return _analyse(panel, judge_costs or {}, own_models or {}, kappa_weights, subset_jury,
                    min_coverage, n_folds, n_boot, seed)  # fmt: skip


def _analyse(
    p: _Panel,
    judge_costs: Mapping[str, float],
    own_models: Mapping[str, str],
    kappa_weights: str,
    subset_jury: str,
    min_coverage: float,
    n_folds: int,
    n_boot: int,
    seed: int,
) -> Analysis:
    """The panel's tables, figures and lines (see :func:`panel_analysis`)."""
    from judgekit import plots
    from judgekit.stats import (
        cross_fitted_weights,
        dawid_skene,
        error_correlation,
        jury_scores,
        jury_vs_best,
        panel_agreement,
        panel_self_preference,
        panel_subsets,
        versus_human,
        with_juries,
    )
    from judgekit.stats.bias_panel import PANEL_METHODS
    from judgekit.study.folder import figure_notes

    result = Analysis("09_judge_panel")
    long, scales, keys, columns, facet = p.long, p.scales, p.keys, p.columns, p.facet
    weights = None if kappa_weights == "none" else kappa_weights
    interval = CI("percentile", n_boot=n_boot, seed=seed)
    judges = [r for r in pd.unique(pd.concat([t[columns.rater] for t in long.values()]))
              if r != p.human]  # fmt: skip
    # Each facet's panel: the judges that scored it (a judge added later may lack some).
    panel_of = {r: [j for j in judges if (long[r][columns.rater] == j).any()] for r in long}
    for r in [r for r in long if len(panel_of[r]) < 2]:
        result.skip(r, f"judged by {panel_of[r]} only, a panel needs two or more judges")
    rubrics = [r for r in long if len(panel_of[r]) >= 2]
    costs = dict(judge_costs) or p.default_costs or {judge: 1.0 for judge in judges}
    cost_label = ("Cost per item" if judge_costs else
                  "Tokens per item" if p.default_costs else "Judges asked per item")  # fmt: skip
    result.say(f"judges: {judges}; rubrics: {rubrics}; human: {p.human}; cost: {cost_label}")
    if not rubrics:
        return result
    kappa_name = "Cohen's kappa" if weights is None else f"{weights.capitalize()} weighted kappa"
    common: dict[str, Any] = {"human": p.human, "columns": columns}

    def each(function: Any, /, *args: Any, **kwargs: Any) -> pd.DataFrame:
        """``function`` on every facet (its table, panel and scale), tagged with its keys."""
        return pd.concat(
            [function(long[r], panel_of[r], *args, scale=scales[r], **kwargs).assign(**keys[r])
             for r in rubrics],
            ignore_index=True,
        )  # fmt: skip

    # agreement between the judges
    agreement = each(panel_agreement, weights=weights, ci=interval, columns=columns)
    result.tables["panel_agreement"] = agreement
    result.lines += figure_notes(agreement, [facet, "statistic", "rater_a", "rater_b"])
    pairs = agreement[agreement["statistic"] == "cohen_kappa"]
    result.figures[f"{p.figure}_judge_agreement"] = plots.plot_pair_matrix(
        pairs.assign(**{facet: pairs[facet].str.title()}), panel=facet, order=judges,
        limits=(0.0, 1.0), colour_label=f"{kappa_name} between judges",
    )  # fmt: skip
    defined = pairs.dropna(subset=["estimate"])
    alpha = agreement[agreement["statistic"] == "krippendorff_alpha"].set_index(facet)["estimate"]
    if len(defined):
        lowest = defined.iloc[defined["estimate"].to_numpy().argmin()]  # the first lowest
        result.say(
            f"Lowest pair: {lowest['rater_a']} and {lowest['rater_b']} on {lowest[facet]} "
            f"({lowest['estimate']:.2f}); panel alpha "
            + ", ".join(f"{r} {a:.2f}" for r, a in alpha.items())
        )
    else:
        result.say("No pairwise kappa is defined (see the notes above)")

    # shared errors, and the panel's effective number of judges
    errors = each(error_correlation, ci=interval, **common)
    result.tables["error_correlation"] = errors
    result.lines += figure_notes(errors, [facet, "statistic", "rater_a", "rater_b"])
    correlations = errors[errors["statistic"] == "error_correlation"]
    result.figures[f"{p.figure}_error_correlation"] = plots.plot_pair_matrix(
        correlations.assign(**{facet: correlations[facet].str.title()}), panel=facet,
        order=judges, limits=(-1.0, 1.0), cmap="PuOr_r",
        colour_label="Correlation of errors vs the human",
    )  # fmt: skip
    n_eff = errors[errors["statistic"] == "effective_judges"].set_index(facet)
    worth = "; ".join(f"{r}: {row.estimate:.2f} ({row.ci_low:.2f}-{row.ci_high:.2f})"
                      for r, row in n_eff.iterrows())  # fmt: skip
    panel_size = f"{len(judges)} judges (each combination's panel)"
    result.say(f"{panel_size} are worth {worth} independent judges")

    # juries beside every judge, against the human
    full, models = {}, []
    for r in rubrics:
        simple = jury_scores(long[r], panel_of[r], scale=scales[r], columns=columns)
        ds = dawid_skene(long[r], panel_of[r], scale=scales[r], columns=columns)
        units = long[r][columns.cluster or columns.item].nunique()  # a fold: whole clusters
        learned = cross_fitted_weights(
            long[r], panel_of[r], scale=scales[r], n_folds=min(n_folds, units), seed=seed,
            **common,
        )  # fmt: skip
        full[r] = with_juries(long[r], simple, ds.scores, learned.scores, columns=columns)
        models.append(
            ds.confusion.assign(**keys[r], converged=ds.converged, iterations=ds.iterations)
        )
    result.tables["jury_scores"] = pd.concat(
        [full[r][full[r][columns.rater].isin(JURIES)].assign(**keys[r]) for r in rubrics],
        ignore_index=True,
    )
    result.tables["dawid_skene_confusion"] = pd.concat(models, ignore_index=True)
    with_jury: dict[str, Any] = {"weights": weights, "ci": interval, **common}
    vs_human = pd.concat(
        [versus_human(full[r], [*panel_of[r], *JURIES], scale=scales[r], **with_jury)
         .assign(**keys[r]) for r in rubrics],
        ignore_index=True,
    )  # fmt: skip
    result.tables["judges_and_juries_vs_human"] = vs_human
    result.figures[f"{p.figure}_forest"] = plots.plot_kappa_forest(
        vs_human, label=[facet, "rater_b"], colour_by="kind",
        xlabel=f"{kappa_name} with the human (95% CI, clusters resampled)",
    )  # fmt: skip

    # each jury against the best single judge, re-picked in every resample
    versus_best = pd.concat(
        [jury_vs_best(full[r], panel_of[r], JURIES, scale=scales[r], **with_jury)
         .assign(**keys[r]) for r in rubrics],
        ignore_index=True,
    )  # fmt: skip
    result.tables["jury_vs_best_judge"] = versus_best
    ahead = versus_best[versus_best["ci_low"] > 0]
    behind = versus_best[versus_best["ci_high"] < 0]
    beaten = ", ".join(f"{r['jury']} on {r[facet]} (+{r['estimate']:.3f})"
                       for r in ahead.to_dict("records"))  # fmt: skip
    result.say(
        f"{len(ahead)} of {len(versus_best)} jury x rubric pairs beat the best judge with the "
        f"selection-aware 95% interval above 0"
        + (f": {beaten}" if len(ahead) else "")
        + f"; {len(behind)} are worse with the interval below 0."
    )

    # cheaper panels: every subset of the judges against its cost
    subsets = each(panel_subsets, cost=costs, jury=subset_jury, min_coverage=min_coverage,
                   weights=weights, ci=interval, **common)  # fmt: skip
    result.tables["panel_subsets"] = subsets
    result.figures[f"{p.figure}_subsets_cost"] = plots.plot_subset_costs(
        subsets, panel=facet, min_coverage=min_coverage, cost_label=cost_label,
        ylabel=f"{kappa_name} with the human (95% CI)",
    )  # fmt: skip
    for name, rows in subsets.groupby(facet, sort=False):
        front = rows[rows["pareto"]]
        result.say(f"{name}: Pareto front " + "; ".join(
            f"{s.subset} ({s.cost:g}, {s.estimate:.3f})" for s in front.itertuples()))  # fmt: skip

    # self-preference across the panel; without a cluster column each item is its own
    chosen: Mapping[Any, Any] = own_models or {judge: judge for judge in judges}
    own: dict[object, object] = dict(chosen)
    by_question = replace(columns, cluster=columns.cluster or columns.item)
    authored = [
        r for r in rubrics
        if p.author in long[r].columns and long[r][p.author].isin(list(own.values())).any()
    ]  # fmt: skip
    if not authored:
        why = "no answers written by a judge's own family (set own_models: judge -> model)"
        result.skip("self-preference across the panel", why)
        return result
    self_pref = pd.concat(
        [panel_self_preference(long[r], panel_of[r], human=p.human, own=own, author_col=p.author,
                               columns=by_question, seed=seed).assign(**keys[r])
         for r in authored],
        ignore_index=True,
    )  # fmt: skip
    result.tables["self_preference_panel"] = self_pref[self_pref["method"].isin(PANEL_METHODS)]
    return result
