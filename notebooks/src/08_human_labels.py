# %% [markdown]
# # Human labels: choose, label, compare, correct
#
# The judge is only as trustworthy as its agreement with people. This notebook closes the loop
# in JupyterLab: it **chooses** which of the judged items a person should label (a seeded
# sample covering the judge's whole scale, plus items where runs or prompt variants disagree,
# and the kappa precision that label count buys), lets each person **label** them blind in a
# keyboard widget (set `labeller` to your name), **compares** people with each other and with
# the judge, and **corrects** each answering model's mean score with prediction-powered
# inference: all judge scores plus the few labels give an interval that is honest about the
# judge's bias. Run headless (papermill, CI), it takes the labels from a file instead.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
dataset_path: str = ""  # the judged items (ID + rubric columns); empty: the demo riddles
rubric_name: str = "riddle_accuracy"  # rubric whose scores are labelled
judge_model: str = ""  # judge compared with the people; empty: the first in the table
variant: str = "base"  # prompt variant compared with the people
run: int = 1  # run compared with the people
n_labels: int = 12  # items to label
disagreement_share: float = 0.25  # at most this share of them from disputed items
expected_kappa: float = 0.8  # agreement the planner assumes (seed 004's gate)
seed: int = 0  # seed of the sample and every resampling step
group_column: str = "Model"  # dataset column naming the answering model
labels_path: str = ""  # the study's labels.csv; empty: labels.csv beside the judgments
labeller: str = ""  # your name: shows the labelling widget; empty: headless (labels from file)
label_column: str = ""  # headless, no labels file yet: dataset column holding a person's labels
endpoint: str = ""  # the judge's base URL, for the calibration record (never a key)
n_boot: int = 1000  # bootstrap replicates of the kappa intervals
scores_path: str = ""  # riddles v2 scores for the PPI check; empty: config.DATA_DIR / ...
ppi_labels: int = 30  # labels per subsample in the PPI check (spread over the three models)
n_subsamples: int = 200  # subsamples in the PPI check
figures_dir: str = ""  # folder for figures; empty: config.FIGURES_DIR
output_dir: str = ""  # folder for tables; empty: config.RUNS_DIR / "human_labels"

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import read_table, write_table
from judgekit.labels import (
    calibration_record,
    consensus,
    describe_calibration,
    disagreements,
    inter_human_agreement,
    labels_from_column,
    read_labels_table,
    rubric_version,
    select_for_labelling,
    write_calibration,
    write_labels_table,
)
from judgekit.labels.widget import LabelWidget
from judgekit.plots import plot_planner, plot_ppi_study
from judgekit.riddles import riddles_v2_wide
from judgekit.rubrics import load_rubric
from judgekit.stats import CI, corrected_means, coverage_summary, ppi_coverage
from judgekit.stats.agreement import cohen_kappa
from judgekit.types import UsageError
from judgekit.workflows.study import figure_notes, open_report

study, figures, tables = open_report(
    "human_labels", judgments_path, figures_dir=figures_dir, output_dir=output_dir
)
dataset = Path(dataset_path) if dataset_path else config.DATA_DIR / "demo/riddles_demo.csv"
labels_file = Path(labels_path) if labels_path else study.folder.long_labels
rubric = load_rubric(rubric_name)
items = read_table(dataset).frame
items["ID"] = items["ID"].astype(str)
verdicts = study.verdicts
verdicts = verdicts[verdicts["rubric"] == rubric_name]
judge = judge_model or str(verdicts["model"].iloc[0])
verdicts = verdicts[verdicts["model"] == judge]
levels = rubric.scale.allowed
print(f"{len(items)} items in {dataset.name}; judge {judge}; rubric {rubric_name} {levels}")
assert not verdicts.empty, f"no verdicts of {judge} on {rubric_name} in {study.folder.root}"

# %% [markdown]
# ## Choose what to label

