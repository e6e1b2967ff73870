"""The ``judgekit judge`` command as a plain function (the CLI module wires it into typer)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgekit.data import items_from_frame, read_table, write_id_score_csv, write_table
from judgekit.engine.client import OpenAIJudge
from judgekit.engine.runner import judge
from judgekit.rubrics import JinjaRubric, load_rubric
from judgekit.types import Item, JudgeClient


def _id_score_paths(base: Path, variants: Sequence[str], runs: int) -> dict[tuple[str, int], Path]:
    """One ``ID,score`` file per (variant, run); the given name when there is only one."""
    if len(variants) == 1 and runs == 1:
        return {(variants[0], 1): base}
    return {
        (variant, run): base.with_name(f"{base.stem}.{variant}.run{run}{base.suffix}")
        for variant in variants
        for run in range(1, runs + 1)
    }


def load_items(
    items_path: Path,
    rubric: JinjaRubric,
    output_path: Path,
    *,
    encoding: str | None = None,
    sep: str | None = None,
    sheet: str | None = None,
    limit: int | None = None,
) -> list[Item]:
    """Check the command's inputs and read the items, before any judge is started or paid.

    Raises:
        judgekit.data.DataError: For a bad items file (names file, row and column).
        ValueError: For an output path that is not ``.parquet``/``.csv`` or a bad ``limit``.
    """
    if output_path.suffix.lower() not in (".csv", ".parquet"):
        raise ValueError(f"{output_path}: output must end in .parquet or .csv")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    table = read_table(
        items_path, required=rubric.required_columns, encoding=encoding, sep=sep, sheet=sheet
    )
    items = items_from_frame(
        table.frame,
        rubric.required_columns,
        optional=rubric.optional_columns,
        source=str(items_path),
    )
    return items[:limit] if limit is not None else items


def judge_command(
    items_path: Path,
    rubric_name: str,
    model: str | None,
    output_path: Path,
    *,
    client: JudgeClient | None = None,
    base_url: str | None = None,
    provider: str | None = None,
    runs: int = 1,
    variants: Sequence[str] = ("base",),
    batch_size: int | None = None,
    store_path: Path | None = None,
    id_score_csv: Path | None = None,
    limit: int | None = None,
    max_concurrency: int = 8,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    max_reasks: int = 2,
    seed: int = 0,
    offline: bool = False,
    mode: str = "independent",
    context_tokens: int | None = None,
    shuffle_seed: int | None = None,
    encoding: str | None = None,
    sep: str | None = None,
    sheet: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Judge a table file with a packaged rubric and write the results.

    Args:
        items_path: Items table (.csv, .tsv, .xlsx) with an ``ID`` column and the rubric's
            input columns (aliases such as ``Reference Answer`` are recognised).
        rubric_name: Packaged rubric (see ``judgekit.rubrics.list_rubrics()``).
        model: Judge model name (ignored when ``client`` is given).
        output_path: Tidy judgments table, ``.parquet`` or ``.csv`` (written atomically).
        client: A ready judge (e.g. from ``judgekit.local.default_judge_client``); when None, an
            :class:`OpenAIJudge` is built from ``model``, ``base_url``, ``provider`` and limits.
        base_url: Endpoint (default: the provider's, or ``OPENAI_BASE_URL``).
        provider: Provider preset (``openai``, ``vllm``, ``ollama``, ...).
        runs: Repeats of every request.
        variants: Prompt variants to run.
        batch_size: Items per request (default: the rubric's).
        store_path: SQLite response store (replies are reused; required for ``offline``).
        id_score_csv: Also write the seed-style ``ID,score`` file(s) plus status sidecars.
        limit: Judge only the first ``limit`` items.
        max_concurrency: Requests in flight.
        requests_per_minute: Client-side request budget.
        tokens_per_minute: Client-side token budget.
        max_reasks: Re-asks of failed rows per batch.
        seed: Seed sent where honoured.
        offline: Answer only from the store.
        mode: ``independent`` (a request per batch) or ``conversation`` (one chat per run).
        context_tokens: Conversation mode's context budget (a new chat starts beyond it).
        shuffle_seed: Shuffle item order per run with this seed (positions are recorded).
        encoding: Force the items file's encoding.
        sep: Force the items file's separator.
        sheet: Worksheet of an xlsx file.
        progress: Show the estimate and a progress bar.

    Returns:
        The judgments table that was written.

    Raises:
        judgekit.data.DataError: For a bad items file (names file, row and column).
        ValueError: For bad options; nothing is written then.
    """
    rubric = load_rubric(rubric_name)
    items = load_items(
        items_path, rubric, output_path, encoding=encoding, sep=sep, sheet=sheet, limit=limit
    )
    if client is None:
        if not model:
            raise ValueError("no judge model: pass a model name or a client")
        client = OpenAIJudge(
            model,
            base_url=base_url,
            provider=provider,
            max_concurrency=max_concurrency,
            requests_per_minute=requests_per_minute,
            tokens_per_minute=tokens_per_minute,
        )
    judgments = judge(
        items,
        rubric,
        client,
        runs=runs,
        variants=tuple(variants),
        batch_size=batch_size,
        store=store_path,
        max_reasks=max_reasks,
        seed=seed,
        progress=progress,
        offline=offline,
        mode=mode,
        context_tokens=context_tokens,
        shuffle_seed=shuffle_seed,
    )
    write_table(judgments, output_path)
    if id_score_csv is not None:
        for (variant, run), path in _id_score_paths(id_score_csv, variants, runs).items():
            write_id_score_csv(judgments, path, run=run, variant=variant)
    return judgments
