# %% [markdown]
# # Does the judge agree with the human?
#
# Reads the judgments and human labels written by `01_run_judging` and compares each judge
# with the human on each prompt variant and run chosen (rows keyed by rubric, judge, variant
# and run; `judgekit report` chooses every one judged): the kappa family (unweighted, linear and
# quadratic weights) with confidence intervals, exact and within-one agreement, the confusion
# matrix, a breakdown per answering model, and seed 004's validation protocol as pass/fail.
# Unscored verdicts (parse failures, abstentions, missing rows) are dropped from the pairs and
# counted next to every estimate, never turned into numbers.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
repeats_path: str = ""  # judgments with repeated runs for seed 004's consistency check; empty: none
variant: str = "base"  # prompt variant compared with the human; empty: every variant judged
run: int = 1  # run compared with the human; 0: every run judged
ci_method: str = "bca"  # kappa interval: "analytic", "percentile" or "bca"
n_boot: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
threshold: float = 0.8  # seed 004's agreement gate for the quadratic weighted kappa
min_expected_kappa: float = -1.0  # assert every quadratic kappa reaches this; -1 checks nothing
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # folder for tables; empty: STUDY/report/tables/human_agreement

# %%

from dataclasses import replace

import pandas as pd
from IPython.display import display

from judgekit import plots
from judgekit.data import write_table
from judgekit.data.tidy import HUMAN, VERDICT_KEYS, rater_table, shared_scored_items
from judgekit.labels.table import describe_human_labels, label_conflicts
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns
from judgekit.stats.agreement import agreement_rates, cohen_kappa
from judgekit.stats.confusion import confusion_table
from judgekit.stats.protocol import seed004_report
from judgekit.study.folder import figure_notes, load_study, open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "02_human_agreement")  # stops at an unknown parameter

study, figures, tables = open_report(
    "human_agreement", judgments_path, labels_path, figures_dir=figures_dir, output_dir=output_dir
)
verdicts, labels = study.verdicts, study.labels
rubrics = [r for r in pd.unique(verdicts["rubric"]) if (labels["rubric"] == r).any()]
judges = list(pd.unique(verdicts["judge"]))
chosen = selected(verdicts[verdicts["rubric"].isin(rubrics)], variant, run)
print(f"rubrics with human labels: {rubrics}; judges: {judges}")
print(f"human labels compared with the judges: {study.labels_source or 'none'}")
print(f"every human label of the study: {describe_human_labels(study.human)}")
assert rubrics, "no rubric of the judgments table has human labels"

# %% [markdown]
# ## The kappa family with intervals

# %%
KAPPA_WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}
KEYS = ["rubric", "judge", "variant", "run"]  # one comparison with the human per combination
# Each combination's long table: its judge's verdicts and the human's labels of the rubric.
long, keys = {}, {}
for combination, rows in combinations(chosen, KEYS):
    name = label(combination)
    keys[name] = combination
    long[name] = rater_table(rows, labels, rubric=combination["rubric"], rater="judge")
scales = {r: study.rubric(r).scale for r in rubrics}
# A judge sharing fewer than two scored items with the human cannot be compared: say so.
pairs = [n for n in long if shared_scored_items(long[n], [keys[n]["judge"], HUMAN]) >= 2]
for name in [n for n in long if n not in pairs]:
    print(f"skipped {name}: fewer than two items scored by judge and human")
print(f"compared with the human: {pairs}")
interval = CI(ci_method, n_boot=n_boot, seed=seed)  # the kappa interval the parameters ask for
rows = [
    cohen_kappa(
        long[n], keys[n]["judge"], HUMAN, scale=scales[keys[n]["rubric"]], weights=weights,
        ci=interval,
    ).assign(**keys[n], kappa=weighting)
    for n in pairs
    for weighting, weights in KAPPA_WEIGHTS.items()
]  # fmt: skip
kappas = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
kappas = kappas.assign(human_labels=study.labels_source)  # which labels every row used
write_table(kappas, tables / "kappa_family.csv")
display(kappas)
for line in figure_notes(kappas, [*KEYS, "kappa"]):
    print(line)
labelled = {r: int((labels["rubric"] == r).sum()) for r in rubrics}
for row in kappas.itertuples():
    assert row.n + row.n_dropped == labelled[row.rubric], f"{row.rubric}: pairs do not add up"
    if row.kappa == "quadratic":
        assert not row.estimate < min_expected_kappa, f"{row.rubric}: kappa {row.estimate:.3f}"