# %%
groups = dict(zip(items["ID"], items[group_column].astype(str), strict=True))
plan = select_for_labelling(
    verdicts,
    n_labels,
    seed=seed,
    levels=levels,
    groups=groups,
    disagreement_share=disagreement_share,
    variant=variant,
    run=run,
    expected_kappa=expected_kappa,
)
print(plan.summary())
assert len(plan.items) == n_labels and plan.items["item_id"].is_unique
display(plan.items.drop(columns="judge_score"))  # the labeller must not see the judge's score
display(plan.precision)
write_table(plan.precision, tables / "planner.csv")
fig = plot_planner(plan.precision, chosen=n_labels)
saved = plots.save_figure(fig, "labels_planner", folder=figures)

# %% [markdown]
# **Figure: how wide the judge-versus-human kappa interval will be.** Simulated from the
# judge's own score distribution, assuming the stated agreement; the orange dot is the label
# count chosen above.

# %% [markdown]
# ## Label blind
#
# With `labeller` set, the widget below shows one item at a time: the rubric's scale and
# anchors, the question, the answer and the reference, never the judge's score. A digit key
# scores, `s` skips, `a` abstains, arrows move; every label is saved at once to `labels.csv`,
# and running the cell again resumes at the first item you have not labelled. Each person
# uses their own name on the same file. When done, run the cells below.

# %%
to_label = items.set_index("ID").loc[plan.items["item_id"]].reset_index()
if labeller:
    display(LabelWidget(to_label, rubric, labels_file, labeller))
elif not labels_file.exists():
    column = label_column or rubric.label_column
    delivered = labels_from_column(to_label, column, labeller="dataset", rubric=rubric)
    write_labels_table(delivered, labels_file)
    print(f"headless: the selected items' labels from column {column} -> {labels_file}")
else:
    print(f"headless: labels from {labels_file}")

# %% [markdown]
# ## Compare: people with each other, the judge with the people

# %%
labels = read_labels_table(labels_file)
labels = labels[labels["rubric"] == rubric_name]
stale = sorted(set(labels["rubric_version"]) - {rubric_version(rubric)})
if stale:
    print(f"warning: some labels were made with another version of the rubric: {stale}")
human = consensus(labels)
if human.empty:
    raise UsageError(
        f"no scored labels for {rubric_name} in {labels_file} yet: label the items above "
        "(or give labels_path / label_column), then run this cell and those below"
    )
print(f"{len(labels)} labels by {labels['labeller'].nunique()} labeller(s); {len(human)} scored")
interval = CI("bca", n_boot=n_boot, seed=seed)  # every kappa interval here
between_people = inter_human_agreement(labels, levels, ci=interval)
if between_people.empty:
    print("one labeller: no inter-human agreement (the ceiling for the judge) yet")
else:
    display(between_people)
    write_table(between_people, tables / "inter_human_agreement.csv")
chosen = verdicts[(verdicts["variant"] == variant) & (verdicts["run"] == run)]
long = pd.concat(
    [
        pd.DataFrame(
            {
                "item": chosen["item_id"],
                "rater": "judge",
                "score": chosen["score"],
                "status": chosen["status"],
            }
        ),
        pd.DataFrame(
            {"item": human["item_id"], "rater": "human", "score": human["score"], "status": "ok"}
        ),
    ],
    ignore_index=True,
)
judge_vs_human = cohen_kappa(
    long, "judge", "human", scale=levels, weights="quadratic", ci=interval
).assign(statistic="kappa (quadratic)", rater_a=judge)
display(judge_vs_human)
for line in figure_notes(judge_vs_human, ["statistic", "rater_a"]):
    print(line)
write_table(judge_vs_human, tables / "judge_vs_human.csv")

# %% [markdown]
# The items where judge and people differ most, with the judge's reason and raw reply, for
# every variant and run (filter the table by `model`, `variant` or `run`):

# %%
context = items[["ID", group_column, "Question", "Answer"]].rename(
    columns={"ID": "item_id", group_column: "answer_model"}
)
review = disagreements(verdicts, labels, context=context, top=10)
display(review)
write_table(review, tables / "disagreements.csv")

# %% [markdown]
# ## Correct: each model's mean score from all judge scores plus the labels
#
# Prediction-powered inference (Angelopoulos et al., *Science* 2023, via `ppi-python`):
# the judge's mean over every item, corrected by its average error on the labelled items.
# With a handful of labels per model the intervals use Student's t (n − 1 degrees of freedom)
# where `ppi-python` uses the normal quantile; the `note` column says why a row has none.

