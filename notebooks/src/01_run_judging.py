# %% [markdown]
# # Run a judge over a dataset
#
# Scores every item of a table with one or more rubrics, prompt variants and repeated runs, and
# writes the tidy judgments table the analysis notebooks (02–05) read. Without an API key and
# without a base URL, the **local judge** (a small llama.cpp model, a plumbing check rather
# than a serious judge) is started and used. Keys are never parameters: the client reads them
# from the environment (`OPENAI_API_KEY`, or the provider's own variable).
#
# `output_dir` is a study folder (the layout `judgekit judge --study` writes and `judgekit report`
# reads): `judgments.parquet` and `.csv` (each item's settling attempt, with the raw reply),
# `human_labels.parquet` (the rubric's label column, when the table has one), one seed-style
# `ID,score` file per rubric, variant and run under `scores/` (with a `.status.csv` sidecar
# explaining every empty score), and the response store that replays replies on a rerun.

# %% tags=["parameters"]
dataset_path: str = ""  # item table (csv/tsv/xlsx); empty: data/demo/riddles_demo.csv
id_column: str = "ID"  # column holding the item IDs
answer_model_column: str = "Model"  # column naming the model whose answer is judged
question_column: str = "Question"  # column grouping answers to the same question
length_column: str = "Answer"  # column whose length in characters probes length bias
rubrics: list = ["riddle_accuracy", "riddle_reasoning"]  # see judgekit.rubrics.list_rubrics()
variants: list = ["base"]  # prompt variants of every rubric: base, paraphrase_1, ...
runs: int = 1  # independent repeats of every request
batch_size: int = 0  # items per request; 0: the rubric's default
judge_model: str = ""  # judge model name; empty: the local judge's model
base_url: str = ""  # OpenAI-compatible endpoint; empty: the provider's URL or the local judge
provider: str = ""  # provider preset, see judgekit.engine.PROVIDERS; empty: openai or local
temperature: float = 0.0  # sampling temperature
max_tokens: int = 0  # output cap per request; 0: not sent
max_reasks: int = 2  # re-asks of the rows a reply left unscored, per batch
max_concurrency: int = 0  # requests in flight; 0: the client's default
judges: list = []  # a panel, as a panel file's judges: list (see README); empty: the judge above
batch_api: bool = False  # judge through the provider's Batch API (openai, azure, gemini): resumable
store_path: str = ""  # response store (SQLite); empty: responses.sqlite in output_dir
output_dir: str = ""  # folder for the outputs; empty: config.RUNS_DIR / "judging"

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from judgekit import config
from judgekit.data import read_table, write_id_score_csv, write_table
from judgekit.data.tidy import final_verdicts, write_judgments
from judgekit.judging.batch import judge_in_batches
from judgekit.judging.command import judge_settings
from judgekit.judging.panel import check_panel, panel_from_entries
from judgekit.judging.panel_run import judge_panel, panel_clients
from judgekit.rubrics import load_rubric
from judgekit.stats.status import status_summary
from judgekit.study.accumulate import score_file
from judgekit.study.folder import StudyFolder
from judgekit.study.items import human_labels, study_items, with_context
from judgekit.study.parameters import check_parameters
from judgekit.types import JUDGMENT_COLUMNS, Status

check_parameters(globals(), "01_run_judging")  # stops at an unknown parameter

dataset = Path(dataset_path) if dataset_path else config.DATA_DIR / "demo" / "riddles_demo.csv"
out = Path(output_dir) if output_dir else config.RUNS_DIR / "judging"
out.mkdir(parents=True, exist_ok=True)
study = StudyFolder(out)  # the same layout `judgekit judge --study` writes and `report` reads
store = Path(store_path) if store_path else study.store
table = read_table(dataset, id_column=id_column)
print(f"{len(table.frame)} rows from {dataset.name}")

# %% [markdown]
# ## Judge
#
# Every judge of the panel (or the one judge) scores every rubric, variant and run; the judges
# run at once, each within its own limits, on one store. Rows a reply left unscored are
# re-asked, and every item gets a status (a parse failure is never a score).

# %%
options, endpoint = judge_settings(  # the CLI's one path: each value to its object's field
    model=judge_model or None,
    base_url=base_url or None,
    provider=provider or None,
    max_concurrency=max_concurrency or None,
    runs=runs,
    variants=tuple(variants),
    batch_size=batch_size or None,
    store=store,
    temperature=temperature,
    max_tokens=max_tokens or None,
    max_reasks=max_reasks,
    progress=False,
)
panel = panel_from_entries(judges, endpoint)
check_panel(panel)
context_sources = {
    "answer_model": answer_model_column,
    "question": question_column,
    "answer_chars": length_column,
}
prices = {spec.label: spec.prices for spec in panel}
frames, labels, n_items = [], [], {}
with panel_clients(panel, log_dir=out, notice_stream=None) as clients:
    for label, client in clients.items():
        print(f"judge {label}: {client.model} (structured replies: {client.structured_mode})")
    for name in rubrics:
        rubric = load_rubric(name)
        items, unused = study_items(table, rubric, id_column=id_column)
        if unused:
            print(f"{name}: columns not sent to the judge: {', '.join(unused)}")
        if batch_api:  # one judge after another, each in batches of its own (docs/engine.md)
            judged = judge_in_batches(items, rubric, clients, options)
        else:
            judged = judge_panel(items, rubric, clients, options, prices)
        for label, outcome in judged.items():
            if outcome.judgments is None:
                raise RuntimeError(f"{name}: judge {label} failed: {outcome.failure}")
            frames.append(with_context(outcome.judgments, items, context_sources))
            calls = outcome.judgments.attrs.get("api_calls", "?")
            print(f"{name} / {label}: {calls} API calls, {len(outcome.judgments)} rows")
        labels.append(human_labels(items, rubric, answer_model_column=answer_model_column))
        n_items[name] = len(items)
judgments = pd.concat(frames, ignore_index=True)
human = pd.concat(labels, ignore_index=True)

# %% [markdown]
# ## What came back
#
# Status of every final verdict per rubric, variant and run: only `ok` rows carry a score.

# %%
verdicts = final_verdicts(judgments)
summary = status_summary(verdicts, by=("rubric", "variant", "run"))
display(summary[summary["count"] > 0])
known = {status.value for status in Status}
assert set(judgments["status"]) <= known
assert judgments.loc[judgments["status"] == "ok", "score"].notna().all()
assert judgments.loc[judgments["status"] != "ok", "score"].isna().all()
per_run = verdicts.groupby(["rubric", "variant", "judge", "run"]).size()
for (name, _variant, _judge, _run), count in per_run.items():
    assert count == n_items[name], f"{name}: {count} verdicts for {n_items[name]} items"
assert len(per_run) == len(rubrics) * len(variants) * len(panel) * runs

# %% [markdown]
# ## Write the outputs

# %%
write_judgments(judgments, study.judgments)
write_judgments(judgments, study.judgments_csv)
write_table(human, study.human_labels)
for (name, variant, label, run), _ in per_run.items():
    write_id_score_csv(
        judgments[judgments["judge"] == label],
        out / score_file(name, variant, label, run, panel=len(panel) > 1),
        rubric=name,
        variant=variant,
        run=run,
    )
assert list(judgments.columns[: len(JUDGMENT_COLUMNS)]) == list(JUDGMENT_COLUMNS)
print(f"judgments: {study.judgments} ({len(judgments)} rows)")
print(f"human labels: {len(human)} rows; ID,score files: {study.scores}")
