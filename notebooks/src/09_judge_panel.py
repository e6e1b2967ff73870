# %% [markdown]
# # A panel of judges: agreement, shared errors, juries and cheaper panels
#
# Several judges scored the same items. This notebook asks what the panel is worth: how well
# the judges agree with each other and with the human, whether they make the *same* mistakes
# (then a jury of them is worth little more than one judge), whether a jury (mean, median,
# strict majority, Dawid–Skene, weights learned with cross-fitting) agrees with the human
# better than the best single judge, with an interval that re-picks the best judge in every
# resample, and which smaller panels are as good for less. Every interval resamples whole
# clusters (the question several answers respond to).
#
# Input: a study folder with two or more judges (`judgekit report` runs this notebook on it),
# or, with `judgments_path` empty, the Hungarian Riddles study's shipped scores (four real
# judges and the author's scores of 600 answers to 100 riddles; Károly Boczka, CC BY 4.0, see
# `data/README.md`).

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: the riddles study's scores
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
riddles_scores_path: str = ""  # riddles v2 scores (judgments_path empty); empty: data/ copy
variant: str = ""  # prompt variant analysed; empty: every variant judged
run: int = 1  # run analysed; 0: every run judged
judge_costs: dict = {}  # judge -> cost per item (any unit); empty: tokens per item, else 1
own_models: dict = {}  # judge -> the answering model of its family (self-preference)
kappa_weights: str = "quadratic"  # "quadratic", "linear" or "none"
cluster_column: str = "q_id"  # riddles: a riddle's answers resampled together (a study: its own)
subset_jury: str = "mean"  # how a subset of judges is combined: "mean", "median", "majority"
min_coverage: float = 0.95  # share of items a subset's jury must score to join the front
n_folds: int = 5  # cross-fitting folds (whole clusters) of the learned weights
n_boot: int = 2000  # bootstrap replicates
seed: int = 2025  # seed of every resampling step
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "judge_panel"

# %%
from dataclasses import replace

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.data.tidy import HUMAN, rater_table
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.riddles import RIDDLE_LABEL_SCALES, load_riddles_v2_scores
from judgekit.stats import (
    CI,
    Columns,
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
from judgekit.study.folder import figure_notes, load_study, output_folders
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "09_judge_panel")  # stops at an unknown parameter

plots.apply_style()
figures, tables = output_folders(figures_dir, output_dir, "judge_panel")
weights = None if kappa_weights == "none" else kappa_weights
INTERVAL = CI("percentile", n_boot=n_boot, seed=seed)
if judgments_path:  # a judgekit study: one long table per rubric, variant and run
    study = load_study(judgments_path, labels_path)
    verdicts = selected(study.verdicts, variant, run)
    judge_column = "judge"  # the panel member's label (two judges may share a model name)
    labelled = verdicts[verdicts["rubric"].isin(set(study.labels["rubric"]))]  # human needed
    keys, long = {}, {}
    for combination, rows in combinations(labelled, ["rubric", "variant", "run"]):
        name = label(combination)
        keys[name] = {"combination": name, **combination}
        long[name] = rater_table(rows, study.labels, rubric=combination["rubric"], rater="judge")
    rubrics = list(long)  # each combination is analysed as the riddles study's rubrics are
    scales = {n: study.rubric(keys[n]["rubric"]).scale.allowed for n in rubrics}
    human, author = HUMAN, "answer_model"
    # A batched request's tokens are counted once, then shared over the items it held.
    calls = verdicts.drop_duplicates("request_hash")
    spent = (calls["prompt_tokens"] + calls["completion_tokens"]).groupby(calls[judge_column]).sum()
    measured = spent / verdicts.groupby(judge_column)["item_id"].nunique()
    default_costs = measured.to_dict() if measured.notna().all() and measured.gt(0).all() else {}
    columns = Columns(cluster=study.cluster)  # the study names its cluster (or has none)
else:  # the riddles study: three dimensions, the author as the human
    scores = load_riddles_v2_scores(
        riddles_scores_path or config.DATA_DIR / "riddles_v2_scores.csv"
    )
    rubrics = ["accuracy", "reasoning", "grammar"]
    long = {d: scores[scores["dimension"] == d] for d in rubrics}
    scales = {d: RIDDLE_LABEL_SCALES[f"Human_{d.title()}"] for d in rubrics}
    human, author, judge_column = "Human", "model", "rater"
    default_costs = {}
    columns = Columns(item="output_id", cluster=cluster_column or None)
    keys = {d: {"rubric": d} for d in rubrics}
