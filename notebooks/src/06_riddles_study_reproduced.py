# %% [markdown]
# # The Hungarian riddles study, reproduced
#
# Data: the **Hungarian Riddles Benchmark v2** by **Károly Boczka**
# ([boczkakaroly/ai-and-data-projects](https://github.com/boczkakaroly/ai-and-data-projects),
# CC BY 4.0; see `data/README.md`). 100 riddles about Hungarian culture were answered by three
# models (Claude, Gemini, GPT), each once through its API and once through its chat UI: 600
# outputs. The author (the human rater) and four LLM judges (Perplexity, GPT, Gemini, Claude)
# scored every output on **accuracy** (0/3/5), **reasoning** (0–5) and **grammar** (0–5).
#
# This notebook recomputes the study's reliability numbers with judgekit's statistics and checks
# them against the published values, then adds what the study could not: intervals, the
# self-evaluation bias controlled for the true quality, and the summaries behind its claims.

# %% tags=["parameters"]
scores_path: str = ""  # v2 scores CSV; empty: config.DATA_DIR / "riddles_v2_scores.csv"
kappa_weights: str = "quadratic"  # Cohen's kappa weights: "quadratic", "linear" or "none"
ci_method: str = "analytic"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates (bootstrap intervals only)
cluster_column: str = "q_id"  # answers to one riddle are not independent: resample riddles
p_adjust: str = "holm"  # correction of a family of tests: "holm" or "fdr_bh"
seed: int = 2025  # seed of every resampling step
check_published: bool = True  # assert the published numbers (only valid on the original file)
tolerance: float = 0.001  # largest allowed gap to a published number
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "riddles_study"

# %%
from dataclasses import replace
from functools import partial

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.riddles import (
    RATER_ORDER,
    RIDDLE_LABEL_SCALES,
    composite_score,
    grammar_rule_status,
    load_riddles_v2_scores,
    riddles_v2_wide,
    topic_difficulty,
    two_group_comparison,
    value_rate,
)
from judgekit.stats import CI, Columns
from judgekit.stats.agreement import cohen_kappa
from judgekit.stats.bias_panel import PANEL_METHODS, panel_self_preference
from judgekit.stats.confusion import confusion_table
from judgekit.stats.multirater import krippendorff_alpha
from judgekit.stats.significance import adjust_p
from judgekit.study.folder import output_folders
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "06_riddles_study_reproduced")  # stops at an unknown parameter

