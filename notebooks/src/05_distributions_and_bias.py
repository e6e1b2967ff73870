# %% [markdown]
# # How does the judge use the scale, and is it biased?
#
# Reads the judgments and human labels written by `01_run_judging`. First the score
# distributions per judge, answering model and prompt variant next to the human's, and whether
# each judge uses the whole scale (seed 004). Then two bias probes, both controlled for the
# true quality as the human scored it: **length bias** (do longer answers score higher at equal
# human score?) and **self-preference** (does a judge favour answers written by its own model?
# only when the `own_models` parameter pairs judges with answering models). Every table has a
# row per rubric, judge, prompt variant and run (`judgekit report` analyses every run judged).

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
run: int = 1  # run analysed; 0: every run judged
own_models: dict = {}  # judge -> answering model of its family; empty: the study settings
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/distributions_and_bias

# %%

import pandas as pd
from IPython.display import display

from judgekit import plots
from judgekit.data import write_table
from judgekit.data.tidy import (
    HUMAN,
    rater_table,
    with_human_score,
)
from judgekit.reporting.combinations import each_with_human, selected
from judgekit.stats import Columns
from judgekit.stats.bias import BIAS_COLUMNS, length_bias, self_preference
from judgekit.stats.coverage import score_coverage
from judgekit.stats.significance import adjust_p
from judgekit.study.folder import figure_notes, open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "05_distributions_and_bias")  # stops at an unknown parameter

study, figures, tables = open_report(
    "distributions_and_bias", judgments_path, labels_path, figures_dir=figures_dir,
    output_dir=output_dir,
)  # fmt: skip
verdicts, labels = selected(study.verdicts, run=run), study.labels
rubrics = list(pd.unique(verdicts["rubric"]))
long = {r: rater_table(verdicts, labels, rubric=r, rater="judge") for r in rubrics}
MIN_SCORED = 3  # a regression needs a few scored answers; fewer are skipped, and said so
# Rubrics with a human label: the comparisons and both bias probes need the human score.
with_human = [r for r in rubrics if (long[r]["rater"] == HUMAN).any()]
for rubric in sorted(set(rubrics) - set(with_human)):
    print(
        f"skipped human comparison, length bias and self-preference for {rubric}: no human "
        "labels (--labels-column, or `judgekit label`); distributions and scale use only"
    )
SEVERAL_RUNS = verdicts["run"].nunique() > 1  # then each panel names its run
print(f"rubrics: {rubrics}; judges: {list(pd.unique(verdicts['judge']))}")


# %% [markdown]
# ## Score distributions

# %%
for rubric in rubrics:
    table = long[rubric].copy()
    if "answer_model" not in table.columns:
        print(f"{rubric}: no Model column in the items file, so one bar for all answers")
        table["answer_model"] = "all answers"
    judged = table["rater"] != HUMAN
    table.loc[judged, "rater"] = table.loc[judged, "rater"] + " · " + table.loc[judged, "variant"]
    if SEVERAL_RUNS:
        table.loc[judged, "rater"] += " · run " + table.loc[judged, "run"].astype(str)
    table["rater"] = table["rater"].astype(str)
    fig = plots.plot_score_distributions(
        table,
        group="answer_model",
        panel="rater",
        panel_order=[HUMAN, *sorted(set(table["rater"]) - {HUMAN})],
        levels=study.rubric(rubric).scale.allowed,
        score_label=rubric,
    )
    saved = plots.save_figure(fig, plots.figure_name("distributions", rubric), folder=figures)
    usable = table[table["status"] == "ok"]
    assert usable["score"].isin(study.rubric(rubric).scale.allowed).all()

# %% [markdown]
# **Figure: score distributions per answering model.** One panel per rater (the human, then
# each judge and prompt variant, and run when several), bars split into the share of each
# score; `n` counts the scored items only (unscored verdicts are not drawn). A judge that
# mirrors the human's panel uses the scale as the human does.

# %%
coverage = []
for rubric in rubrics:
    for combination, rows in each_with_human(long[rubric], rubric=rubric):
        scored = rows[rows["status"] == "ok"].groupby("rater").size()
        for rater in sorted(set(rows["rater"]) - set(scored.index)):
            print(f"skipped {rubric} / {rater}: no scored items")
        rows = rows[rows["rater"].isin(scored.index)]
        human = HUMAN if rubric in with_human else None
        result = score_coverage(rows, scale=study.rubric(rubric).scale, human=human)
        coverage.append(result.summary.assign(**combination))
