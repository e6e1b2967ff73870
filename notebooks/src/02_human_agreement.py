# %% [markdown]
# # Does the judge agree with the human?
#
# Reads the judgments and human labels written by `01_run_judging` and compares each judge
# with the human on each prompt variant and run chosen (rows keyed by rubric, judge, variant
# and run; `judgekit report` chooses every one judged): the kappa family (unweighted, linear and
# quadratic weights) with confidence intervals, exact and within-one agreement, the confusion
# matrix, a breakdown per answering model, and seed 004's validation protocol as pass/fail.
# Unscored verdicts (parse failures, abstentions, missing rows) are dropped from the pairs and
# counted next to every estimate, never turned into numbers. The computation is
# `judgekit.reporting.analyses.agreement.agreement_analysis`.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
repeats_path: str = ""  # judgments with repeated runs for seed 004's consistency check; empty: none
variant: str = "base"  # prompt variant compared with the human; empty: every variant judged
run: int = 1  # run compared with the human; 0: every run judged
ci_method: str = "bca"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
threshold: float = 0.8  # seed 004's agreement gate for the quadratic weighted kappa
min_expected_kappa: float = -1.0  # assert every quadratic kappa reaches this; -1 checks nothing
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/human_agreement

# %%
from IPython.display import display

from judgekit.reporting.analyses.agreement import agreement_analysis
from judgekit.study.folder import load_study, open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "02_human_agreement")  # stops at an unknown parameter

study, figures, tables = open_report(
    "human_agreement", judgments_path, labels_path, figures_dir=figures_dir, output_dir=output_dir
)
result = agreement_analysis(
    study,
    repeats=load_study(repeats_path) if repeats_path else None,
    variant=variant,
    run=run,
    ci_method=ci_method,
    n_boot=n_boot,
    seed=seed,
    threshold=threshold,
)
result.write(tables, figures)  # the figures show below this cell
for line in result.lines:
    print(line)

# %% [markdown]
# ## The kappa family with intervals
#
# **Figure `agreement_kappa_forest`: judge-versus-human kappa per rubric and weighting.** Dots
# are the estimates, bars their 95% intervals; dotted lines mark 0.6 and 0.8. Weighted kappas
# credit near misses on the ordinal scale, so they sit above the unweighted one when
# disagreements are small.

# %%
kappas = result.tables["kappa_family"]
display(kappas)
for row in kappas.itertuples():
    labelled = int((study.labels["rubric"] == row.rubric).sum())
    assert row.n + row.n_dropped == labelled, f"{row.rubric}: pairs do not add up"
    if row.kappa == "quadratic":
        assert not row.estimate < min_expected_kappa, f"{row.rubric}: kappa {row.estimate:.3f}"

# %% [markdown]
# ## Items that share a question
#
# Several answers to one question are alike, so the items are not independent. Resampling
# whole questions (cluster bootstrap, percentile) instead of single items gives the honest
# interval; the design effect is its width over the item-resampling one.

# %%
clustered = result.tables["kappa_quadratic_clustered"]
if not clustered.empty:
    shown = ["rubric", "judge", "variant", "run", "estimate", "naive_ci_low", "naive_ci_high"]
    display(clustered[[*shown, "ci_low", "ci_high", "n_clusters", "design_effect", "note"]])
rates = result.tables["agreement_rates"]
display(rates)
assert rates.empty or rates["estimate"].between(0, 1).all()

# %% [markdown]
# ## Confusion with the human
#
# **Figure `agreement_confusion`: human score (rows) against judge score (columns).** Numbers
# are item counts, colour the share of the row; a perfect judge fills the diagonal only.
#
# ## Per answering model

# %%
display(result.tables["kappa_by_answer_model"])

# %% [markdown]
# ## Seed 004's validation protocol
#
# Agreement with the human, the wordings of the prompt agreeing with each other (the seed asks
# for three paraphrase variants, each pair with kappa > 0.8), repeated runs at temperature 0
# agreeing completely (the seed asks for three), and scores covering the scale. The line per
# rubric above says how many wordings and runs this study actually has; a check whose data is
# missing (one run, one variant) is reported without a verdict, never as a pass.

# %%
seed004 = result.tables["seed004_report"]
display(seed004)
assert seed004.empty or "human_agreement" in set(seed004["check"])

# %% [markdown]
# ## Between people, and the calibration record
#
# Every human label of the study is one table: the items file's label column (rater
# `column NAME`) and the labelling tool's `labels.csv` (one rater per labeller). Wherever two
# raters scored the same items, their agreement with each other is the ceiling a judge can be
# expected to reach; items they scored differently are listed, not resolved. The calibration
# record notebook 08 wrote binds the agreement figures to the judge, rubric version, variant
# and prompt; a `warning` line above means the judging reported here no longer matches it.

# %%
for name, table in result.tables.items():
    if name.startswith(("inter_human_", "label_conflicts_")):
        display(table)
