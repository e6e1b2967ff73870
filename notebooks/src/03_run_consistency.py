# %% [markdown]
# # Does the judge agree with itself?
#
# The same prompts sent k times at temperature 0 (by `01_run_judging` with `runs` = k; every
# run is a fresh request, never a cached reply). Temperature 0 does not make a hosted model
# deterministic, so this measures how far a single run can be trusted. Per judge and rubric:
# the share of items scored identically in every run (seed 004 asks for 100%), the mean flip
# rate, and Fleiss' kappa and Krippendorff's alpha with runs as raters.

# %% tags=["parameters"]
judgments_path: str = ""  # judgments table; empty: config.RUNS_DIR / "judging/judgments.parquet"
variant: str = "base"  # prompt variant whose runs are compared
target: float = 1.0  # share of identical items required (seed 004: 1.0)
ci_method: str = "bca"  # interval of kappa and alpha: "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
min_expected_identical: float = 0.0  # assert every share identical reaches this; 0 checks nothing
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "run_consistency"

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.rubrics import load_rubric
from judgekit.stats.reliability import run_consistency
from judgekit.tidy import final_verdicts, rater_table, read_judgments, shared_scored_items

plots.apply_style()
source = Path(judgments_path) if judgments_path else config.RUNS_DIR / "judging/judgments.parquet"
figures = Path(figures_dir) if figures_dir else config.FIGURES_DIR
tables = Path(output_dir) if output_dir else config.RUNS_DIR / "run_consistency"
tables.mkdir(parents=True, exist_ok=True)
verdicts = final_verdicts(read_judgments(source))
verdicts = verdicts[verdicts["variant"] == variant]
runs = sorted(pd.unique(verdicts["run"]))
print(f"{len(runs)} runs of variant {variant!r}: {runs}")
assert len(runs) >= 2, "run consistency needs a judgments table with runs >= 2"

# %% [markdown]
# ## Consistency per judge and rubric

# %%
summaries, per_item = [], []
for rubric in pd.unique(verdicts["rubric"]):
    long = rater_table(verdicts, rubric=rubric)
    for judge, rows in long.groupby("rater"):
        if shared_scored_items(rows, runs, rater_col="run") < 2:
            print(f"skipped {rubric} / {judge}: fewer than two items scored in every run")
            continue
        result = run_consistency(
            rows,
            scale=load_rubric(rubric).scale,
            target=target,
            ci=ci_method,
            n_boot=n_boot,
            seed=seed,
        )
        panel = f"{rubric} · {judge}"
        summaries.append(result.summary.assign(rubric=rubric, judge=judge))
        per_item.append(result.per_item.assign(rubric=rubric, judge=judge, panel=panel))
summary = pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame()
items = pd.concat(per_item, ignore_index=True) if per_item else pd.DataFrame()
write_table(summary, tables / "consistency_summary.csv")
write_table(items, tables / "consistency_per_item.csv")
display(summary)
if summaries:
    shares = summary[summary["statistic"] == "share_identical"]
    assert shares["estimate"].between(0, 1).all()
    assert (shares["estimate"] >= min_expected_identical).all(), shares["estimate"]
    assert items["flip_rate"].dropna().between(0, 1).all()

# %%
if summaries:
    fig = plots.plot_consistency(items, panel="panel")
    saved = plots.save_figure(fig, "consistency_flip_rates", folder=figures)

# %% [markdown]
# **Figure: how often an item's score changed across runs.** For each judge and rubric, the
# share of items by flip rate (the share of runs that differ from the item's most common
# score); the legend gives the share of items scored identically in every run. Items without
# a usable score in some run are left out and counted in the table above.

# %% [markdown]
# ## The items that moved

# %%
if per_item:
    moved = items[items["flip_rate"] > 0].sort_values("flip_rate", ascending=False)
    display(moved[["rubric", "judge", "item", "n_runs", "n_distinct", "modal_score", "flip_rate"]])
