# %% [markdown]
# # Run a judge over a dataset
#
# Scores every item of a table with one or more rubrics, prompt variants and repeated runs into
# a study folder, exactly as `judgekit judge ... --study` does: this notebook calls the same
# function (`jk.judge_study`), once per rubric, and the study accumulates. Without an API key
# and without a base URL, the **local judge** (a small llama.cpp model, a plumbing check rather
# than a serious judge) is started and used. Keys are never parameters: the client reads them
# from the environment (`OPENAI_API_KEY`, or the provider's own variable). A panel is `judges`
# (e.g. `["a=openai:gpt-4.1", "b=vllm:qwen@http://gpu:8000/v1"]`) or a panel file (`panel`);
# `column_map` reads your headers as judgekit's columns (e.g. `["item=ID", "generator=Model"]`).
#
# `output_dir` is the study folder `judgekit report` reads: `study.json` (every judge, command
# and file), `items.csv`, `judgments.parquet` and `.csv` (each item's settling attempt, with the
# raw reply), `human_labels.parquet` (the rubric's label column, when the table has one), one
# seed-style `ID,score` file per rubric, variant and run under `scores/` (with a `.status.csv`
# sidecar explaining every empty score), and the response store that replays replies on a rerun.

# %% tags=["parameters"]
dataset_path: str = ""  # item table (csv/tsv/xlsx); empty: data/demo/riddles_demo.csv
rubrics: list = ["riddle_accuracy", "riddle_reasoning"]  # see judgekit.rubrics.list_rubrics()
variants: list = ["base"]  # prompt variants of every rubric: base, paraphrase_1, ...
runs: int = 1  # independent repeats of every request
batch_size: int = 0  # items per request; 0: the rubric's default
judge_model: str = ""  # judge model name; empty: the local judge's model
base_url: str = ""  # OpenAI-compatible endpoint; empty: the provider's URL or the local judge
provider: str = ""  # provider preset, see judgekit.engine.PROVIDERS; empty: openai or local
judges: list = []  # a panel, each judge as --judge takes it (name, provider, model, URL)
panel: str = ""  # a panel file (--panel, see README); empty: `judges` or the judge above
column_map: list = []  # header-to-column pairs, as --column-map takes them (item to ID)
temperature: float = 0.0  # sampling temperature
max_tokens: int = 0  # output cap per request; 0: not sent
max_reasks: int = 2  # re-asks of the rows a reply left unscored, per batch
max_unscored: int = 0  # verdicts a judge may leave unscored (unusable replies) before it fails
max_concurrency: int = 0  # requests in flight; 0: the client's default
batch_api: bool = False  # judge through the provider's Batch API (openai, azure, gemini): resumable
store_path: str = ""  # response store (SQLite); empty: responses.sqlite in output_dir
output_dir: str = ""  # the study folder; empty: config.RUNS_DIR / "judging"

# %%
from IPython.display import display

import judgekit as jk
from judgekit import config
from judgekit.stats.status import status_summary
from judgekit.study.parameters import check_parameters

check_parameters(globals(), "01_run_judging")  # stops at an unknown parameter

# %% [markdown]
# ## Judge
#
# Each rubric is one `judgekit judge` command (`study.json` records it as such): every judge of
# the panel (or the one judge) scores every variant and run, all judges at once on one store.
# Rows a reply left unscored are re-asked, and every item gets a status (a parse failure is
# never a score); a run that fails says why in one line, with its outputs kept.

# %%
dataset = dataset_path or config.DATA_DIR / "demo" / "riddles_demo.csv"
folder = output_dir or config.RUNS_DIR / "judging"
for rubric in rubrics:  # the flags of `judgekit judge`; an empty or zero value leaves one out
    jk.judge_study(
        dataset,
        rubric,
        study=folder,
        model=judge_model or None,
        base_url=base_url or None,
        provider=provider or None,
        judges=judges,
        panel=panel or None,
        column_map=column_map,
        variants=variants,
        runs=runs,
        batch_size=batch_size or None,
        temperature=temperature,
        max_tokens=max_tokens or None,
        max_reasks=max_reasks,
        max_unscored=max_unscored,
        max_concurrency=max_concurrency or None,
        batch_api=batch_api,
        store=store_path or None,
        progress=False,
    )

# %% [markdown]
# ## What came back
#
# Status of every final verdict per rubric, variant, judge and run: only `ok` rows carry a score.

# %%
study = jk.load_study(folder)
summary = status_summary(study.verdicts, by=("rubric", "variant", "judge", "run"))
display(summary[summary["count"] > 0])
print(f"study: {folder} ({len(study.judgments)} judgments; ID,score files in scores/)")
