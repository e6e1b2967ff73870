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
import matplotlib.pyplot as plt
from IPython.display import display

from judgekit import plots
from judgekit.reporting.analyses.panel import panel_analysis, riddles_panel_analysis
from judgekit.study.folder import load_study, output_folders
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "09_judge_panel")  # stops at an unknown parameter

plots.apply_style()
figures, tables = output_folders(figures_dir, output_dir, "judge_panel")
settings = dict(
    judge_costs=judge_costs,
    own_models=own_models,
    kappa_weights=kappa_weights,
    subset_jury=subset_jury,
    min_coverage=min_coverage,
    n_folds=n_folds,
    n_boot=n_boot,
    seed=seed,
)
if judgments_path:  # a judgekit study: each rubric, variant and run judged by two or more
    result = panel_analysis(load_study(judgments_path, labels_path), variant=variant, run=run,
                            **settings)  # fmt: skip
else:  # the riddles study: three dimensions, the author as the human
    result = riddles_panel_analysis(
        scores_path=riddles_scores_path, cluster_column=cluster_column, **settings
    )
FIGURE = "panel" if judgments_path else "riddles_panel"  # riddles figures are committed
FACET = "combination" if judgments_path else "rubric"  # a study's: rubric · variant · run
saved = result.write(tables, figures)
for line in result.lines:
    print(line)
for figure in result.figures.values():
    plt.close(figure)  # each is shown in its section below
assert result.tables, "a panel needs two or more judges scoring the same items"

# %% [markdown]
# ## Agreement between the judges
#
# Cohen's kappa for every pair of judges (weights as `kappa_weights`, equal steps between
# levels), Krippendorff's interval alpha on the same steps and Fleiss' kappa across the panel.


# %%
pair_columns = [FACET, "statistic", "rater_a", "rater_b", "estimate", "ci_low", "ci_high", "n"]
display(result.tables["panel_agreement"][pair_columns].round(3))
display(result.figures[f"{FIGURE}_judge_agreement"])

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
display(result.tables["error_correlation"][pair_columns].round(3))
display(result.figures[f"{FIGURE}_error_correlation"])

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
juries = result.tables["jury_scores"]
display(juries.groupby([FACET, "rater"])["status"].value_counts().unstack(fill_value=0))
vs_human = result.tables["judges_and_juries_vs_human"]
display(
    vs_human[
        [FACET, "kind", "rater_b", "estimate", "ci_low", "ci_high", "n", "dropped_reason"]
    ].round(3)
)
display(result.figures[f"{FIGURE}_forest"])

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
shown = [FACET, "jury", "best_judge", "estimate", "ci_low", "ci_high", "naive_ci_low",
         "naive_ci_high", "share_jury_ahead", "n"]  # fmt: skip
display(result.tables["jury_vs_best_judge"][shown].round(3))

# %% [markdown]
# ## Cheaper panels
#
# Every subset of the judges, combined by `subset_jury`, with its agreement with the human and
# its cost; the Pareto front holds the subsets no other subset beats on both. A subset whose
# jury leaves many items unscored (ties) is drawn hollow and kept off the front.


# %%
subsets = result.tables["panel_subsets"]
display(
    subsets[[FACET, "subset", "cost", "coverage", "pareto", "estimate", "ci_low", "ci_high"]].round(
        3
    )
)
display(result.figures[f"{FIGURE}_subsets_cost"])

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
if "self_preference_panel" in result.tables:  # else its skipped line above
    across = result.tables["self_preference_panel"]
    display(
        across[
            [FACET, "judge", "method", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted"]
        ].round(3)
    )
