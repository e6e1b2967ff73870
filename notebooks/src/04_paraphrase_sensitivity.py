# %% [markdown]
# # Does the score depend on the wording of the prompt?
#
# The rubric's base prompt and its paraphrases (same criteria, different words) were run on the
# same items by `01_run_judging` (`variants` parameter). A judge worth trusting scores the same
# whatever the wording: seed 004 requires every pair of variants to agree with quadratic
# weighted kappa above 0.8. Rows are keyed by rubric, judge and run (`judgekit report` compares
# the variants of every run).

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
run: int = 1  # run whose variants are compared; 0: every run judged
gate: float = 0.8  # every variant pair must exceed this kappa (seed 004)
ci_method: str = "bca"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
min_expected_kappa: float = -1.0  # assert every pairwise kappa reaches this; -1 checks nothing
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/paraphrase_sensitivity

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
from judgekit.stats.consistency import paraphrase_sensitivity
from judgekit.study.folder import figure_notes, open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "04_paraphrase_sensitivity")  # stops at an unknown parameter

study, figures, tables = open_report(
    "paraphrase_sensitivity", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
verdicts = selected(study.verdicts, run=run)
KEYS = ["rubric", "judge", "run"]  # the variants of each combination are compared
judged_variants = verdicts.groupby(KEYS, sort=False)["variant"].unique()
print(f"variants judged per {' / '.join(KEYS)}: {judged_variants.map(list).to_dict()}")
assert judged_variants.map(len).max() >= 2, "paraphrase sensitivity needs >= 2 variants"

# %% [markdown]
# ## Pairwise agreement between variants

# %%
# With a cluster column, each kappa is computed again with whole questions resampled (below).
results, clustered_rows = {}, []
by_question = Columns(rater="rater", cluster=study.cluster)  # the study names its cluster
interval = CI(ci_method, n_boot=n_boot, seed=seed)
keys, variants = {}, {}
for combination, judged in combinations(verdicts, KEYS):
    name = label(combination)
    variants[name] = list(pd.unique(judged["variant"]))
    long = rater_table(judged, rubric=combination["rubric"], rater="variant")
    if len(variants[name]) < 2 or shared_scored_items(long, variants[name]) < 2:
        print(f"skipped {name}: fewer than two items scored under two or more variants")
        continue
    keys[name] = combination
    scale = study.rubric(combination["rubric"]).scale
    sensitivity = partial(paraphrase_sensitivity, long, scale=scale, threshold=gate)
    results[name] = sensitivity(ci=interval)
    if study.cluster:
        clustered = sensitivity(ci=replace(interval, method="percentile"), columns=by_question)
        clustered_rows.append(clustered.pairwise.assign(**combination))
pairwise = pd.concat(
    [r.pairwise.assign(**keys[n]) for n, r in results.items()] or [pd.DataFrame()],
    ignore_index=True,
)
summary = pd.concat(
    [r.summary.assign(**keys[n]) for n, r in results.items()] or [pd.DataFrame()],
    ignore_index=True,
)
write_table(pairwise, tables / "paraphrase_pairwise.csv")
write_table(summary, tables / "paraphrase_summary.csv")
display(summary)
for line in figure_notes(pairwise, [*KEYS, "rater_a", "rater_b"]):
    print(line)
for line in figure_notes(summary, [*KEYS, "statistic"]):
    print(line)
for name, result in results.items():
    n_pairs = len(variants[name]) * (len(variants[name]) - 1) // 2
    assert len(result.pairwise) == n_pairs, name
    for kappa in result.pairwise["estimate"]:
        assert not kappa < min_expected_kappa, f"{name}: kappa {kappa:.3f}"

# %%
several_runs = verdicts["run"].nunique() > 1  # then each figure's name says its run
for name, result in results.items():
    combination = keys[name]
    fig = plots.plot_paraphrase_matrix(result.pairwise, order=variants[name], gate=gate, title=name)
    shown = [combination["rubric"], combination["judge"]]
    shown += [f"run{combination['run']}"] if several_runs else []
    saved = plots.save_figure(fig, plots.figure_name("paraphrase_kappa", *shown), folder=figures)

# %% [markdown]
# **Figure: quadratic weighted kappa between every pair of prompt variants.** One heatmap per
# rubric and judge; cells at or below the gate are outlined in vermillion, and the colour bar
# marks the gate. Low off-diagonal cells mean the wording of the prompt, not the answer,
# decided some scores.

# %% [markdown]
# ## Items that share a question
#
# Pairwise kappas between variants with whole questions resampled; the design effect is the
# clustered interval's width over the item-resampling one.

# %%
clustered = pd.concat(clustered_rows, ignore_index=True) if clustered_rows else pd.DataFrame()
write_table(clustered, tables / "paraphrase_pairwise_clustered.csv")
if clustered.empty:
    print("the study's items share no question: the intervals above treat items as independent")
else:
    shown = [*KEYS, "rater_a", "rater_b", "estimate", "ci_low", "ci_high"]
    display(clustered[[*shown, "n_clusters", "design_effect"]])
