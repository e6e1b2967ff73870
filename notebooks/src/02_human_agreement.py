# %% [markdown]
# # Does the judge agree with the human?
#
# Reads the judgments and human labels written by `01_run_judging` and compares each judge
# with the human on one prompt variant and run: the kappa family (unweighted, linear and
# quadratic weights) with confidence intervals, exact and within-one agreement, the confusion
# matrix, a breakdown per answering model, and seed 004's validation protocol as pass/fail.
# Unscored verdicts (parse failures, abstentions, missing rows) are dropped from the pairs and
# counted next to every estimate, never turned into numbers.

# %% tags=["parameters"]
judgments_path: str = ""  # judgments table; empty: config.RUNS_DIR / "judging/judgments.parquet"
labels_path: str = ""  # human labels; empty: human_labels.parquet beside the judgments
variant: str = "base"  # prompt variant compared with the human
run: int = 1  # run compared with the human
ci_method: str = "bca"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
threshold: float = 0.8  # seed 004's agreement gate for the quadratic weighted kappa
min_expected_kappa: float = -1.0  # assert every quadratic kappa reaches this; -1 checks nothing
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "human_agreement"

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.rubrics import load_rubric
from judgekit.stats.agreement import agreement_rates, cohen_kappa, confusion_table
from judgekit.stats.seed004 import seed004_report
from judgekit.tidy import (
    HUMAN,
    final_verdicts,
    rater_table,
    read_judgments,
    read_labels,
    shared_scored_items,
)

plots.apply_style()
source = Path(judgments_path) if judgments_path else config.RUNS_DIR / "judging/judgments.parquet"
labels = read_labels(Path(labels_path) if labels_path else source.parent / "human_labels.parquet")
figures = Path(figures_dir) if figures_dir else config.FIGURES_DIR
tables = Path(output_dir) if output_dir else config.RUNS_DIR / "human_agreement"
tables.mkdir(parents=True, exist_ok=True)
verdicts = final_verdicts(read_judgments(source))
rubrics = [r for r in pd.unique(verdicts["rubric"]) if (labels["rubric"] == r).any()]
judges = list(pd.unique(verdicts["model"]))
print(f"rubrics with human labels: {rubrics}; judges: {judges}")
assert rubrics, "no rubric of the judgments table has human labels"

# %% [markdown]
# ## The kappa family with intervals

# %%
KAPPA_WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}
selected = verdicts[(verdicts["variant"] == variant) & (verdicts["run"] == run)]
long = {r: rater_table(selected, labels, rubric=r) for r in rubrics}
scales = {r: load_rubric(r).scale for r in rubrics}
# A judge sharing fewer than two scored items with the human cannot be compared: say so.
pairs = [(r, j) for r in rubrics for j in judges if shared_scored_items(long[r], [j, HUMAN]) >= 2]
for rubric, judge in [(r, j) for r in rubrics for j in judges if (r, j) not in pairs]:
    print(f"skipped {rubric} / {judge}: fewer than two items scored by judge and human")
rows = [
    cohen_kappa(
        long[rubric],
        judge,
        HUMAN,
        scale=scales[rubric],
        weights=weights,
        ci=ci_method,
        n_boot=n_boot,
        seed=seed,
    ).assign(rubric=rubric, kappa=label)
    for rubric, judge in pairs
    for label, weights in KAPPA_WEIGHTS.items()
]
kappas = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
write_table(kappas, tables / "kappa_family.csv")
display(kappas)
labelled = {r: int((labels["rubric"] == r).sum()) for r in rubrics}
for row in kappas.itertuples():
    assert row.n + row.n_dropped == labelled[row.rubric], f"{row.rubric}: pairs do not add up"
    if row.kappa == "quadratic":
        assert not row.estimate < min_expected_kappa, f"{row.rubric}: kappa {row.estimate:.3f}"

# %%
if pairs:
    fig = plots.plot_kappa_forest(
        kappas, label=["rubric", "rater_a", "kappa"], colour_by="kappa", width="two"
    )
    saved = plots.save_figure(fig, "agreement_kappa_forest", folder=figures)

# %% [markdown]
# **Figure: judge-versus-human kappa per rubric and weighting.** Dots are the estimates, bars
# their 95% intervals; dotted lines mark 0.6 and 0.8. Weighted kappas credit near misses on
# the ordinal scale, so they sit above the unweighted one when disagreements are small.

# %%
rates = pd.concat(
    [agreement_rates(long[r], j, HUMAN, scale=scales[r]).assign(rubric=r) for r, j in pairs]
    or [pd.DataFrame()],
    ignore_index=True,
)
write_table(rates, tables / "agreement_rates.csv")
display(rates)
assert rates.empty or rates["estimate"].between(0, 1).all()

# %% [markdown]
# ## Confusion with the human

# %%
confusion = pd.concat(
    [
        confusion_table(long[r], HUMAN, j, scale=scales[r]).assign(panel=f"{r} · {j}")
        for r, j in pairs
    ]
    or [pd.DataFrame()],
    ignore_index=True,
)
write_table(confusion, tables / "confusion.csv")
if pairs:
    fig = plots.plot_confusion_grid(confusion, panel="panel", width="two")
    saved = plots.save_figure(fig, "agreement_confusion", folder=figures)

# %% [markdown]
# **Figure: human score (rows) against judge score (columns).** Numbers are item counts, colour
# the share of the row; a perfect judge fills the diagonal only.

# %% [markdown]
# ## Per answering model

# %%
rows = [
    cohen_kappa(
        subset,
        judge,
        HUMAN,
        scale=scales[rubric],
        weights="quadratic",
        ci=ci_method,
        n_boot=n_boot,
        seed=seed,
    ).assign(rubric=rubric, answer_model=model)
    for rubric, judge in pairs
    for model, subset in long[rubric].groupby("answer_model")
    if shared_scored_items(subset, [judge, HUMAN]) >= 2
]
by_model = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
write_table(by_model, tables / "kappa_by_answer_model.csv")
display(by_model)

# %% [markdown]
# Each answering model contributes only a third of the items, so these intervals are wide;
# a kappa is undefined (empty) where a model's items all got the same human score.

# %% [markdown]
# ## Seed 004's validation protocol
#
# Agreement with the human, three paraphrases agreeing with each other (kappa > 0.8), three
# runs at temperature 0 agreeing completely, and scores covering the scale. A check whose data
# is missing (one run, one variant) is reported without a verdict, never as a pass.

# %%
reports = [
    seed004_report(
        rater_table(verdicts, labels, rubric=rubric),
        judge=judge,
        human=HUMAN,
        scale=scales[rubric],
        kappa_threshold=threshold,
        n_boot=n_boot,
        seed=seed,
        base_variant=variant,
    ).assign(rubric=rubric, judge=judge)
    for rubric, judge in pairs
]
seed004 = pd.concat(reports, ignore_index=True) if reports else pd.DataFrame()
write_table(seed004, tables / "seed004_report.csv")
display(seed004)
assert seed004.empty or "human_agreement" in set(seed004["check"])