FIGURE = "panel" if judgments_path else "riddles_panel"  # riddles figures are committed
FACET = "combination" if judgments_path else "rubric"  # a study's: rubric · variant · run
JUDGES = [r for r in pd.unique(pd.concat([t[columns.rater] for t in long.values()])) if r != human]
# Each combination's panel: the judges that scored it (a judge added later may lack some).
panel_of = {r: [j for j in JUDGES if (long[r][columns.rater] == j).any()] for r in rubrics}
for r in [r for r in rubrics if len(panel_of[r]) < 2]:
    print(f"skipped {r}: judged by {panel_of[r]} only, a panel needs two or more judges")
rubrics = [r for r in rubrics if len(panel_of[r]) >= 2]
costs = judge_costs or default_costs or {judge: 1.0 for judge in JUDGES}
cost_label = (
    "Cost per item"
    if judge_costs
    else ("Tokens per item" if default_costs else "Judges asked per item")
)
print(f"judges: {JUDGES}; rubrics: {rubrics}; human: {human}; cost: {cost_label}")
assert rubrics, "a panel needs two or more judges scoring the same items"

# %% [markdown]
# ## Agreement between the judges
#
# Cohen's kappa for every pair of judges (weights as `kappa_weights`, equal steps between
# levels), Krippendorff's interval alpha on the same steps and Fleiss' kappa across the panel.

# %%
agreement = pd.concat(
    [
        panel_agreement(
            long[r], panel_of[r], scale=scales[r], weights=weights, ci=INTERVAL, columns=columns
        ).assign(**keys[r])
        for r in rubrics
    ],
    ignore_index=True,
)
write_table(agreement, tables / "panel_agreement.csv")
display(
    agreement[
        [FACET, "statistic", "rater_a", "rater_b", "estimate", "ci_low", "ci_high", "n"]
    ].round(3)
)
for line in figure_notes(agreement, [FACET, "statistic", "rater_a", "rater_b"]):
    print(line)
pairs = agreement[agreement["statistic"] == "cohen_kappa"]
KAPPA_NAME = "Cohen's kappa" if weights is None else f"{weights.capitalize()} weighted kappa"
fig = plots.plot_pair_matrix(
    pairs.assign(**{FACET: pairs[FACET].str.title()}),
    panel=FACET,
    order=JUDGES,
    limits=(0.0, 1.0),
    colour_label=f"{KAPPA_NAME} between judges",
)
saved = plots.save_figure(fig, f"{FIGURE}_judge_agreement", folder=figures)
defined = pairs.dropna(subset=["estimate"])
panel_rows = agreement[agreement["statistic"] == "krippendorff_alpha"].set_index(FACET)["estimate"]
if len(defined):
    lowest = defined.loc[defined["estimate"].idxmin()]
    print(
        f"Lowest pair: {lowest['rater_a']} and {lowest['rater_b']} on {lowest[FACET]} "
        f"({lowest['estimate']:.2f}); panel alpha "
        + ", ".join(f"{r} {a:.2f}" for r, a in panel_rows.items())
    )
else:
    print("No pairwise kappa is defined (see the notes above)")

# %% [markdown]
# **Figure: agreement between every pair of judges** (weighted kappa; colours fixed from 0 to
# 1, a negative kappa takes the darkest colour and keeps its printed value). The printed line
# above names the pair that agrees least and the panel's alpha per rubric.

# %% [markdown]
# ## Shared errors
#
# Each judge's error is its score minus the human's (in scale steps), centred within each
# human score (on a bounded scale an answer the human scored 0 can only be over-scored, which
# would correlate independent judges). `r` is the correlation of two judges' errors; with the
# mean pairwise `r̄`, a mean of k judges has the error variance of `k / (1 + (k − 1) r̄)`
# independent ones (Kish's design effect): the panel's effective number of judges.

