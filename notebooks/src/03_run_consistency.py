# %% [markdown]
# # Does the judge agree with itself?
#
# The same prompts sent k times at temperature 0 (by `01_run_judging` with `runs` = k; every
# run is a fresh request, never a cached reply). Temperature 0 does not make a hosted model
# deterministic, so this measures how far a single run can be trusted. Per judge and rubric:
# the share of items scored identically in every run (seed 004 asks for 100%), the mean flip
# rate, and Fleiss' kappa and Krippendorff's alpha with runs as raters. Rows are keyed by
# rubric, judge and prompt variant (`judgekit report` compares the runs of every variant).

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
variant: str = "base"  # prompt variant whose runs are compared; empty: every variant judged
target: float = 1.0  # share of identical items required (seed 004: 1.0)
ci_method: str = "bca"  # interval of kappa and alpha: "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
min_expected_identical: float = 0.0  # assert every share identical reaches this; 0 checks nothing
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/run_consistency

# %%

from dataclasses import replace
from functools import partial

import pandas as pd
from IPython.display import display

from judgekit import plots
from judgekit.data import write_table
from judgekit.data.tidy import rater_table, shared_scored_items
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns
from judgekit.stats.consistency import run_consistency
from judgekit.study.folder import figure_notes, open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "03_run_consistency")  # stops at an unknown parameter

study, figures, tables = open_report(
    "run_consistency", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
verdicts = selected(study.verdicts, variant)
KEYS = ["rubric", "judge", "variant"]  # the runs of each combination are compared
judged_runs = verdicts.groupby(KEYS, sort=False)["run"].nunique()
print(f"runs judged per {' / '.join(KEYS)}: {judged_runs.to_dict()}")
assert judged_runs.max() >= 2, "run consistency needs a judgments table with runs >= 2"

# %% [markdown]
# ## Consistency per judge and rubric

# %%
# With a cluster column, each figure is computed again with whole questions resampled (below).
summaries, per_item, clustered_rows = [], [], []
by_question = Columns(rater="run", cluster=study.cluster)  # the study names its cluster
interval = CI(ci_method, n_boot=n_boot, seed=seed)
for combination, judged in combinations(verdicts, KEYS):
    panel = label(combination)
    runs = sorted(pd.unique(judged["run"]))
    rows = rater_table(judged, rubric=combination["rubric"], rater="judge")
    if len(runs) < 2 or shared_scored_items(rows, runs, rater_col="run") < 2:
        print(f"skipped {panel}: fewer than two items scored in each of two or more runs")
        continue
    scale = study.rubric(combination["rubric"]).scale
    consistency = partial(run_consistency, rows, scale=scale, target=target)
    result = consistency(ci=interval)
    summaries.append(result.summary.assign(**combination))
    per_item.append(result.per_item.assign(**combination, panel=panel))
    if study.cluster:
        clustered = consistency(ci=replace(interval, method="percentile"), columns=by_question)
        clustered_rows.append(clustered.summary.assign(**combination))
summary = pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame()
items = pd.concat(per_item, ignore_index=True) if per_item else pd.DataFrame()
write_table(summary, tables / "consistency_summary.csv")
write_table(items, tables / "consistency_per_item.csv")
display(summary)
for line in figure_notes(summary, [*KEYS, "statistic"]):
    print(line)
if summaries:
    shares = summary[summary["statistic"] == "share_identical"]
    assert shares["estimate"].between(0, 1).all()
    assert (shares["estimate"] >= min_expected_identical).all(), shares["estimate"]
    assert items["flip_rate"].dropna().between(0, 1).all()

# %%
if summaries:
    fig = plots.plot_consistency(items, panel=KEYS)
    saved = plots.save_figure(fig, "consistency_flip_rates", folder=figures)

# %% [markdown]
# **Figure: how often an item's score changed across runs.** For each judge and rubric, the
# share of items by flip rate (the share of runs that differ from the item's most common
# score); the legend gives the share of items scored identically in every run. Items without
# a usable score in some run count as not identical in the headline share; the
# `share_identical_among_complete` row leaves them out.

# %% [markdown]
# ## The items that moved

# %%
if per_item:
    moved = items[items["flip_rate"] > 0].sort_values("flip_rate", ascending=False)
    display(moved[[*KEYS, "item", "n_runs", "n_distinct", "modal_score", "flip_rate"]])

# %% [markdown]
# ## Items that share a question
#
# The same statistics with whole questions resampled (answers to one question are alike); the
# design effect is the clustered interval's width over the item-resampling one.

# %%
clustered = pd.concat(clustered_rows, ignore_index=True) if clustered_rows else pd.DataFrame()
write_table(clustered, tables / "consistency_summary_clustered.csv")
if clustered.empty:
    print("the study's items share no question: the intervals above treat items as independent")
else:
    shown = [*KEYS, "statistic", "estimate", "ci_low", "ci_high", "design_effect"]
    display(clustered[clustered["design_effect"].notna()][shown])
