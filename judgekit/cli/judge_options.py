"""``judgekit judge``'s command-line options, read into the objects of one run.

Each flag's parameter is named after the field it sets, in the engine's ``JudgeOptions``, the
``EndpointOptions`` or the ``JudgeCommand``, which routes them by name
(:func:`judgekit.judging.command.split_options`); the command is a thin caller of
:func:`judgekit.judging.judge_study.judge_study` (``jk.judge_study``), as notebook 01 is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgekit.cli.app import app, invoked


@app.command()
def judge(  # long only because typer reads one parameter per flag from the signature
    context: typer.Context,
    items: Annotated[Path, typer.Argument(help="Your items table (.csv, .tsv or .xlsx).")],
    rubric: Annotated[
        str,
        typer.Option(help="Rubric name (see `judgekit rubrics`), rubric folder or prompt file."),
    ],
    study: Annotated[
        Path | None, typer.Option(help="Study folder to write (judgments, labels, store).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Judgments table (.parquet, .csv or .tsv).")
    ] = None,
    labels_column: Annotated[
        str | None, typer.Option(help="Human label column (default: the rubric's).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Judge model (default: JUDGEKIT_JUDGE_MODEL).")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="Provider preset: openai, azure, vllm, ollama, ...")
    ] = None,
    judges: Annotated[
        list[str] | None,
        typer.Option(
            "--judge", help="A judge of a panel: [NAME=]PROVIDER:MODEL[@BASE_URL] (repeatable)."
        ),
    ] = None,
    panel: Annotated[
        Path | None, typer.Option(help="Panel file: judges with labels, limits, prices.")
    ] = None,
    label_map: Annotated[
        str | None, typer.Option(help="Put labels on the scale: 1=0,4=5 (4=: unlabelled).")
    ] = None,
    no_labels: Annotated[bool, typer.Option(help="Leave the human labels out.")] = False,
    orders: Annotated[
        str,
        typer.Option(help="Pairwise rubrics: show each pair both|ab|random (seeded by --seed)."),
    ] = "both",
    runs: Annotated[int, typer.Option(help="Repeats of every request.")] = 1,
    variants: Annotated[
        list[str] | None,
        typer.Option("--variant", help="Prompt variant (repeatable; default base)."),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="Items per request.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int | None, typer.Option(help="Output cap per request.")] = None,
    store: Annotated[Path | None, typer.Option(help="SQLite response store.")] = None,
    id_score_csv: Annotated[
        Path | None, typer.Option(help="Also write the seed-style ID,score file(s).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="Judge only the first N items (only they are read).")
    ] = None,
    max_concurrency: Annotated[int | None, typer.Option(help="Requests in flight.")] = None,
    requests_per_minute: Annotated[
        float | None, typer.Option("--rpm", help="Requests per minute budget.")
    ] = None,
    tokens_per_minute: Annotated[
        float | None, typer.Option("--tpm", help="Tokens per minute budget.")
    ] = None,
    timeout_s: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per HTTP attempt, reply included.")
    ] = None,
    max_retries: Annotated[int | None, typer.Option(help="Retries of a failed call.")] = None,
    endpoint_name: Annotated[
        str | None,
        typer.Option(help="Name the endpoint in the store (replay when its URL or port moves)."),
    ] = None,
    max_reasks: Annotated[int, typer.Option(help="Re-asks of unusable rows.")] = 2,
    max_unscored: Annotated[
        int, typer.Option(help="Rows allowed without a score from an unusable reply.")
    ] = 0,
    seed: Annotated[int, typer.Option(help="Seed sent where the endpoint honours it.")] = 0,
    offline: Annotated[bool, typer.Option(help="Answer only from the store.")] = False,
    dry_run: Annotated[
        bool, typer.Option(help="Print the first request and the estimate; send nothing.")
    ] = False,
    mode: Annotated[
        str, typer.Option(help="independent (request per batch) or conversation (chat per run).")
    ] = "independent",
    context_tokens: Annotated[
        int | None, typer.Option(help="Conversation mode: context budget in tokens.")
    ] = None,
    shuffle_seed: Annotated[
        int | None, typer.Option(help="Shuffle item order per run with this seed.")
    ] = None,
    encoding: Annotated[str | None, typer.Option(help="Force the file's encoding.")] = None,
    sep: Annotated[str | None, typer.Option(help="Force the file's separator.")] = None,
    sheet: Annotated[str | None, typer.Option(help="Worksheet of an xlsx file.")] = None,
    batch_api: Annotated[
        bool, typer.Option(help="Judge through the provider's Batch API (resumable).")
    ] = False,
    write_requests: Annotated[
        Path | None, typer.Option(help="Write the requests as batch JSONL (vllm run-batch).")
    ] = None,
    prices: Annotated[
        str | None, typer.Option(help="USD per 1M input,output tokens for the estimate.")
    ] = None,
    column_map: Annotated[
        list[str] | None,
        typer.Option(
            help="Your prompt's placeholder=Column, or your header=Column for a packaged rubric "
            "(repeatable), e.g. question=Question, Reference=Ref_Answer."
        ),
    ] = None,
    format_reminder: Annotated[
        bool | None,
        typer.Option(
            help="Close your prompt with the format's reminder; re-asks say what was wrong."
        ),
    ] = None,
) -> None:
    """Judge your items with a rubric; write a study folder or a judgments table.

    With no OPENAI_API_KEY, OPENAI_BASE_URL, --base-url or --provider, the local model judges.
    """
    from judgekit.judging.batch import parse_prices
    from judgekit.judging.judge_study import judge_study

    flags = dict(context.params)  # each flag by its parameter name: judge_study's settings
    flags.update(
        variants=tuple(variants or ("base",)),
        prices=parse_prices(prices),
        column_map=tuple(column_map or ()),
        judges=tuple(judges or ()),
        command_line=invoked(),
    )
    judge_study(flags.pop("items"), flags.pop("rubric"), study=flags.pop("study"), **flags)
