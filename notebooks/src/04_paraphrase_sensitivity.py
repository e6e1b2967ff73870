# %% [markdown]
# # Does the score depend on the wording of the prompt?
#
# The rubric's base prompt and its paraphrases (same criteria, different words) were run on the
# same items by `01_run_judging` (`variants` parameter). A judge worth trusting scores the same
# whatever the wording: seed 004 requires every pair of variants to agree with quadratic
# weighted kappa above 0.8.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
run: int = 1  # run whose variants are compared
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
from judgekit.rubrics import load_rubric
from judgekit.stats import CI, Columns
from judgekit.stats.consistency import paraphrase_sensitivity
from judgekit.workflows.parameters import check_parameters
from judgekit.workflows.study import figure_notes, open_report

check_parameters(globals(), "04_paraphrase_sensitivity")  # stops at an unknown parameter

study, figures, tables = open_report(
    "paraphrase_sensitivity", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
verdicts = study.verdicts[study.verdicts["run"] == run]
variants = list(pd.unique(verdicts["variant"]))
print(f"variants in run {run}: {variants}")
assert len(variants) >= 2, "paraphrase sensitivity needs a judgments table with >= 2 variants"

# %% [markdown]
# ## Pairwise agreement between variants

# %%
# With a cluster column, each kappa is computed again with whole questions resampled (below).
results, clustered_rows = {}, []
by_question = Columns(rater="rater", cluster=study.cluster)  # the study names its cluster
interval = CI(ci_method, n_boot=n_boot, seed=seed)
for (rubric, judge), judged in verdicts.groupby(["rubric", "model"], sort=False):
    long = rater_table(judged, rubric=rubric, rater="variant")
    if shared_scored_items(long, variants) < 2:
        print(f"skipped {rubric} / {judge}: fewer than two items scored under every variant")
        continue
    scale = load_rubric(rubric).scale
    sensitivity = partial(paraphrase_sensitivity, long, scale=scale, threshold=gate)
    results[(rubric, judge)] = sensitivity(ci=interval)
    if study.cluster:
        clustered = sensitivity(ci=replace(interval, method="percentile"), columns=by_question)
        clustered_rows.append(clustered.pairwise.assign(rubric=rubric, judge=judge))
pairwise = pd.concat(
    [r.pairwise.assign(rubric=k[0], judge=k[1]) for k, r in results.items()] or [pd.DataFrame()],
    ignore_index=True,
)
summary = pd.concat(
    [r.summary.assign(rubric=k[0], judge=k[1]) for k, r in results.items()] or [pd.DataFrame()],
    ignore_index=True,
)
write_table(pairwise, tables / "paraphrase_pairwise.csv")
write_table(summary, tables / "paraphrase_summary.csv")
display(summary)
for line in figure_notes(pairwise, ["rubric", "judge", "rater_a", "rater_b"]):
    print(line)
for line in figure_notes(summary, ["rubric", "judge", "statistic"]):
    print(line)
n_pairs = len(variants) * (len(variants) - 1) // 2
for (rubric, judge), result in results.items():
    assert len(result.pairwise) == n_pairs, f"{rubric} / {judge}"
    for kappa in result.pairwise["estimate"]:
        assert not kappa < min_expected_kappa, f"{rubric} / {judge}: kappa {kappa:.3f}"

# %%
for (rubric, judge), result in results.items():
    fig = plots.plot_paraphrase_matrix(
        result.pairwise, order=variants, gate=gate, title=f"{rubric} · {judge}"
    )
    name = plots.figure_name("paraphrase_kappa", rubric, judge)
    saved = plots.save_figure(fig, name, folder=figures)

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
    shown = ["rubric", "judge", "rater_a", "rater_b", "estimate", "ci_low", "ci_high"]
    display(clustered[[*shown, "n_clusters", "design_effect"]])