# %%
SHOWN = ["rubric", "judge", "variant", "run"]  # what every row shares is said in the title
if pairs:
    fig = plots.plot_kappa_forest(
        kappas.rename(columns={"kappa": "weighting"}),
        label=[*SHOWN, "weighting"],
        colour_by="weighting",
        xlabel="Cohen's kappa, judge vs human (95% CI)",
    )
    saved = plots.save_figure(fig, "agreement_kappa_forest", folder=figures)

# %% [markdown]
# **Figure: judge-versus-human kappa per rubric and weighting.** Dots are the estimates, bars
# their 95% intervals; dotted lines mark 0.6 and 0.8. Weighted kappas credit near misses on
# the ordinal scale, so they sit above the unweighted one when disagreements are small.

# %% [markdown]
# ## Items that share a question
#
# Several answers to one question are alike, so the items are not independent. Resampling
# whole questions (cluster bootstrap, percentile) instead of single items gives the honest
# interval; the design effect is its width over the item-resampling one.

# %%
by_question = Columns(cluster=study.cluster) if study.cluster else None  # named by the study
clustered = pd.concat(
    [
        cohen_kappa(
            long[n], keys[n]["judge"], HUMAN, scale=scales[keys[n]["rubric"]], weights="quadratic",
            ci=replace(interval, method="percentile"), columns=by_question,
        ).assign(**keys[n])
        for n in pairs
    ]
    if by_question is not None
    else [pd.DataFrame()],
    ignore_index=True,
)  # fmt: skip
write_table(clustered, tables / "kappa_quadratic_clustered.csv")
if clustered.empty:
    print("the study's items share no question: the intervals above treat items as independent")
else:
    print(f"design effect = clustered width / item-resampling width (cluster: {study.cluster})")
    shown = [*KEYS, "estimate", "naive_ci_low", "naive_ci_high", "ci_low"]
    display(clustered[[*shown, "ci_high", "n_clusters", "design_effect", "note"]])

# %%
rates = pd.concat(
    [
        agreement_rates(long[n], keys[n]["judge"], HUMAN, scale=scales[keys[n]["rubric"]]).assign(
            **keys[n]
        )
        for n in pairs
    ]
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
        confusion_table(long[n], HUMAN, keys[n]["judge"], scale=scales[keys[n]["rubric"]]).assign(
            **keys[n], panel=n
        )
        for n in pairs
    ]
    or [pd.DataFrame()],
    ignore_index=True,
)
write_table(confusion, tables / "confusion.csv")
if pairs:
    pages = plots.plot_confusion_pages(confusion, panel=SHOWN)  # at most 9 in tall each
    saved = plots.save_pages(pages, "agreement_confusion", folder=figures)

# %% [markdown]
# **Figure: human score (rows) against judge score (columns).** Numbers are item counts, colour
# the share of the row; a perfect judge fills the diagonal only.

# %% [markdown]
# ## Per answering model

# %%
with_models = [n for n in pairs if "answer_model" in long[n].columns]
if len(with_models) < len(pairs):
    print(
        "skipped agreement per answering model where the items file has no Model column: "
        "it names the model that wrote each answer"
    )
rows = [
    cohen_kappa(
        subset, keys[n]["judge"], HUMAN, scale=scales[keys[n]["rubric"]], weights="quadratic",
        ci=interval,
    ).assign(**keys[n], answer_model=model)
    for n in with_models
    for model, subset in long[n].groupby("answer_model")
    if shared_scored_items(subset, [keys[n]["judge"], HUMAN]) >= 2
]  # fmt: skip
by_model = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
write_table(by_model, tables / "kappa_by_answer_model.csv")
display(by_model)
for rubric in dict.fromkeys(keys[n]["rubric"] for n in with_models):
    human_rows = rater_table(chosen, labels, rubric=rubric, rater="judge")
    human_rows = human_rows[human_rows["rater"] == HUMAN]
    per_model = human_rows.groupby("answer_model")["item"].nunique()
    print(
        f"{rubric}: {len(per_model)} answering models with {per_model.min()}-{per_model.max()} "
        f"of the {human_rows['item'].nunique()} labelled items each"
    )
for line in figure_notes(by_model, [*KEYS, "answer_model"]):
    print(line)

