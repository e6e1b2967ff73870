# %% [markdown]
# # Does batching change the verdicts?
#
# The riddles seeds judge many rows per request and tell the judge not to grow more or less
# lenient with a row's place in the batch (seeds 000 and 001) or with the batch number (000).
# First, on the judgments `01_run_judging` already wrote: does the score, at equal human score,
# drift with the row's position in its batch? The drift over the whole batch is compared with a
# tolerance chosen before looking (pass needs its whole CI inside it). Then the same items are
# judged again at several batch sizes, to see what larger batches cost in agreement with the
# human and save in prompt tokens per item. Replies are kept in a response store, so a rerun
# asks the judge nothing new.

# %% tags=["parameters"]
judgments_path: str = ""  # study folder or judgments table; empty: config.RUNS_DIR / "judging"
labels_path: str = ""  # human labels; empty: the study's human_labels.parquet or labels.csv
dataset_path: str = ""  # item table judged again per batch size; empty: data/demo/riddles_demo.csv
id_column: str = "ID"  # column holding the item IDs
rubric: str = "riddle_accuracy"  # rubric analysed and re-judged; empty: every rubric judged
variant: str = "base"  # prompt variant analysed and re-judged; empty: every variant judged
run: int = 1  # run analysed for position effects; 0: every run judged
adjust: str = "human"  # position-effect adjustment: "human", "difference" or "item"
tolerance: float = 0.5  # largest drift over a batch (score points) that counts as none
p_adjust: str = "holm"  # correction of each family of slope tests: "holm" or "fdr_bh"
batch_sizes: list = [4, 12, 24]  # rows per request compared; empty: skip the re-judging
judge_model: str = ""  # judge model name; empty: the local judge's model
base_url: str = ""  # OpenAI-compatible endpoint; empty: the provider's URL or the local judge
provider: str = ""  # provider preset, see judgekit.engine.PROVIDERS; empty: openai or local
max_tokens: int = 0  # output cap per request; 0: not sent
max_reasks: int = 1  # re-asks of the rows a reply left unscored, per batch
seed: int = 0  # request seed sent to the judge
n_boot: int = 2000  # cluster-bootstrap resamples of each batch size's kappa interval
bootstrap_seed: int = 0  # seed of those resamples
figures_dir: str = ""  # folder for figures; empty: STUDY/report/figures
output_dir: str = ""  # tables and the response store; empty: STUDY/report/tables/batch_effects

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config, plots
from judgekit.data import read_table, write_table
from judgekit.judging.batch_probe import batch_size_sensitivity
from judgekit.judging.clients import EndpointOptions, default_judge_client
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns, leniency_drift_verdict, position_effects, position_profile
from judgekit.stats.significance import adjust_p
from judgekit.study.folder import open_report
from judgekit.study.items import study_items
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "07_batch_effects")  # stops at an unknown parameter

study, figures, tables = open_report(
    "batch_effects", judgments_path, labels_path, figures_dir=figures_dir, output_dir=output_dir
)
dataset = Path(dataset_path) if dataset_path else config.DATA_DIR / "demo" / "riddles_demo.csv"
labels = study.labels
judgments = selected(study.judgments, variant, run)
judgments = judgments[judgments["rubric"] == rubric] if rubric else judgments
assert len(judgments), f"{study.folder.root}: no judgments of rubric {rubric!r}"
KEYS = ["rubric", "variant", "run"]  # one position analysis per combination, judges as groups
parts = {label(c): (c, rows) for c, rows in combinations(judgments, KEYS)}
judged_rubrics = set(judgments["rubric"])
human = {r: labels[labels["rubric"] == r].set_index("item_id")["score"] for r in judged_rubrics}
MIN_SCORED = 3  # a slope needs a few scored rows; fewer are skipped, and said so
for name, (combination, rows) in parts.items():
    print(f"{name}: {len(rows)} rows, {len(human[combination['rubric']])} human labels")

