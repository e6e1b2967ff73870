# %% [markdown]
# # Human labels: choose, label, compare, correct
#
# The judge is only as trustworthy as its agreement with people. This notebook **chooses**
# which judged items people should label (a seeded sample covering the judge's whole scale,
# balanced over the answering models, plus items where runs or prompt variants disagree; the
# planner sizes it), lets each person **label** them blind (`judgekit label STUDY --labeller
# NAME` opens a page of its own; here, set `labeller` to label in JupyterLab), **compares**
# every human rater with each other and with the judge, and **corrects** each answering
# model's mean score with prediction-powered inference. `judgekit report STUDY` runs it once
# the study has labels.
#
# All human labels are one table: the items file's label column (rater `column NAME`) and
# the labelling tool's `labels.csv` (one rater per labeller). Every figure below names the
# rater it used, and where two raters scored an item differently the item is listed.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
dataset_path: str = ""  # the judged items (ID + rubric columns); empty: the study's items.csv
rubric_name: str = ""  # rubric whose scores are labelled; empty: the first judged
n_labels: int = 0  # items to label (first run only); 0: as planned, at least 5 per answering model
seed: int = 0  # seed of the sample, its order and every resampling step
expected_kappa: float = 0.8  # agreement the planner assumes (seed 004's gate)
labeller: str = ""  # your name: label here in JupyterLab; empty: analyse the labels
endpoint: str = ""  # the judge's base URL, for the calibration record (never a key)
n_boot: int = 1000  # bootstrap replicates of the kappa intervals
coverage_check: str = "riddles"  # PPI coverage check on: "riddles" (published), "study", "none"
scores_path: str = ""  # riddles v2 scores for the PPI check; empty: config.DATA_DIR / ...
ppi_labels: int = 30  # labels per subsample in the PPI check (spread over the models)
n_subsamples: int = 200  # subsamples in the PPI check
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/human_labels

# %%
import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import write_table
from judgekit.labels import (
    calibration_record,
    describe_calibration,
    disagreements,
    inter_human_agreement,
    rubric_version,
    write_calibration,
)
from judgekit.labels.table import describe_human_labels, label_conflicts
from judgekit.plots import plot_planner, plot_ppi_study
from judgekit.riddles import riddles_v2_wide
from judgekit.stats import CI, corrected_means, coverage_summary, plan_kappa_halfwidth, ppi_coverage
from judgekit.stats.agreement import cohen_kappa
from judgekit.study.folder import figure_notes, open_report
from judgekit.study.labelling import labelling_items, study_items, study_plan
from judgekit.study.parameters import check_parameters
from judgekit.types import UsageError

check_parameters(globals(), "08_human_labels")  # stops at an unknown parameter

study, figures, tables = open_report(
    "human_labels", judgments_path, figures_dir=figures_dir, output_dir=output_dir, replies=True
)  # the judge's reasons are for the disagreement review below, never for the labeller
plan, about = study_plan(study, n_labels or None, seed, rubric_name)
rubric = study.rubric(str(plan["rubric"].iloc[0]))
levels = rubric.scale.allowed
print(f"{about}; rubric {rubric.name} {levels}")  # the plan itself is not shown: it is not blind

# %%
precision = plan_kappa_halfwidth(
    plan["judge_score"].astype(float).to_numpy(),
    levels,
    sorted({10, 20, 30, 50, 100, len(plan)}),
    expected_kappa=expected_kappa,
    seed=seed,
)
write_table(precision, tables / "planner.csv")
fig = plot_planner(precision, chosen=len(plan))
saved = plots.save_figure(fig, "labels_planner", folder=figures)

# %% [markdown]
# **Figure: how wide the judge-versus-human kappa interval will be.** Simulated from the
# judge's score distribution on the planned items, assuming the stated agreement; the orange
# dot is the planned label count.

# %% [markdown]
# ## Label blind
#
# With `labeller` set, the widget below shows one planned item at a time: the rubric's scale
# and anchors, the question, the answer and the reference; never the judge's score or
# reason, the answering model or the item's ID. A digit scores, `s` skips (the item comes
# back), `a` abstains where the rubric allows it, arrows move; every label is saved at once to
# the study's `labels.csv`, and running this cell again resumes. Once labelled, set
# `labeller` to empty (or run `judgekit report STUDY`) for the analysis below.

# %%
if labeller:
    from judgekit.labels.session import LabellingSession
    from judgekit.labels.widget import LabellingPause, LabelWidget

    to_label = labelling_items(study, plan, dataset_path)
    display(LabelWidget(LabellingSession(to_label, rubric, study.folder.long_labels, labeller)))
    raise LabellingPause("labelling: the analysis below waits until `labeller` is empty")

# %% [markdown]
# ## Every human label, and where raters differ

# %%
human = study.human[study.human["rubric"] == rubric.name]
print(f"human labels of {rubric.name}: {describe_human_labels(human)}")
stale = sorted(set(human["rubric_version"].dropna()) - {rubric_version(rubric), ""})
if stale:
    print(f"warning: some labels were made with another version of the rubric: {stale}")