plots.apply_style()
figures, tables = output_folders(figures_dir, output_dir, "riddles_study")
scores = load_riddles_v2_scores(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
DIMENSIONS = ("accuracy", "reasoning", "grammar")
SCALES = {d: RIDDLE_LABEL_SCALES[f"Human_{d.title()}"] for d in DIMENSIONS}
JUDGES = [r for r in RATER_ORDER if r != "Human"]
weights = None if kappa_weights == "none" else kappa_weights
INTERVAL = CI(ci_method, n_boot=n_boot, seed=seed)  # the kappa interval asked for
BY_RIDDLE_CI = replace(INTERVAL, method="percentile")  # riddles resampled whole
ANSWERS = Columns(item="output_id")
BY_RIDDLE = Columns(item="output_id", cluster=cluster_column)
print(f"{scores['output_id'].nunique()} outputs, raters {list(pd.unique(scores['rater']))}")
assert scores["output_id"].nunique() == 600
assert set(scores["rater"]) == set(RATER_ORDER)

# %% [markdown]
# ## Human versus each judge: weighted kappa
#
# Cohen's kappa with quadratic weights, with a 95% interval (large-sample standard error of
# Fleiss, Cohen and Everitt, 1969, unless a bootstrap is asked for). On the accuracy scale
# 0/3/5 the distance between two scores can be read two ways: as equal steps between levels
# (0-3 as far as 3-5: the study's choice, sklearn's) or as the values themselves (0-3 farther
# than 3-5). The table shows the study's figure and the other beside it.

# %%
# Each kappa also gets a riddle-clustered interval here, shown in its own section below.
kappa_rows, clustered_rows = [], []
for dimension in DIMENSIONS:
    ratings = scores[scores["dimension"] == dimension]
    for judge in JUDGES:
        scale = SCALES[dimension]
        kappa = partial(cohen_kappa, ratings, "Human", judge, scale=scale, weights=weights)
        for basis in ("rank", "value"):
            row = kappa(weight_basis=basis, ci=INTERVAL, columns=ANSWERS)
            kappa_rows.append(row.assign(dimension=dimension, distance=basis))
        row = kappa(ci=BY_RIDDLE_CI, columns=BY_RIDDLE)
        clustered_rows.append(row.assign(dimension=dimension))
both_distances = pd.concat(kappa_rows, ignore_index=True)
kappas = both_distances[both_distances["distance"] == "rank"].reset_index(drop=True)
write_table(both_distances, tables / "kappa_human_vs_judges.csv")
print("Distance on each scale: rank = equal steps (the study's), value = the scores themselves.")
display(
    both_distances.pivot(index="rater_b", columns=["dimension", "distance"], values="estimate")
    .reindex(index=JUDGES, columns=pd.MultiIndex.from_product([DIMENSIONS, ["rank", "value"]]))
    .round(3)
)

# %%
PUBLISHED_KAPPA = {
    "accuracy": {"Perplexity": 0.896, "GPT": 0.884, "Gemini": 0.918, "Claude": 0.893},
    "reasoning": {"Perplexity": 0.876, "GPT": 0.870, "Gemini": 0.893, "Claude": 0.885},
    "grammar": {"Perplexity": 0.533, "GPT": 0.423, "Gemini": 0.101, "Claude": 0.362},
}
if check_published:
    assert weights == "quadratic", "the published kappas are quadratic-weighted"
    for row in kappas.itertuples():
        published = PUBLISHED_KAPPA[row.dimension][row.rater_b]
        gap = abs(row.estimate - published)
        assert gap <= tolerance, f"{row.dimension}/{row.rater_b}: {row.estimate:.4f} vs {published}"
    print("All 12 kappas match the published values within", tolerance)

# %%
fig = plots.plot_kappa_forest(
    kappas.assign(dimension=kappas["dimension"].str.title()),
    label=["dimension", "rater_b"],
    colour_by="dimension",
    xlabel="Human vs judge, quadratic weighted kappa (95% CI)",
)
saved = plots.save_figure(fig, "riddles_kappa_forest", folder=figures)

# %% [markdown]
# **Figure: agreement of each LLM judge with the human rater.** Dots are quadratic weighted
# kappas, bars their 95% intervals; dotted lines mark 0.6 and 0.8. Accuracy and reasoning agree
# closely for all four judges; grammar does not, and Gemini's grammar scores are barely related
# to the human's.

# %% [markdown]
# ## The same kappas with riddles as the resampling unit
#
# The 600 answers are 100 riddles answered six times, and answers to one riddle are alike. The
# cluster bootstrap below draws riddles with replacement (all six answers of a drawn riddle
# come along); the design effect is the clustered interval's width over the width when answers
# are resampled one by one (both percentile, same replicates count and seed). Distance: equal
# steps between levels, as in the published kappas above.

# %%
clustered_kappas = pd.concat(clustered_rows, ignore_index=True)
write_table(clustered_kappas, tables / "kappa_human_vs_judges_clustered.csv")
shown_columns = ["dimension", "rater_b", "estimate", "naive_ci_low", "naive_ci_high"]
display(
    clustered_kappas[[*shown_columns, "ci_low", "ci_high", "n_clusters", "design_effect"]].round(3)
)
deff = clustered_kappas["design_effect"]
print(
    f"Resampling riddles instead of answers widens the kappa intervals by a median "
    f"{deff.median():.2f}x (range {deff.min():.2f}-{deff.max():.2f}x) over "
    f"{int(clustered_kappas['n_clusters'].iloc[0])} riddles."
)
assert (clustered_kappas["estimate"] - kappas["estimate"]).abs().max() < 1e-12

# %% [markdown]
# ## All five raters: Krippendorff's alpha (interval)

# %% [markdown]
# Interval alpha uses the scores' values as distances (on accuracy, 0-3 counts more than 3-5):
# the study's figure. Beside it, alpha on equal steps (each score replaced by its level's rank),
# the distance the kappas above use, and the riddle-clustered bootstrap interval.

# %%
alpha_rows = []
for dimension in DIMENSIONS:
    ratings = scores[scores["dimension"] == dimension]
    rank_of = {value: rank for rank, value in enumerate(SCALES[dimension])}
    steps = ratings.assign(score=ratings["score"].map(rank_of))
    for distance, table in (("value", ratings), ("rank", steps)):
        levels = SCALES[dimension] if distance == "value" else range(len(SCALES[dimension]))
        row = krippendorff_alpha(
            table,
            level_of_measurement="interval",
            scale=tuple(levels),
            ci=BY_RIDDLE_CI,
            columns=BY_RIDDLE,
        )
        alpha_rows.append(row.assign(dimension=dimension, distance=distance))
both_alphas = pd.concat(alpha_rows, ignore_index=True)
alphas = both_alphas[both_alphas["distance"] == "value"].reset_index(drop=True)
write_table(both_alphas, tables / "krippendorff_alpha.csv")
display(
    both_alphas[
        ["dimension", "distance", "estimate", "ci_low", "ci_high", "design_effect", "n"]
    ].round(3)
)
PUBLISHED_ALPHA = {"accuracy": 0.915, "reasoning": 0.883, "grammar": 0.242}
if check_published:
    for row in alphas.itertuples():
        published = PUBLISHED_ALPHA[row.dimension]
        assert abs(row.estimate - published) <= tolerance, f"{row.dimension}: {row.estimate:.4f}"
    print("All 3 alphas match the published values within", tolerance)

# %% [markdown]
# ## Grammar and the scoring rules' auto-0 rule
#
# The study's scoring rules give no grammar score to an answer whose justification is 0 or 1.
# The published grammar figures above do **not** apply the rule (every answer's grammar score
# counts). Applying it, with the author's reasoning score deciding, leaves out those answers:

# %%
ruled = grammar_rule_status(scores)
grammar_rows = []
for label, table in (("rule not applied (published)", scores), ("auto-0 rule applied", ruled)):
    grammar = table[table["dimension"] == "grammar"]
    for judge in JUDGES:
        row = cohen_kappa(
            grammar, "Human", judge, scale=SCALES["grammar"], weights=weights, columns=ANSWERS
        )
        grammar_rows.append(row.assign(rule=label, statistic="kappa vs Human", rater=judge))
    row = krippendorff_alpha(grammar, level_of_measurement="interval", columns=ANSWERS)
    grammar_rows.append(row.assign(rule=label, statistic="alpha, 5 raters", rater="all"))
grammar_rule = pd.concat(grammar_rows, ignore_index=True)
write_table(grammar_rule, tables / "grammar_auto_zero_rule.csv")
display(
    grammar_rule.pivot(index=["statistic", "rater"], columns="rule", values="estimate").round(3)
)
left_out = int((ruled["status"] != "ok").sum() / len(RATER_ORDER))
print(f"The rule leaves out {left_out} of 600 answers' grammar scores.")

# %% [markdown]
# ## Score distributions and confusion with the human

# %%
fig = plots.plot_score_distributions(
    scores[scores["dimension"] == "accuracy"],
    group="model",
    panel="rater",
    panel_order=RATER_ORDER,
    levels=SCALES["accuracy"],
    score_label="Accuracy",
)
saved = plots.save_figure(fig, "riddles_accuracy_distributions", folder=figures)

# %% [markdown]
# **Figure: accuracy scores per answering model, as given by each rater.** Each bar splits the
# model's 200 outputs into the shares scored 0, 3 and 5. The judges reproduce the human's
# ranking of the models (Gemini ahead) and roughly the human's share of full marks.

# %%
confusion = pd.concat(
    [
        confusion_table(
            scores[scores["dimension"] == "accuracy"],
            "Human",
            judge,
            scale=SCALES["accuracy"],
            columns=ANSWERS,
        ).assign(judge=judge)
        for judge in JUDGES
    ],
    ignore_index=True,
)
fig = plots.plot_confusion_grid(confusion, panel="judge", title="Accuracy")
saved = plots.save_figure(fig, "riddles_accuracy_confusion", folder=figures)
assert confusion.groupby("judge")["count"].sum().eq(600).all()

# %% [markdown]
# **Figure: human (rows) versus judge (columns) accuracy scores.** Numbers are counts of
# outputs, colour the share of the row. Most disagreement sits in the middle category: outputs
# the human scored 3 are often scored 0 or 5 by the judges.

# %% [markdown]
# ## Self-evaluation bias
#
# Three of the judges (GPT, Gemini, Claude) also wrote answers. The study compared a judge's
# scores on its own model's answers with its scores on the other models' answers (Welch's
# t-test, "naive" below). A gap can be real quality, not favouritism, so judgekit adds the
# same comparison controlled for the human score (OLS with question-clustered errors), and two
# tests that treat neither the 0/3/5 scores as interval data nor the answers as independent:
# a question-clustered regression of judge − human, and a permutation test shuffling own/other
# labels within each question. Each method asks one question of six judge × dimension pairs,
# so its six p-values are one family, corrected together (raw and adjusted side by side); the
# `assumption` column says what each method takes for granted.

# %%
# One call: every judge against itself (naive, controlled for the human) and, across the
# panel, against the other judges' scores of the same answers (next section).
panel_bias = panel_self_preference(
    scores[scores["dimension"].isin(["accuracy", "reasoning"])],
    JUDGES,
    human="Human",
    author_col="model",
    by=["dimension"],
    columns=Columns(item="output_id", cluster=cluster_column),
    seed=seed,
    p_adjust=p_adjust,  # type: ignore[arg-type]
)
single_judge = ~panel_bias["method"].isin([*PANEL_METHODS, "none"])
bias = panel_bias[single_judge].reset_index(drop=True)
write_table(bias, tables / "self_evaluation_bias.csv")
columns_shown = ["dimension", "judge", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted"]
for method, rows in bias.groupby("method", sort=False):
    print(f"{method}: {rows['p_adjust'].iloc[0]}; assumes {rows['assumption'].iloc[0]}")
    display(rows[columns_shown].round(3))
shown = bias[bias["method"].isin(["naive_welch", "ols_human_clustered"])].copy()
assert set(shown["judge"]) == {"GPT", "Gemini", "Claude"}, "Perplexity wrote no answers"

# %%
shown["judge"] = shown["dimension"].str.title() + " · " + shown["judge"]
shown["method"] = shown["method"].map(
    {"naive_welch": "naive (the study's t-test)", "ols_human_clustered": "controlled for human"}
)
fig = plots.plot_self_bias(shown, xlabel="Own-model minus other-model score (95% CI)")
saved = plots.save_figure(fig, "riddles_self_evaluation_bias", folder=figures)

# %% [markdown]
# **Figure: does a judge favour its own model's answers?** Naive gaps (orange) compare raw
# scores and so include real quality differences between the models; the controlled estimates
# (blue) compare scores at equal human score. A bar crossing zero means no detectable
# preference.

# %% [markdown]
# ## Self-evaluation bias across the panel
#
# Four judges scored the same answers, so a judge's scores of its own model's answers can also
# be compared with the *other* judges' scores of those answers: `own_minus_other_judges` is
# the mean gap on its own answers, `own_minus_other_judges_did` that gap minus the same gap on
# the other answers (the judge's general leniency cancels), `own_minus_human` the gap to the
# human on its own answers. Errors are clustered by riddle; each comparison's six p-values
# (three judges × two dimensions) are corrected together.

# %%
across = panel_bias[panel_bias["method"].isin(PANEL_METHODS)].reset_index(drop=True)
write_table(across, tables / "self_evaluation_bias_panel.csv")
for method, rows in across.groupby("method", sort=False):
    print(f"{method}: {rows['p_adjust'].iloc[0]}; assumes {rows['assumption'].iloc[0]}")
    display(rows[columns_shown].round(3))
assert set(across["judge"]) == {"GPT", "Gemini", "Claude"}

# %% [markdown]
# ## The study's summaries, from the human scores
#
# Composite score per answer: 0.7 × accuracy + 0.3 × reasoning, rescaled to 0–100 (the study's
# weights). Hallucination rate: the share of answers scored 0 on accuracy.

# %%
wide = riddles_v2_wide(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
composite = composite_score(
    wide,
    accuracy_col="accuracy_Human",
    reasoning_col="reasoning_Human",
    group_cols=("model", "input"),
)
write_table(composite, tables / "composite_by_model_input.csv")
display(composite[["model", "input", "estimate", "ci_low", "ci_high", "n"]].round(2))
assert composite["n"].sum() == 600
assert composite["estimate"].between(0, 100).all()
# Both summaries are drawn the same way: one bar per model and input mode, with its interval.
BARS = dict(category="model", group="input", value="estimate", low="ci_low", high="ci_high")
fig = plots.plot_grouped_bars(composite, **BARS, ylabel="Composite score (0-100)")
saved = plots.save_figure(fig, "riddles_composite", folder=figures)

# %% [markdown]
# **Figure: composite score per answering model and input mode.** Bars are means over 100
# answers, whiskers 95% t intervals.

# %%
hallucination = value_rate(
    wide, score_col="accuracy_Human", value=0, group_cols=("model", "input"), name="hallucination"
)
write_table(hallucination, tables / "hallucination_rate.csv")
display(hallucination[["model", "input", "estimate", "ci_low", "ci_high", "count", "n"]].round(3))
assert hallucination["estimate"].between(0, 1).all()
fig = plots.plot_grouped_bars(
    hallucination, **BARS, ylabel="Answers scored 0 on accuracy", percent=True
)
saved = plots.save_figure(fig, "riddles_hallucination", folder=figures)

# %% [markdown]
# **Figure: hallucination rate per answering model and input mode** (share of answers the
# human scored 0 on accuracy), with 95% Wilson intervals.

# %%
topics = topic_difficulty(wide, topic_col="topic", score_col="accuracy_Human", columns=BY_RIDDLE)
write_table(topics, tables / "topic_difficulty.csv")
display(
    topics[["topic", "estimate", "ci_low", "ci_high", "n", "n_clusters", "design_effect"]].round(2)
)
assert topics["n"].sum() == 600
fig = plots.plot_ranked_dots(
    topics,
    category="topic",
    value="estimate",
    low="ci_low",
    high="ci_high",
    xlabel="Mean human accuracy (0-5, 95% CI)",
)
saved = plots.save_figure(fig, "riddles_topic_difficulty", folder=figures)

# %% [markdown]
# **Figure: topics from hardest (top) to easiest.** Mean human accuracy over the six answers to
# each riddle of the topic, with 95% t intervals that count riddles, not answers
# (cluster-robust; the design effect above is how much wider that makes them).

# %% [markdown]
# ## API versus UI
#
# Welch's t-test of the composite score and Cohen's d, as the study did. The same riddles were
# asked both ways, so the two groups are not independent: the `mean_difference_clustered` row
# regresses the score on the input mode with errors clustered by riddle, which allows for it.
# The four comparisons (all models, then each) form one family of tests, corrected together.

# %%
wide["composite"] = 100 * (0.7 * wide["accuracy_Human"] + 0.3 * wide["reasoning_Human"]) / 5
api_vs_ui = pd.concat(
    [
        two_group_comparison(
            rows,
            group_col="input",
            group_a="API",
            group_b="UI",
            score_col="composite",
            columns=BY_RIDDLE,
        ).assign(model=model)
        for model, rows in [("all", wide), *wide.groupby("model")]
    ],
    ignore_index=True,
)
api_vs_ui = adjust_p(api_vs_ui, family=["statistic"], method=p_adjust)  # type: ignore[arg-type]
write_table(api_vs_ui, tables / "api_vs_ui.csv")
shown_tests = ["model", "statistic", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted"]
display(api_vs_ui[shown_tests].round(3))
print(api_vs_ui["p_adjust"].iloc[0], "within each statistic")
assert (api_vs_ui.loc[api_vs_ui["model"] == "all", "n_a"] == 300).all()