# %% [markdown]
# ## Leniency against position in the batch
#
# An OLS of the judge's score on the row's 0-based position in its request and on the batch
# number, with the human score as a covariate (`adjust="human"`) and standard errors
# clustered on the question (when the study's items have one; else on the item).
# The design effect is the clustered interval's width over the item-clustered one. Each slope
# is tested once per judge, so the p-values of one term form a family, corrected by Holm
# (`p_adjust`). Only rows scored at the first ask count: a re-asked row sits at another
# place in another request. Unscored rows are counted in `n_dropped`, never given a score.
# Unless the runs were shuffled (`shuffle_seed`), each item is seen at one position only, so a
# slope cannot tell drifting leniency apart from the order of the items in the table.

# %%
cluster = study.cluster  # the study names its cluster column (None: the item)
print(f"standard errors clustered on {cluster or 'the item'!r}")
by_question = Columns(item="item_id", cluster=cluster)
effects = []
for combination, rows in parts.values():
    scores = human[combination["rubric"]]
    by_item = position_effects(rows, scores, adjust=adjust, group_col="judge")
    clustered = position_effects(
        rows, scores, adjust=adjust, group_col="judge", columns=by_question
    )
    clustered["design_effect"] = (clustered["ci_high"] - clustered["ci_low"]) / (
        by_item["ci_high"] - by_item["ci_low"]
    )
    effects.append(clustered.assign(**combination))
effects = pd.concat(effects, ignore_index=True)
# The same slope asked of every judge (and combination) is one family of tests.
effects = adjust_p(effects, family=["term"], method=p_adjust)
# One verdict per row of effects, in its order: the combination's keys go in front.
verdicts = pd.concat([effects[KEYS], leniency_drift_verdict(effects, tolerance=tolerance)], axis=1)
# Unshuffled, every item sits at one place: a slope cannot separate leniency from item order.
confounded = judgments.groupby("item_id")["position"].nunique().max() == 1
drifts = verdicts["term"].isin(["position", "batch_index"]) & (verdicts["verdict"] != "not tested")
if confounded:  # the estimate stays in the statement; the verdict cannot be read from it
    verdicts.loc[drifts, "verdict"] = "inconclusive"
    verdicts.loc[drifts, "statement"] = (
        "inconclusive (position confounded with item order): every item sat at one position "
        "only; judge again with a shuffle seed and two or more runs to separate them; measured: "
        + verdicts.loc[drifts, "statement"].str.split(": ", n=1).str[1]
    )
write_table(effects, tables / "position_effects.csv")
write_table(verdicts, tables / "leniency_drift_verdicts.csv")
shown = [*KEYS, "group", "term", "estimate", "ci_low", "ci_high", "design_effect", "p_value"]
display(effects[[*shown, "p_adjusted", "p_adjust", "span", "n", "n_dropped", "note"]])
for row in verdicts.to_dict("records"):
    named = label({k: row[k] for k in [*KEYS, "group", "term"]})
    print(f"{named}\n  instruction: {row['instruction']}\n  {row['statement']}")
print(f"rule: {verdicts['rule'].iloc[0]}")
print(f"set aside: {effects['dropped_reason'].iloc[0] or 'nothing'}")
assert set(verdicts["verdict"]) <= {"pass", "fail", "inconclusive", "not tested"}
tested = verdicts[verdicts["verdict"] != "not tested"]
assert (tested["drift_ci_low"] <= tested["drift"]).all()
assert (tested["drift"] <= tested["drift_ci_high"]).all()

# %%
profiles = []
for name, (combination, rows) in parts.items():
    profile = position_profile(rows, human[combination["rubric"]], group_col="judge")
    profiles.append(profile.assign(**combination))
    scored_rows, positions = int(profile["n"].sum()), profile["value"].nunique()
    if scored_rows < MIN_SCORED or positions < 2:
        print(f"no position figure of {name}: {scored_rows} scored rows at {positions} position(s)")
        continue
    mine = (effects[KEYS] == pd.Series(combination)).all(axis=1) & (effects["term"] == "position")
    assert profile["n"].sum() == effects.loc[mine, "n"].sum(), name
    single = (profile["n"] == 1).all()  # one row per position: a point, no interval
    outcome = profile["outcome"].iloc[0]
    ylabel = f"{outcome} (score points{', one row each' if single else ', 95% CI'})"
    fig = plots.plot_position_effect(profile, ylabel=ylabel)
    # The rubric names the figure; its variant and run too when the rubric has several.
    several = len([c for c, _ in parts.values() if c["rubric"] == combination["rubric"]]) > 1
    shown = [combination["variant"], f"run{combination['run']}"] if several else []
    name = plots.figure_name("position_effect", combination["rubric"], *shown)
    saved = plots.save_figure(fig, name, folder=figures)