# %%
errors = pd.concat(
    [
        error_correlation(
            long[r], panel_of[r], human=human, scale=scales[r], ci=INTERVAL, columns=columns
        ).assign(**keys[r])
        for r in rubrics
    ],
    ignore_index=True,
)
write_table(errors, tables / "error_correlation.csv")
display(
    errors[[FACET, "statistic", "rater_a", "rater_b", "estimate", "ci_low", "ci_high", "n"]].round(
        3
    )
)
for line in figure_notes(errors, [FACET, "statistic", "rater_a", "rater_b"]):
    print(line)
correlations = errors[errors["statistic"] == "error_correlation"]
fig = plots.plot_pair_matrix(
    correlations.assign(**{FACET: correlations[FACET].str.title()}), panel=FACET, order=JUDGES,
    limits=(-1.0, 1.0), cmap="PuOr_r", colour_label="Correlation of errors vs the human",
)  # fmt: skip
saved = plots.save_figure(fig, f"{FIGURE}_error_correlation", folder=figures)
n_eff = errors[errors["statistic"] == "effective_judges"].set_index(FACET)
print(
    f"{len(JUDGES)} judges (each combination's panel) are worth "
    + "; ".join(
        f"{r}: {row.estimate:.2f} ({row.ci_low:.2f}-{row.ci_high:.2f})"
        for r, row in n_eff.iterrows()
    )
    + " independent judges"
)

# %% [markdown]
# **Figure: how much the judges' mistakes move together** (correlation of errors against the
# human, centred within each human score; colours fixed from −1 to 1). The printed line gives
# the effective number of independent judges with its 95% interval.

# %% [markdown]
# ## Juries against the human, beside every judge
#
# Mean and median (the nearest scale level; exactly midway is a tie), strict majority (more
# than half of the whole panel, a failed judge counting as no vote), Dawid–Skene (no labels
# used) and weights learned from the human labels, each item scored with weights fitted on the
# other folds of whole clusters. An item a jury cannot score is dropped from its row and
# counted with its reason (tie, no majority, judge unscored), never guessed.

# %%
full, models = {}, []
for r in rubrics:
    simple = jury_scores(long[r], panel_of[r], scale=scales[r], columns=columns)
    ds = dawid_skene(long[r], panel_of[r], scale=scales[r], columns=columns)
    units = long[r][columns.cluster or columns.item].nunique()  # a fold holds whole clusters
    learned = cross_fitted_weights(
        long[r], panel_of[r], human=human, scale=scales[r], columns=columns,
        n_folds=min(n_folds, units), seed=seed,
    )  # fmt: skip
    full[r] = with_juries(long[r], simple, ds.scores, learned.scores, columns=columns)
    models.append(ds.confusion.assign(**keys[r], converged=ds.converged, iterations=ds.iterations))
JURIES = ["jury:mean", "jury:median", "jury:majority", "jury:dawid_skene", "jury:weights"]
juries = pd.concat(
    [full[r][full[r][columns.rater].isin(JURIES)].assign(**keys[r]) for r in rubrics],
    ignore_index=True,
)
write_table(juries, tables / "jury_scores.csv")
write_table(pd.concat(models, ignore_index=True), tables / "dawid_skene_confusion.csv")
display(juries.groupby([FACET, columns.rater])[columns.status].value_counts().unstack(fill_value=0))

# %%
vs_human = pd.concat(
    [
        versus_human(
            full[r],
            [*panel_of[r], *JURIES],
            human=human,
            scale=scales[r],
            weights=weights,
            ci=INTERVAL,
            columns=columns,
        ).assign(**keys[r])
        for r in rubrics
    ],
    ignore_index=True,
)
write_table(vs_human, tables / "judges_and_juries_vs_human.csv")
display(
    vs_human[
        [FACET, "kind", "rater_b", "estimate", "ci_low", "ci_high", "n", "dropped_reason"]
    ].round(3)
)
fig = plots.plot_kappa_forest(
    vs_human,
    label=[FACET, "rater_b"],
    colour_by="kind",
    xlabel=f"{KAPPA_NAME} with the human (95% CI, clusters resampled)",
)
saved = plots.save_figure(fig, f"{FIGURE}_forest", folder=figures)

# %% [markdown]
# **Figure: every judge and every jury against the human.** Dots are weighted kappas, bars
# 95% cluster-bootstrap intervals; a jury's row counts only the items it scored (see `n` and
# `dropped_reason` above).

