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
import matplotlib.pyplot as plt
from IPython.display import display

from judgekit.labels import describe_calibration, write_calibration
from judgekit.reporting.analyses.human_labels import calibration, human_labels_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "08_human_labels")  # stops at an unknown parameter

study, figures, tables = open_report(
    "human_labels", judgments_path, figures_dir=figures_dir, output_dir=output_dir, replies=True
)  # the judge's reasons are for the disagreement review below, never for the labeller

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
    from judgekit.study.labelling import labelling_items, study_plan

    plan, about = study_plan(study, n_labels or None, seed, rubric_name)
    print(about)  # the plan itself is not shown: it is not blind
    rubric = study.rubric(str(plan["rubric"].iloc[0]))
    to_label = labelling_items(study, plan, dataset_path)
    display(LabelWidget(LabellingSession(to_label, rubric, study.folder.long_labels, labeller)))
    raise LabellingPause("labelling: the analysis below waits until `labeller` is empty")

# %% [markdown]
# ## The plan, every human label, the judges against each rater, corrected means
#
# The computation is `judgekit.reporting.analyses.human_labels.human_labels_analysis`; the
# lines below say what it planned, whose labels each part used and what it skipped.

# %%
result = human_labels_analysis(
    study,
    dataset_path=dataset_path,
    rubric_name=rubric_name,
    n_labels=n_labels,
    seed=seed,
    expected_kappa=expected_kappa,
    n_boot=n_boot,
    coverage_check=coverage_check,
    scores_path=scores_path,
    ppi_labels=ppi_labels,
    n_subsamples=n_subsamples,
)
saved = result.write(tables, figures)
for line in result.lines:
    print(line)
for figure in result.figures.values():
    plt.close(figure)  # each is shown in its section
display(result.figures["labels_planner"])

# %% [markdown]
# **Figure: how wide the judge-versus-human kappa interval will be.** Simulated from the
# judge's score distribution on the planned items, assuming the stated agreement; the orange
# dot is the planned label count.

# %% [markdown]
# ## Every human label, and where raters differ
#
# The items two raters scored differently (none is resolved), and every pair of raters.

# %%
for name in ("label_conflicts", "inter_human_agreement"):
    if not result.tables[name].empty:
        display(result.tables[name])

# %% [markdown]
# ## Every judge with each human rater
#
# Every judge of the panel (named by its label in the study, as the panel notebook names it),
# on the plan's variant and run, against every rater in turn (on the items both scored); the
# `judge` column says which judge, the `human_labels` column which rater each row used.

# %%
display(result.tables["judge_vs_human"])

# %% [markdown]
# The items where the judge and the reference rater differ most, with the judge's reason and
# raw reply, for every variant and run (filter the table by `variant` or `run`):

# %%
display(result.tables["disagreements"])

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
display(result.tables["corrected_means"])

# %% [markdown]
# ### Does it work? PPI on data whose every human score is known
#
# Keep only `ppi_labels` human scores (spread evenly over the answering models), estimate
# each model's mean human score with PPI from them plus all of one judge's scores, and see
# how often the 95% interval covers the mean of all the human scores, `n_subsamples` times.
# `coverage_check` chooses the data: the published riddles study (one human and four judges
# on 600 answers), this study (when its reference rater scored every item), or none.

# %%
if "ppi_coverage" in result.tables:  # none run: its line above
    summary = result.tables["ppi_coverage"]
    display(summary.pivot_table(index=["judge", "model"], columns="estimator", values="coverage"))
    display(result.figures[f"labels_ppi_{coverage_check}"])

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
record = calibration(study, result, rubric_name=rubric_name, seed=seed, endpoint=endpoint)
written = write_calibration(record, study.folder.root / "calibration.json")
print(describe_calibration(record))
print(f"-> {written}")