# %% [markdown]
# ## Seed 004's validation protocol
#
# Agreement with the human, the wordings of the prompt agreeing with each other (the seed asks
# for three paraphrase variants, each pair with kappa > 0.8), repeated runs at temperature 0
# agreeing completely (the seed asks for three), and scores covering the scale. The line per
# rubric below says how many wordings and runs this study actually has; a check whose data is
# missing (one run, one variant) is reported without a verdict, never as a pass.

# %%
protocol = verdicts
if repeats_path:  # the repeated runs may live in their own judgments table
    repeats = load_study(repeats_path).verdicts
    protocol = pd.concat([verdicts, repeats]).drop_duplicates(list(VERDICT_KEYS))
# The protocol's base prompt: the `variant` parameter, else `base` when judged, else the first.
bases = {}
for rubric in rubrics:
    judged = protocol[protocol["rubric"] == rubric]
    wordings_judged = list(pd.unique(judged["variant"]))
    base = variant or ("base" if "base" in wordings_judged else wordings_judged[0])
    bases[rubric] = base
    paraphrases = sorted(set(wordings_judged) - {base})
    runs_seen = judged.loc[judged["variant"] == base, "run"].nunique()
    wordings, n_pairs = len(paraphrases) + 1, len(paraphrases) * (len(paraphrases) + 1) // 2
    short = [f"{what} ({n})" for n, what in ((wordings, "wordings"), (runs_seen, "runs")) if n < 3]
    print(
        f"{rubric}: {wordings} wording(s) ({base} + {paraphrases}, {n_pairs} pair(s)), "
        f"{runs_seen} run(s) of {base}"
        + (f"; fewer than the seed's three: {', '.join(short)}" if short else "")
    )
protocol_pairs = list(dict.fromkeys((keys[n]["rubric"], keys[n]["judge"]) for n in pairs))
reports = [
    seed004_report(
        rater_table(protocol, labels, rubric=rubric, rater="judge"),
        judge=judge,
        human=HUMAN,
        scale=scales[rubric],
        kappa_threshold=threshold,
        ci=replace(interval, method="bca"),
        base_variant=bases[rubric],
    ).assign(rubric=rubric, judge=judge, variant=bases[rubric])
    for rubric, judge in protocol_pairs
]
seed004 = pd.concat(reports, ignore_index=True) if reports else pd.DataFrame()
write_table(seed004, tables / "seed004_report.csv")
display(seed004)
assert seed004.empty or "human_agreement" in set(seed004["check"])

# %% [markdown]
# ## Between people, and the calibration record
#
# Every human label of the study is one table: the items file's label column (rater
# `column NAME`) and the labelling tool's `labels.csv` (one rater per labeller). Wherever two
# raters scored the same items, their agreement with each other is the ceiling a judge can be
# expected to reach; items they scored differently are listed, not resolved. The calibration
# record notebook 08 wrote binds the agreement figures to the judge, rubric version, variant
# and prompt; a warning below means the judging reported here no longer matches it.

# %%
from judgekit.labels import (
    calibration_changes,
    describe_calibration,
    inter_human_agreement,
    prompt_hash,
    read_calibration,
    rubric_version,
)

people = study.human
for rubric in sorted(set(people["rubric"])):
    mine = people[people["rubric"] == rubric]
    between = inter_human_agreement(
        mine, study.rubric(rubric).scale.allowed, ci=replace(interval, method="bca")
    )
    if between.empty:
        print(
            f"{rubric}: one human rater ({describe_human_labels(mine)}), no inter-human agreement"
        )
    else:
        write_table(between, tables / f"inter_human_{rubric}.csv")
        display(between.assign(rubric=rubric))
    conflicts = label_conflicts(mine)
    if len(conflicts):
        print(f"{rubric}: {len(conflicts)} item(s) scored differently by two raters:")
        display(conflicts)
        write_table(conflicts, tables / f"label_conflicts_{rubric}.csv")
calibration = read_calibration(study.folder.root / "calibration.json")
if calibration is None:
    print("no calibration record yet (notebook 08 writes one)")
else:
    print(describe_calibration(calibration))
    calibrated = study.rubric(calibration["rubric"])
    # The record names the judge's model; a report of every variant checks the prompt only.
    for judge, model in verdicts[["judge", "model"]].drop_duplicates().itertuples(index=False):
        current = {
            "judge_model": model,
            **({"variant": variant} if variant else {}),
            "rubric_version": rubric_version(calibrated),
            "prompt_hash": prompt_hash(calibrated, calibration["variant"]),
        }
        for change in calibration_changes(calibration, current):
            print(f"warning ({judge}): {change}")
