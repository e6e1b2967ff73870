"""The ``judgekit`` command line: judge files, serve the local judge, simulate, demo, paper, bench.

Each command is a thin wrapper: the work lives in the package modules named in its help text.
Heavy imports happen inside the commands so that ``judgekit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Run and validate LLM-as-a-Judge studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def judge(
    items: Annotated[Path, typer.Argument(help="Items table (.csv, .tsv or .xlsx).")],
    rubric: Annotated[str, typer.Option(help="Rubric name (see `judgekit rubrics`).")],
    output: Annotated[Path, typer.Option(help="Tidy judgments table (.parquet or .csv).")],
    model: Annotated[
        str | None, typer.Option(help="Judge model (default: JUDGEKIT_JUDGE_MODEL).")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="Provider preset: openai, azure, vllm, ollama, ...")
    ] = None,
    runs: Annotated[int, typer.Option(min=1, help="Repeats of every request.")] = 1,
    variant: Annotated[
        list[str] | None, typer.Option(help="Prompt variant (repeatable; default base).")
    ] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Items per request.")] = None,
    store: Annotated[Path | None, typer.Option(help="SQLite response store.")] = None,
    id_score_csv: Annotated[
        Path | None, typer.Option(help="Also write the seed-style ID,score file(s).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Judge only the first N items.")] = None,
    max_concurrency: Annotated[int, typer.Option(min=1)] = 8,
    rpm: Annotated[float | None, typer.Option(help="Requests per minute budget.")] = None,
    tpm: Annotated[float | None, typer.Option(help="Tokens per minute budget.")] = None,
    max_reasks: Annotated[int, typer.Option(min=0, help="Re-asks of failed rows.")] = 2,
    seed: Annotated[int, typer.Option(help="Seed sent where the endpoint honours it.")] = 0,
    offline: Annotated[bool, typer.Option(help="Answer only from the store.")] = False,
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
) -> None:
    """Judge an items file with a rubric (judgekit.engine.cli_judge).

    With no OPENAI_API_KEY, OPENAI_BASE_URL, --base-url or --provider, the local model judges.
    """
    from judgekit.data import DataError
    from judgekit.engine.cli_judge import judge_command, load_items
    from judgekit.engine.interrupts import interrupt_explained
    from judgekit.local import default_judge_client
    from judgekit.rubrics import load_rubric

    try:  # fail on bad input before a judge is started or paid
        load_items(items, load_rubric(rubric), output, encoding=encoding, sep=sep, sheet=sheet)
    except (DataError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    with (
        default_judge_client(
            model,
            base_url=base_url,
            provider=provider,
            max_concurrency=max_concurrency,
            requests_per_minute=rpm,
            tokens_per_minute=tpm,
        ) as client,
        interrupt_explained(store),
    ):
        judge_command(
            items,
            rubric,
            None,
            output,
            client=client,
            runs=runs,
            variants=tuple(variant or ("base",)),
            batch_size=batch_size,
            store_path=store,
            id_score_csv=id_score_csv,
            limit=limit,
            max_reasks=max_reasks,
            seed=seed,
            offline=offline,
            mode=mode,
            context_tokens=context_tokens,
            shuffle_seed=shuffle_seed,
            encoding=encoding,
            sep=sep,
            sheet=sheet,
        )
    typer.echo(f"judgments written to {output}")


@app.command()
def rubrics() -> None:
    """List the packaged rubrics with their scale and output format."""
    from judgekit.rubrics import list_rubrics, load_rubric

    for name in list_rubrics():
        rubric = load_rubric(name)
        scale = ",".join(str(v) for v in rubric.scale.allowed)
        abstain = f" abstain {rubric.scale.abstain}" if rubric.scale.abstain else ""
        typer.echo(
            f"{name:18} scale {scale}{abstain}  {rubric.output_format}  "
            f"variants {', '.join(rubric.variants)}"
        )


@app.command("serve-local")
def serve_local(
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: free).")] = None,
    model_path: Annotated[Path | None, typer.Option(help="GGUF model file.")] = None,
    logprobs: Annotated[bool, typer.Option(help="Return logprobs (more memory).")] = False,
) -> None:
    """Serve the local SmolLM2 judge (a plumbing check, not a research-grade judge)."""
    from judgekit.local import serve_local_command

    serve_local_command(port, model_path=model_path, logprobs=logprobs)


@app.command()
def simulate(
    config_path: Annotated[
        Path | None, typer.Option("--config", help="Simulator YAML (oracle, faults).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: free).")] = None,
) -> None:
    """Serve the OpenAI-compatible simulator (for tests and benchmarks; it is not a judge)."""
    from judgekit.simulator.__main__ import serve

    serve(config_path, port)


@app.command()
def demo(
    out: Annotated[Path | None, typer.Option(help="Run folder (default runs/demo-<time>).")] = None,
) -> None:
    """Judge the illustrative demo set with the local model and run every analysis."""
    from judgekit.demo import run_demo

    run_demo(out)


@app.command()
def paper(
    params: Annotated[Path | None, typer.Option(help="Parameter set folder.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/paper-<time>).")
    ] = None,
) -> None:
    """Execute every notebook with its parameter file and regenerate every figure."""
    from judgekit import config
    from judgekit.paper import run_paper

    run_paper(params or config.PARAMS_DIR / "paper", out)


@app.command()
def bench(
    name: Annotated[
        list[str] | None, typer.Argument(help="Benchmarks to run (default all).")
    ] = None,
) -> None:
    """Run the benchmark scripts and rewrite docs/benchmarks.md from their output."""
    from judgekit.bench import run_benchmarks

    path = run_benchmarks(name or None)
    typer.echo(f"benchmark tables written to {path}")


def main() -> None:
    """Entry point of the ``judgekit`` console script and ``python -m judgekit``."""
    app()