saved = write_table(pd.concat(profiles, ignore_index=True), tables / "position_profile.csv")

# %% [markdown]
# **Figure: leniency at each place in the batch.** The judge's score minus the human's, averaged
# over the rows judged at that 0-based position (first ask only), with a 95% t interval; one
# line per judge. A judge that keeps the same strictness through the batch stays level; a slope
# means rows late in the request are judged more (or less) kindly. When every position holds a
# single row (one batch per run), a point is that row and has no interval.

# %% [markdown]
# ## Agreement and cost against batch size
#
# Every item judged again at each batch size (one `judge()` call each, the same client as
# `01_run_judging` uses), compared with the human by quadratic-weighted kappa on the rubric's
# scale. Failure rates count the rows a reply left unreadable at the first ask; wall time
# includes replays from the store, so only a fresh run times the judge. When the items carry
# a question, each kappa interval resamples whole questions (a BCa cluster bootstrap,
# `n_boot` resamples) and the design effect beside it says how much wider that is than
# resampling items one by one; with fewer than 10 clusters no interval is shown (`kappa_note`).

# %%
sensitivity = pd.DataFrame()
if batch_sizes:
    assert rubric and variant, "re-judging at batch_sizes needs one rubric and one variant"
    table = read_table(dataset, id_column=id_column)
    items, _ = study_items(table, study.rubric(rubric), id_column=id_column)
    endpoint = EndpointOptions(judge_model or None, base_url or None, provider or None)
    with default_judge_client(endpoint, log_dir=tables) as client:
        print(f"judge model: {client.model}; {len(items)} items at sizes {batch_sizes}")
        sensitivity = batch_size_sensitivity(
            items,
            study.rubric(rubric),
            client,
            human[rubric],
            sizes=[int(size) for size in batch_sizes],
            variants=[variant],
            store=tables / "responses.sqlite",
            max_tokens=max_tokens or None,
            max_reasks=max_reasks,
            seed=seed,
            columns=by_question,  # kappa has no clustered analytic interval: BCa then
            ci=CI("bca" if cluster else "analytic", n_boot=n_boot, seed=bootstrap_seed),
        )
    write_table(sensitivity, tables / "batch_size_sensitivity.csv")
    method = sensitivity["kappa_ci_method"].iloc[0]
    print(f"kappa intervals: {method}, resampling {cluster or 'items'}")
    shown = ["batch_size", "api_calls", "requests", "kappa", "kappa_ci_low", "kappa_ci_high"]
    shown += ["kappa_design_effect", "kappa_n", "kappa_n_clusters", "kappa_note"]
    shown += ["first_ask_failure_rate", "final_failure_rate"]
    shown += ["prompt_tokens_per_item", "wall_time_s"]
    display(sensitivity[shown])
    assert list(sensitivity["batch_size"]) == [int(size) for size in batch_sizes]
    assert (sensitivity["rows_judged"] == len(items)).all()
    for column in ["first_ask_failure_rate", "reask_rate", "final_failure_rate"]:
        assert sensitivity[column].between(0, 1).all(), column

# %%
scored = sensitivity[sensitivity["kappa"].notna()] if len(sensitivity) else sensitivity
if len(scored) < 2:
    print(f"no batch-size figure: kappa could be computed at {len(scored)} batch size(s)")
else:
    bare = scored[scored["kappa_ci_low"].isna()]
    if len(bare):
        sizes = ", ".join(str(size) for size in bare["batch_size"])
        print(
            f"kappa drawn without an interval at batch size {sizes}: {bare['kappa_note'].iloc[0]}"
        )
    fig = plots.plot_batch_size(scored)
    saved = plots.save_figure(fig, plots.figure_name("batch_size", rubric), folder=figures)

# %% [markdown]
# **Figure: what the batch size changes.** Left: quadratic-weighted kappa between the judge and
# the human at each number of rows per request, with its 95% CI where one is defined (the line
# above names the sizes drawn without one; sizes where no kappa could be computed are left
# out). Right: prompt tokens per judged item, which fall as the rubric's
# instructions are shared by more rows. Both x axes are logarithmic.
