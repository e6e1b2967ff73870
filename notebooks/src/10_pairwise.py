# %% [markdown]
# # Pairwise judging: outcomes, position and length bias, agreement with humans, ranking
#
# A pairwise study judges each pair of answers in both orders. Per judge × variant × run this
# notebook shows the share of each per-pair outcome (consistent win, consistent tie,
# inconsistent under swap, one order unparsed, both unparsed: never folded into each other),
# the first-position win rate, the longer answer's win rate and a length-controlled win rate,
# agreement with the human labels (MT-Bench S1 with ties and S2 without, accuracy and macro-F1
# against the labels' majority, Cohen's kappa per order), agreement between human raters and
# between judges, and the Bradley–Terry ranking as a forest (seeded, prompt-clustered
# bootstrap). The computation is `judgekit.reporting.analyses.pairwise.pairwise_analysis`; every
# table names its interval level and design.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
rubric: str = ""  # the pairwise rubric; empty: every pairwise rubric of the study
baseline: str = ""  # model the win rates are against; empty: the most frequent model
ties: str = "half"  # Bradley-Terry ties: "half", "davidson" or "rao-kupper"
bt_alpha: float = 0.0  # Bradley-Terry prior on the strengths; > 0 ranks a model that never won
level: float = 0.95  # interval level of every table
n_boot: int = 1000  # bootstrap replicates
seed: int = 0  # bootstrap seed
min_expected_consistency: float = 0.0  # assert every judge's position consistency reaches this
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/pairwise

# %%
from IPython.display import display

from judgekit.data import write_table
from judgekit.reporting.analyses.pairwise import pairwise_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "10_pairwise")  # stops at an unknown parameter

study, figures, tables = open_report(
    "pairwise", judgments_path, figures_dir=figures_dir, output_dir=output_dir, pairwise=True
)
result = pairwise_analysis(
    study,
    rubric=rubric,
    baseline=baseline,
    ties=ties,
    bt_alpha=bt_alpha,
    level=level,
    n_boot=n_boot,
    seed=seed,
)
summary = result.tables.pop("pairwise_summary")
result.write(tables, figures)
# the summary sits beside the step's table folder: report/tables/pairwise_summary.csv
write_table(summary, tables.parent / "pairwise_summary.csv")
for line in result.lines:
    print(line)

# %% [markdown]
# ## Summary per judge × variant × run

# %%
display(summary)

# %% [markdown]
# ## Per-pair outcomes and position bias

# %%
display(result.tables["outcome_shares"])
display(result.tables["position_bias"])
for name in ("length_bias", "length_controlled_win_rate"):
    if name in result.tables:
        display(result.tables[name])

# %% [markdown]
# ## Agreement with the human labels and between raters

# %%
for name in ("human_s1_s2", "accuracy", "kappa", "human_kappas", "judge_kappas"):
    if name in result.tables:
        display(result.tables[name])

# %% [markdown]
# ## Bradley–Terry ranking and win rates against the baseline

# %%
for name in ("bradley_terry", "win_rate_vs_baseline"):  # no ranking: its skipped line above
    if name in result.tables:
        display(result.tables[name])
for figure in result.figures.values():
    display(figure)

# %%
consistency = result.tables["position_bias"]
consistency = consistency[consistency["method"] == "position consistency"]
low = consistency[consistency["estimate"] < min_expected_consistency]
assert low.empty, f"position consistency below {min_expected_consistency}: {low['judge'].tolist()}"