# %% [markdown]
# ## Jury against the best single judge
#
# The paired difference in kappa with the human, on the items every judge and the jury
# scored. The best judge is picked after looking, so the interval picks it again inside every
# resample (`ci_low`, `ci_high`); the naive interval keeps the judge chosen once.

# %%
versus_best = pd.concat(
    [
        jury_vs_best(
            full[r],
            panel_of[r],
            JURIES,
            human=human,
            scale=scales[r],
            weights=weights,
            ci=INTERVAL,
            columns=columns,
        ).assign(**keys[r])
        for r in rubrics
    ],
    ignore_index=True,
)
write_table(versus_best, tables / "jury_vs_best_judge.csv")
shown = [
    FACET,
    "jury",
    "best_judge",
    "estimate",
    "ci_low",
    "ci_high",
    "naive_ci_low",
    "naive_ci_high",
    "share_jury_ahead",
    "n",
]
display(versus_best[shown].round(3))
ahead = versus_best[versus_best["ci_low"] > 0]
behind = versus_best[versus_best["ci_high"] < 0]
print(
    f"{len(ahead)} of {len(versus_best)} jury x rubric pairs beat the best judge with the "
    f"selection-aware 95% interval above 0"
    + (
        ": "
        + ", ".join(
            f"{r['jury']} on {r[FACET]} (+{r['estimate']:.3f})" for r in ahead.to_dict("records")
        )
        if len(ahead)
        else ""
    )
    + f"; {len(behind)} are worse with the interval below 0."
)

# %% [markdown]
# ## Cheaper panels
#
# Every subset of the judges, combined by `subset_jury`, with its agreement with the human and
# its cost; the Pareto front holds the subsets no other subset beats on both. A subset whose
# jury leaves many items unscored (ties) is drawn hollow and kept off the front.

# %%
subsets = pd.concat(
    [
        panel_subsets(
            long[r], panel_of[r], human=human, cost=costs, jury=subset_jury,
            min_coverage=min_coverage, scale=scales[r], weights=weights, ci=INTERVAL,
            columns=columns,
        ).assign(**keys[r])
        for r in rubrics
    ],
    ignore_index=True,
)  # fmt: skip
write_table(subsets, tables / "panel_subsets.csv")
display(
    subsets[[FACET, "subset", "cost", "coverage", "pareto", "estimate", "ci_low", "ci_high"]].round(
        3
    )
)
fig = plots.plot_subset_costs(
    subsets,
    panel=FACET,
    min_coverage=min_coverage,
    cost_label=cost_label,
    ylabel=f"{KAPPA_NAME} with the human (95% CI)",
)
saved = plots.save_figure(fig, f"{FIGURE}_subsets_cost", folder=figures)
for r, rows in subsets.groupby(FACET, sort=False):
    front = rows[rows["pareto"]]
    print(
        f"{r}: Pareto front "
        + "; ".join(f"{s.subset} ({s.cost:g}, {s.estimate:.3f})" for s in front.itertuples())
    )

# %% [markdown]
# **Figure: agreement with the human against cost for every subset of the panel.** Vermillion:
# the Pareto front (step line); hollow dots: subsets whose jury scored fewer than
# `min_coverage` of the items. The lines above list each rubric's front (cost, kappa).

# %% [markdown]
# ## Self-preference across the panel
#
# A judge's scores of its own family's answers against the other judges' scores of the same
# answers, and against the human; errors clustered by question, Holm across judges.

# %%
own = own_models or {judge: judge for judge in JUDGES}
# The regressions cluster their errors; without a cluster column each item is its own.
by_question = replace(columns, cluster=columns.cluster or columns.item)
authored = {
    r: t
    for r, t in long.items()
    if r in rubrics and author in t.columns and t[author].isin(list(own.values())).any()
}
if authored:
    self_pref = pd.concat(
        [
            panel_self_preference(
                t,
                panel_of[r],
                human=human,
                own=own,
                author_col=author,
                columns=by_question,
                seed=seed,
            ).assign(**keys[r])
            for r, t in authored.items()
        ],
        ignore_index=True,
    )
    across = self_pref[self_pref["method"].isin(PANEL_METHODS)]
    write_table(across, tables / "self_preference_panel.csv")
    display(
        across[
            [FACET, "judge", "method", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted"]
        ].round(3)
    )
else:
    print("skipped: no answers written by a judge's own family (set own_models: judge -> model)")
