# %% [markdown]
# # How does the judge use the scale, and is it biased?
#
# Reads the judgments and human labels written by `01_run_judging`. First the score
# distributions per judge, answering model and prompt variant next to the human's, and whether
# each judge uses the whole scale (seed 004). Then two bias probes, both controlled for the
# true quality as the human scored it: **length bias** (do longer answers score higher at equal
# human score?) and **self-preference** (does a judge favour answers written by its own model?
# only when the `own_models` parameter pairs judges with answering models). Every table has a
# row per rubric, judge, prompt variant and run (`judgekit report` analyses every run judged).
# The computation is `judgekit.reporting.analyses.distributions.distributions_analysis`.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
run: int = 1  # run analysed; 0: every run judged
own_models: dict = {}  # judge -> answering model of its family; empty: the study settings
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/distributions_and_bias

# %%
from IPython.display import display

from judgekit.reporting.analyses.distributions import distributions_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "05_distributions_and_bias")  # stops at an unknown parameter

study, figures, tables = open_report(
    "distributions_and_bias", judgments_path, labels_path, figures_dir=figures_dir,
    output_dir=output_dir,
)  # fmt: skip
result = distributions_analysis(study, run=run, own_models=own_models)
result.write(tables, figures)
for line in result.lines:
    print(line)

# %% [markdown]
# ## Score distributions
#
# **Figure: score distributions per answering model.** One panel per rater (the human, then
# each judge and prompt variant, and run when several), bars split into the share of each
# score; `n` counts the scored items only (unscored verdicts are not drawn). A judge that
# mirrors the human's panel uses the scale as the human does. `score_coverage` gives the share
# of the scale each judge uses, its distribution tested against the human's.

# %%
for name, figure in result.figures.items():
    if name.startswith("distributions"):
        display(figure)
display(result.tables["score_coverage"])

# %% [markdown]
# ## Length bias
#
# Per judge, an OLS of the judge's score on the log of the answer's length and the human
# score, with standard errors clustered on the question. The `log_length` coefficient is the
# score change per e-fold longer answer at equal human score.

# %%
display(result.tables["length_bias"])

# %% [markdown]
# ## Self-preference
#
# Naive: the judge's mean score on its own model's answers minus that on the others'
# (Welch's t-test). Controlled: the same gap once the human score is accounted for. Only
# judges paired with an answering model in `own_models` can be probed.

# %%
display(result.tables["self_preference"])
if "self_preference" in result.figures:
    display(result.figures["self_preference"])

# %% [markdown]
# **Figure (when drawn): self-preference per judge.** Dots are the judge's extra score on its
# own model's answers, bars 95% intervals; zero means no preference. The naive gap mixes
# favouritism with real quality differences; the controlled estimate holds the human score
# fixed.
