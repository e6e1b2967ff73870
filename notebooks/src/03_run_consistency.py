# %% [markdown]
# # Does the judge agree with itself?
#
# The same prompts sent k times at temperature 0 (by `01_run_judging` with `runs` = k; every
# run is a fresh request, never a cached reply). Temperature 0 does not make a hosted model
# deterministic, so this measures how far a single run can be trusted. Per judge and rubric:
# the share of items scored identically in every run (seed 004 asks for 100%), the mean flip
# rate, and Fleiss' kappa and Krippendorff's alpha with runs as raters. Rows are keyed by
# rubric, judge and prompt variant (`judgekit report` compares the runs of every variant). The
# computation is `judgekit.reporting.analyses.consistency.consistency_analysis`.

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
from IPython.display import display

from judgekit.reporting.analyses.consistency import KEYS, consistency_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "03_run_consistency")  # stops at an unknown parameter

study, figures, tables = open_report(
    "run_consistency", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
result = consistency_analysis(
    study, variant=variant, target=target, ci_method=ci_method, n_boot=n_boot, seed=seed
)
result.write(tables, figures)  # the figure shows below this cell
for line in result.lines:
    print(line)

# %% [markdown]
# ## Consistency per judge and rubric
#
# **Figure `consistency_flip_rates`: how often an item's score changed across runs.** For each
# judge and rubric, the share of items by flip rate (the share of runs that differ from the
# item's most common score); the legend gives the share of items scored identically in every
# run. Items without a usable score in some run count as not identical in the headline share;
# the `share_identical_among_complete` row leaves them out.

# %%
summary, items = result.tables["consistency_summary"], result.tables["consistency_per_item"]
display(summary)
if not summary.empty:
    shares = summary[summary["statistic"] == "share_identical"]
    assert shares["estimate"].between(0, 1).all()
    assert (shares["estimate"] >= min_expected_identical).all(), shares["estimate"]
    assert items["flip_rate"].dropna().between(0, 1).all()

# %% [markdown]
# ## The items that moved

# %%
if not items.empty:
    moved = items[items["flip_rate"] > 0].sort_values("flip_rate", ascending=False)
    display(moved[[*KEYS, "item", "n_runs", "n_distinct", "modal_score", "flip_rate"]])

# %% [markdown]
# ## Items that share a question
#
# The same statistics with whole questions resampled (answers to one question are alike); the
# design effect is the clustered interval's width over the item-resampling one.

# %%
clustered = result.tables["consistency_summary_clustered"]
if not clustered.empty:
    shown = [*KEYS, "statistic", "estimate", "ci_low", "ci_high", "design_effect"]
    display(clustered[clustered["design_effect"].notna()][shown])