scored = human[human["status"] == "ok"]
if scored.empty:
    raise UsageError(
        f"no scored labels for {rubric.name} in {study.folder.root} yet: label with "
        f"`judgekit label {study.folder.root} --labeller NAME`, then run this again"
    )
conflicts = label_conflicts(human)
write_table(conflicts, tables / "label_conflicts.csv")
if conflicts.empty:
    print("no item was scored differently by two raters")
else:
    print(f"{len(conflicts)} item(s) scored differently by two raters (none is resolved):")
    display(conflicts)
interval = CI("bca", n_boot=n_boot, seed=seed)  # every kappa interval here
between_people = inter_human_agreement(human, levels, ci=interval)
if between_people.empty:
    print("one rater only: no inter-human agreement (the ceiling for the judge) yet")
else:
    display(between_people)
saved = write_table(between_people, tables / "inter_human_agreement.csv")

# %% [markdown]
# ## Every judge with each human rater
#
# Every judge of the panel (named by its label in the study, as the panel notebook names it),
# on the plan's variant and run, against every rater in turn (on the items both scored); the
# `judge` column says which judge, the `human_labels` column which rater each row used.

# %%
plan_model, variant, run = (
    str(plan["judge"].iloc[0]),
    str(plan["variant"].iloc[0]),
    int(plan["run"].iloc[0]),
)
judge_column = "judge" if "judge" in study.verdicts.columns else "model"
rubric_verdicts = study.verdicts[study.verdicts["rubric"] == rubric.name]
panel = [str(j) for j in pd.unique(rubric_verdicts[judge_column].astype(str))]
# The planned judge (the plan names its model): the one the sample and PPI check are drawn for.
judge = str(
    rubric_verdicts.loc[rubric_verdicts["model"] == plan_model, judge_column].astype(str).iloc[0]
)
print(f"judges of {rubric.name}: {', '.join(panel)} (planned with {judge})")


def judge_rows(name: str) -> pd.DataFrame:
    """One judge's verdicts on the plan's variant and run."""
    mine = rubric_verdicts[rubric_verdicts[judge_column].astype(str) == name]
    return mine[(mine["variant"] == variant) & (mine["run"] == run)]


def versus(name: str, rater: str) -> pd.DataFrame:
    """Quadratic kappa of one judge against one human rater."""
    rows, theirs = judge_rows(name), scored[scored["labeller"] == rater]
    long = pd.concat(
        [
            pd.DataFrame(
                {"item": rows["item_id"], "rater": "judge", "score": rows["score"],
                 "status": rows["status"]}
            ),
            pd.DataFrame(
                {"item": theirs["item_id"], "rater": "human", "score": theirs["score"],
                 "status": "ok"}
            ),
        ],
        ignore_index=True,
    )  # fmt: skip
    return cohen_kappa(long, "judge", "human", scale=levels, weights="quadratic", ci=interval)


raters = sorted(scored["labeller"].unique())
judge_vs_human = pd.concat(
    [
        versus(j, r).assign(
            statistic="kappa (quadratic)", rater_a=j, rater_b=r, judge=j, human_labels=r
        )
        for j in panel
        for r in raters
    ],
    ignore_index=True,
)
display(judge_vs_human)
for line in figure_notes(judge_vs_human, ["judge", "statistic", "rater_b"]):
    print(line)
saved = write_table(judge_vs_human, tables / "judge_vs_human.csv")
verdicts = rubric_verdicts[rubric_verdicts[judge_column].astype(str) == judge]
chosen = judge_rows(judge)

# %% [markdown]
# The items where the judge and the reference rater differ most, with the judge's reason and
# raw reply, for every variant and run (filter the table by `variant` or `run`):

# %%
reference = study.labels[study.labels["rubric"] == rubric.name]
print(f"reference rater: {study.labels_source}")
items = study_items(study, dataset_path)
context = items[[c for c in ("ID", "Question", "Answer") if c in items.columns]].rename(
    columns={"ID": "item_id"}
)
reference_long = reference.assign(labeller="reference", status="ok")
review = disagreements(verdicts, reference_long, context=context, top=10)
display(review.assign(human_labels=study.labels_source))
saved = write_table(review.assign(human_labels=study.labels_source), tables / "disagreements.csv")

# %% [markdown]
# ## Correct: each model's mean score from all judge scores plus the labels
#
# Prediction-powered inference (Angelopoulos et al., *Science* 2023, via `ppi-python`): the
# judge's mean over every item, corrected by its average error on the labelled items, with
# Student's t (n − 1 degrees of freedom) for the handful of labels per model, for every judge
# of the panel; intervals are clipped to the rating scale (the `note` says where). The labels are
# the labelling tool's first labeller's when the tool has labels (the planned sample), else
# the reference rater's on the planned items; the `human_labels` column says whose.