coverage_table = pd.concat(coverage, ignore_index=True)
# Every judge's distribution is tested against the human's: one family of tests.
coverage_table = adjust_p(coverage_table)
write_table(coverage_table, tables / "score_coverage.csv")
display(coverage_table)
for line in figure_notes(coverage_table, ["rubric", "variant", "run", "rater"], value="p_value"):
    print(line)
assert coverage_table["share_of_scale_used"].between(0, 1).all()

# %%
# Answers to one question are alike: the bias regressions cluster their errors on the question
# when the table has one, else on the item (heteroskedasticity-robust only).
by_cluster = Columns(cluster=study.cluster or "item")  # the study names its cluster
print(f"standard errors clustered on {by_cluster.cluster!r}")

# %% [markdown]
# ## Length bias
#
# Per judge, an OLS of the judge's score on the log of the answer's length and the human
# score, with standard errors clustered on the question. The `log_length` coefficient is the
# score change per e-fold longer answer at equal human score.

# %%
length_rows = []
for rubric in with_human:
    absent = [c for c in ("answer_chars", "question") if c not in long[rubric].columns]
    if absent:
        print(f"skipped {rubric}: the judgments lack {absent} (Answer and Question columns)")
        continue
    for combination, rows in each_with_human(long[rubric], rubric=rubric):
        paired = with_human_score(rows).rename(columns={"answer_chars": "length"})
        if (paired["status"] == "ok").sum() < MIN_SCORED:
            print(f"skipped {combination}: fewer than {MIN_SCORED} scored items")
            continue
        length_rows.append(length_bias(paired, columns=by_cluster).assign(**combination))
lengths = pd.concat(length_rows, ignore_index=True) if length_rows else pd.DataFrame()
lengths = adjust_p(lengths) if not lengths.empty else lengths  # one family: every judge, rubric
write_table(lengths, tables / "length_bias.csv")
display(lengths)
for line in figure_notes(lengths, ["rubric", "judge", "variant", "run", "term"]):
    print(line)

# %% [markdown]
# ## Self-preference
#
# Naive: the judge's mean score on its own model's answers minus that on the others'
# (Welch's t-test). Controlled: the same gap once the human score is accounted for. Only
# judges paired with an answering model in `own_models` can be probed.

# %%
own_models = own_models or study.settings.get("own_models", {})
bias = pd.DataFrame(columns=[*BIAS_COLUMNS, "rubric", "variant", "run"])
if not own_models:
    print(
        "self-preference not probed: no judge is paired with an answering model "
        "(`judgekit report STUDY --own-model JUDGE=MODEL`, or the own_models parameter)"
    )
else:
    print("self-preference: " + ", ".join(f"{j} belongs to {m}" for j, m in own_models.items()))
for rubric in with_human if own_models else []:
    for combination, rows in each_with_human(long[rubric], rubric=rubric):
        paired = with_human_score(rows)
        if (paired["status"] == "ok").sum() < MIN_SCORED:
            print(f"skipped {combination}: fewer than {MIN_SCORED} scored items")
            continue
        result = self_preference(
            paired, own=own_models, author_col="answer_model", columns=by_cluster
        ).assign(**combination)
        bias = pd.concat([bias.dropna(axis=1, how="all"), result], ignore_index=True)
if not bias.empty and "p_value" in bias:
    # One family per method: the same question asked of every judge and rubric.
    bias = adjust_p(bias[bias["method"] != "none"], family=["method"])
write_table(bias, tables / "self_preference.csv")
display(bias)
for line in figure_notes(bias, ["rubric", "judge", "variant", "run", "method"]):
    print(line)

# %%
SHOWN = {"naive_welch": "naive", "ols_human_clustered": "controlled for human score"}
if not bias.empty and bias["estimate"].notna().any():
    shown = bias[bias["method"].isin(list(SHOWN))].dropna(subset=["estimate"]).copy()
    named = ["rubric", "judge", *[k for k in ("variant", "run") if shown[k].nunique() > 1]]
    shown["judge"] = shown[named].astype(str).agg(" · ".join, axis=1)
    shown["method"] = shown["method"].map(SHOWN)
    fig = plots.plot_self_bias(shown)
    saved = plots.save_figure(fig, "self_preference", folder=figures)

# %% [markdown]
# **Figure (when drawn): self-preference per judge.** Dots are the judge's extra score on its
# own model's answers, bars 95% intervals; zero means no preference. The naive gap mixes
# favouritism with real quality differences; the controlled estimate holds the human score
# fixed.