# %%
judge_and_human = pd.DataFrame(
    {
        "model": chosen["item_id"].map(groups),
        "judge_score": chosen["score"].astype(float),
        "human_score": chosen["item_id"].map(human.set_index("item_id")["score"]),
    }
)
means = corrected_means(judge_and_human)
display(means)
ppi_rows = means[means["estimator"] == "ppi"]
thin = sorted(ppi_rows.loc[ppi_rows["estimate"].isna(), "model"])
if thin:
    print(f"too few labels for an interval (fewer than 5) for: {', '.join(thin)}")
write_table(means, tables / "corrected_means.csv")

# %% [markdown]
# ### Does it work? The riddles study, a few labels at a time
#
# The riddles study (every answer scored by one human and four judges, accuracy 0/3/5) knows
# every human score, so the check can be run: keep only `ppi_labels` human scores (spread
# evenly over the answering models), estimate each model's mean human score with PPI from
# them plus all of one judge's scores, and see how often the 95% interval covers the mean of
# all the human scores — `n_subsamples` times, for each judge (counts printed below).

# %%
wide = riddles_v2_wide(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
JUDGES = ("Perplexity", "GPT", "Gemini", "Claude")
print(
    f"{len(wide)} answers by {wide['model'].nunique()} models; {ppi_labels} human labels per "
    f"subsample, {n_subsamples} subsamples per judge"
)
runs = {
    judge_name: ppi_coverage(
        pd.DataFrame(
            {
                "model": wide["model"],
                "judge_score": wide[f"accuracy_{judge_name}"].astype(float),
                "human_score": wide["accuracy_Human"].astype(float),
            }
        ),
        n_labels=ppi_labels,
        n_subsamples=n_subsamples,
        seed=seed,
    )
    for judge_name in JUDGES
}
summary = pd.concat(
    [coverage_summary(c).assign(judge=j) for j, c in runs.items()], ignore_index=True
)
display(summary.pivot_table(index=["judge", "model"], columns="estimator", values="coverage"))
write_table(summary, tables / "ppi_coverage.csv")
pooled = {j: c[c["estimator"] == "ppi"]["covered"].mean() for j, c in runs.items()}
print("PPI coverage pooled over models: " + ", ".join(f"{j} {v:.3f}" for j, v in pooled.items()))
width = summary.pivot_table(index="judge", columns="estimator", values="mean_half_width")
print(
    f"mean half-width, PPI vs labels only: {width['ppi'].mean():.2f} vs "
    f"{width['human_only'].mean():.2f}"
)
assert (width["ppi"] < width["human_only"]).all(), "PPI should beat the labels alone"
example = runs["Gemini"][runs["Gemini"]["subsample"] == 0]
fig = plot_ppi_study(example, summary[summary["estimator"] == "ppi"])
saved = plots.save_figure(fig, "labels_ppi_riddles", folder=figures)

# %% [markdown]
# **Figure: a few labels plus a judge recover the human means.** Left: one subsample of
# `ppi_labels` human labels with Gemini as judge — the PPI interval (judge + labels), the
# judge alone (narrow but centred on the judge's own bias) and the labels alone (wide); the
# dotted line is the mean of all the human scores. Right: how often the PPI interval covers
# that mean over `n_subsamples` subsamples, per judge and model; the grey band is 90–98%.

# %% [markdown]
# ## The calibration record
#
# Written next to the study: the agreement figures bound to the judge model, endpoint, rubric
# version, variant and a hash of the rendered prompt. The report notebooks print it and warn
# when any of these changed since.

# %%
agreement = pd.concat([judge_vs_human, between_people], ignore_index=True)
record = calibration_record(
    judge_model=judge,
    endpoint=endpoint,
    rubric=rubric,
    variant=variant,
    labels=labels,
    agreement=agreement,
)
written = write_calibration(record, study.folder.root / "calibration.json")
print(describe_calibration(record))
print(f"-> {written}")