# %%
tool = scored[scored["source"] == "labelling tool"]
if len(tool):
    ppi_rater = sorted(tool["labeller"])[0]
    ppi_scores = tool[tool["labeller"] == ppi_rater].set_index("item_id")["score"]
else:  # no one has labelled yet: the reference rater's labels of the planned items stand in
    ppi_rater = f"{study.labels_source.split(' (')[0]} on the {len(plan)} planned items"
    planned = reference[reference["item_id"].isin(plan["item_id"])]
    ppi_scores = planned.set_index("item_id")["score"]
print(f"labels used for PPI: {ppi_rater}")


def ppi_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """One judge's scores per answering model, with the PPI labels where there are any."""
    has_models = "answer_model" in rows.columns
    models = rows["answer_model"].fillna("").astype(str) if has_models else "all answers"
    return pd.DataFrame(
        {
            "model": models,
            "judge_score": rows["score"].astype(float),
            "human_score": rows["item_id"].map(ppi_scores),
        }
    )


scale = (min(levels), max(levels))  # intervals past the scale are clipped, the note says so
judge_and_human = ppi_frame(chosen)
means = pd.concat(
    [corrected_means(ppi_frame(judge_rows(j)), scale=scale).assign(judge=j) for j in panel],
    ignore_index=True,
).assign(human_labels=ppi_rater)
display(means)
for line in figure_notes(means, ["judge", "model", "estimator"]):
    print(line)  # why a mean or an interval is missing (too few labels, or nothing left out)
saved = write_table(means, tables / "corrected_means.csv")

# %% [markdown]
# ### Does it work? PPI on data whose every human score is known
#
# Keep only `ppi_labels` human scores (spread evenly over the answering models), estimate
# each model's mean human score with PPI from them plus all of one judge's scores, and see
# how often the 95% interval covers the mean of all the human scores, `n_subsamples` times.
# `coverage_check` chooses the data: the published riddles study (one human and four judges
# on 600 answers), this study (when its reference rater scored every item), or none.

# %%
if coverage_check == "riddles":
    wide = riddles_v2_wide(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
    checked = {
        name: pd.DataFrame(
            {
                "model": wide["model"],
                "judge_score": wide[f"accuracy_{name}"].astype(float),
                "human_score": wide["accuracy_Human"].astype(float),
            }
        )
        for name in ("Perplexity", "GPT", "Gemini", "Claude")
    }
elif coverage_check == "study":
    full = reference.set_index("item_id")["score"]
    checked = {judge: judge_and_human.assign(human_score=chosen["item_id"].map(full)).dropna()}
elif coverage_check == "none":
    checked = {}
else:
    raise UsageError(f"coverage_check {coverage_check!r}: use riddles, study or none")
enough = {j: d for j, d in checked.items() if len(d) >= 2 * ppi_labels}
for name in sorted(set(checked) - set(enough)):
    print(f"coverage check skipped for {name}: fewer than {2 * ppi_labels} fully labelled items")
runs = {
    name: ppi_coverage(data, n_labels=ppi_labels, n_subsamples=n_subsamples, seed=seed)
    for name, data in enough.items()
}
if runs:
    summary = pd.concat(
        [coverage_summary(c).assign(judge=j) for j, c in runs.items()], ignore_index=True
    )
    display(summary.pivot_table(index=["judge", "model"], columns="estimator", values="coverage"))
    write_table(summary, tables / "ppi_coverage.csv")
    pooled = {j: c[c["estimator"] == "ppi"]["covered"].mean() for j, c in runs.items()}
    print(
        "PPI coverage pooled over models: " + ", ".join(f"{j} {v:.3f}" for j, v in pooled.items())
    )
    example_judge = "Gemini" if "Gemini" in runs else next(iter(runs))
    example = runs[example_judge][runs[example_judge]["subsample"] == 0]
    fig = plot_ppi_study(example, summary[summary["estimator"] == "ppi"])
    saved = plots.save_figure(fig, f"labels_ppi_{coverage_check}", folder=figures)
else:
    print("no coverage check run")

# %% [markdown]
# **Figure: a few labels plus a judge recover the human means.** Left: one subsample of
# `ppi_labels` human labels: the PPI interval (judge + labels), the judge alone (narrow but
# centred on the judge's own bias) and the labels alone (wide); the dotted line is the mean of
# all the human scores. Right: how often the PPI interval covers that mean over
# `n_subsamples` subsamples, per judge and model; the grey band is 90–98%.

# %% [markdown]
# ## The calibration record
#
# Written next to the study: the agreement figures (the judge with every rater, and the raters
# with each other) bound to the judge model, endpoint, rubric version, variant and a hash of
# the rendered prompt. The report notebooks print it and warn when any of these changed since.

# %%
record = calibration_record(
    judge_model=plan_model,
    endpoint=endpoint,
    rubric=rubric,
    variant=variant,
    labels=scored,
    agreement=pd.concat([judge_vs_human, between_people], ignore_index=True),
)
written = write_calibration(record, study.folder.root / "calibration.json")
print(describe_calibration(record))
print(f"-> {written}")
