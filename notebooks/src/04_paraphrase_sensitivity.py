# %% [markdown]
# # Does the score depend on the wording of the prompt?
#
# The rubric's base prompt and its paraphrases (same criteria, different words) were run on the
# same items by `01_run_judging` (`variants` parameter). A judge worth trusting scores the same
# whatever the wording: seed 004 requires every pair of variants to agree with quadratic
# weighted kappa above 0.8. Rows are keyed by rubric, judge and run (`judgekit report` compares
# the variants of every run). The computation is
# `judgekit.reporting.analyses.paraphrase.paraphrase_analysis`.

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
from IPython.display import display

from judgekit.reporting.analyses.paraphrase import KEYS, paraphrase_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "04_paraphrase_sensitivity")  # stops at an unknown parameter

study, figures, tables = open_report(
    "paraphrase_sensitivity", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
result = paraphrase_analysis(
    study, run=run, gate=gate, ci_method=ci_method, n_boot=n_boot, seed=seed
)
result.write(tables, figures)  # the figures show below this cell
for line in result.lines:
    print(line)

# %% [markdown]
# ## Pairwise agreement between variants
#
# **Figure `paraphrase_kappa_*`: quadratic weighted kappa between every pair of prompt
# variants.** One heatmap per rubric and judge; cells at or below the gate are outlined in
# vermillion, and the colour bar marks the gate. Low off-diagonal cells mean the wording of the
# prompt, not the answer, decided some scores.

# %%
pairwise = result.tables["paraphrase_pairwise"]
display(result.tables["paraphrase_summary"])
low = pairwise[pairwise["estimate"] < min_expected_kappa] if len(pairwise) else pairwise
below = low[[*KEYS, "rater_a", "rater_b", "estimate"]].values.tolist() if len(low) else []
assert low.empty, f"kappa below {min_expected_kappa}: {below}"

# %% [markdown]
# ## Items that share a question
#
# Pairwise kappas between variants with whole questions resampled; the design effect is the
# clustered interval's width over the item-resampling one.

# %%
clustered = result.tables["paraphrase_pairwise_clustered"]
if not clustered.empty:
    shown = [*KEYS, "rater_a", "rater_b", "estimate", "ci_low", "ci_high"]
    display(clustered[[*shown, "n_clusters", "design_effect"]])
