# %% [markdown]
# # Does the score depend on the wording of the prompt?
#
# The rubric's base prompt and its paraphrases (same criteria, different words) were run on the
# same items by `01_run_judging` (`variants` parameter). A judge worth trusting scores the same
# whatever the wording: seed 004 requires every pair of variants to agree with quadratic
# weighted kappa above 0.8.

# %% tags=["parameters"]
judgments_path: str = ""  # judgments table; empty: config.RUNS_DIR / "judging/judgments.parquet"
run: int = 1  # run whose variants are compared
gate: float = 0.8  # every variant pair must exceed this kappa (seed 004)
ci_method: str = "bca"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
min_expected_kappa: float = -1.0  # assert every pairwise kappa reaches this; -1 checks nothing
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "paraphrase_sensitivity"

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.rubrics import load_rubric
from judgekit.stats.reliability import paraphrase_sensitivity
from judgekit.tidy import final_verdicts, rater_table, read_judgments, shared_scored_items

plots.apply_style()
source = Path(judgments_path) if judgments_path else config.RUNS_DIR / "judging/judgments.parquet"
figures = Path(figures_dir) if figures_dir else config.FIGURES_DIR
tables = Path(output_dir) if output_dir else config.RUNS_DIR / "paraphrase_sensitivity"
tables.mkdir(parents=True, exist_ok=True)
verdicts = final_verdicts(read_judgments(source))
verdicts = verdicts[verdicts["run"] == run]
variants = list(pd.unique(verdicts["variant"]))
print(f"variants in run {run}: {variants}")
assert len(variants) >= 2, "paraphrase sensitivity needs a judgments table with >= 2 variants"

# %% [markdown]
# ## Pairwise agreement between variants

# %%
results = {}
for (rubric, judge), judged in verdicts.groupby(["rubric", "model"], sort=False):
    long = rater_table(judged, rubric=rubric, rater="variant")
    if shared_scored_items(long, variants) < 2:
        print(f"skipped {rubric} / {judge}: fewer than two items scored under every variant")
        continue
    results[(rubric, judge)] = paraphrase_sensitivity(
        long,
        scale=load_rubric(rubric).scale,
        threshold=gate,
        ci=ci_method,
        n_boot=n_boot,
        seed=seed,
    )
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
