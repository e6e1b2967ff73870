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
# asks the judge nothing new. The computation is
# `judgekit.reporting.analyses.batch_effects.batch_effects_analysis`.

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
from IPython.display import display

from judgekit.reporting.analyses.batch_effects import batch_effects_analysis
from judgekit.study.folder import open_report
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "07_batch_effects")  # stops at an unknown parameter

study, figures, tables = open_report(
    "batch_effects", judgments_path, labels_path, figures_dir=figures_dir, output_dir=output_dir
)
result = batch_effects_analysis(
    study,
    rubric=rubric,
    variant=variant,
    run=run,
    adjust=adjust,
    tolerance=tolerance,
    p_adjust=p_adjust,
    batch_sizes=batch_sizes,
    dataset_path=dataset_path,
    id_column=id_column,
    judge_model=judge_model,
    base_url=base_url,
    provider=provider,
    max_tokens=max_tokens,
    max_reasks=max_reasks,
    seed=seed,
    n_boot=n_boot,
    bootstrap_seed=bootstrap_seed,
    store_dir=tables,  # the response store: a rerun asks the judge nothing new
)
result.write(tables, figures)
for line in result.lines:
    print(line)

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
shown = ["rubric", "variant", "run", "group", "term", "estimate", "ci_low", "ci_high"]
shown += ["design_effect", "p_value", "p_adjusted", "p_adjust", "span", "n", "n_dropped", "note"]
if "position_effects" in result.tables:  # none: the skipped lines above say why
    display(result.tables["position_effects"][shown])
    display(result.tables["leniency_drift_verdicts"])
for name, figure in result.figures.items():
    if name.startswith("position_effect"):
        display(figure)

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
if "batch_size_sensitivity" in result.tables:  # batch_sizes empty: no re-judging
    shown = ["batch_size", "api_calls", "requests", "kappa", "kappa_ci_low", "kappa_ci_high"]
    shown += ["kappa_design_effect", "kappa_n", "kappa_n_clusters", "kappa_note"]
    shown += ["first_ask_failure_rate", "final_failure_rate"]
    shown += ["prompt_tokens_per_item", "wall_time_s"]
    display(result.tables["batch_size_sensitivity"][shown])
for name, figure in result.figures.items():
    if name.startswith("batch_size"):
        display(figure)

# %% [markdown]
# **Figure: what the batch size changes.** Left: quadratic-weighted kappa between the judge and
# the human at each number of rows per request, with its 95% CI where one is defined (the line
# above names the sizes drawn without one; sizes where no kappa could be computed are left
# out). Right: prompt tokens per judged item, which fall as the rubric's
# instructions are shared by more rows. Both x axes are logarithmic.
