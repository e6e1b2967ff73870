"""The ``judgekit`` command line: judge, label, report, rubrics, serve-local, simulate, and more.

Each command is a thin wrapper around a function named in its help text. Heavy imports happen
inside the commands so that ``judgekit -h`` stays fast. Every mistake the user can fix ends the
command with one line on stderr (``error: ...``) and exit code 2; a run that did not do its job
ends with one line and exit code 1. There are no tracebacks for either.
"""

from __future__ import annotations

import errno
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from judgekit.cli import (
    import_command,  # noqa: F401
    judge_options,  # noqa: F401  (registers `judge` first, then `import`)
)
from judgekit.cli.app import ARGV, app, rubrics_app
from judgekit.types import UsageError

#: Exit codes: a mistake to fix before anything ran, and a run that did not do its job.
USAGE_EXIT, FAILED_EXIT = 2, 1


@app.command()
def status(
    study: Annotated[Path, typer.Argument(help="Study folder or response store file.")],
    live: Annotated[bool, typer.Option(help="Ask the endpoint for each batch's state.")] = True,
) -> None:
    """Show the store's replies and each Batch API batch's state and counts."""
    from judgekit.judging.batch import show_status

    show_status(study, sys.stdout, live=live)


@app.command()
def ingest(
    results: Annotated[Path, typer.Argument(help="Batch results JSONL (vllm run-batch output).")],
    study: Annotated[Path | None, typer.Option(help="Study folder whose store gets them.")] = None,
    store: Annotated[Path | None, typer.Option(help="Response store that gets them.")] = None,
) -> None:
    """Record a batch results file under the request hashes --write-requests wrote."""
    from judgekit.judging.requests_file import ingest as ingest_file

    ingest_file(results, study, store, sys.stderr)


@rubrics_app.callback()
def rubrics(context: typer.Context) -> None:
    """List the packaged rubrics: scale, output format, columns read and label column."""
    if context.invoked_subcommand is not None:
        return
    from judgekit.rubrics import list_rubrics, load_rubric

    for kind in ("direct", "pairwise"):
        typer.echo(f"{kind} (one answer scored):" if kind == "direct" else
                   f"{kind} (two answers compared, in both orders):")  # fmt: skip
        _list_rubrics([load_rubric(name) for name in list_rubrics(kind)])


def _list_rubrics(rubrics: list[Any]) -> None:
    for rubric in rubrics:
        name = rubric.name
        scale = ",".join(str(v) for v in rubric.scale.allowed)
        optional = f" (optional: {', '.join(rubric.optional_columns)})" * bool(
            rubric.optional_columns
        )
        typer.echo(
            f"{name:18} scale {scale}  {rubric.output_format}  reads "
            f"{', '.join(rubric.required_columns)}{optional}  labels {rubric.label_column}"
        )


@rubrics_app.command("show")
def rubrics_show(
    name: Annotated[str, typer.Argument(help="Rubric name, rubric folder or prompt file.")],
    variant: Annotated[str, typer.Option(help="Prompt variant.")] = "base",
    column_map: Annotated[
        list[str] | None, typer.Option(help="Your prompt's placeholder=Column (repeatable).")
    ] = None,
) -> None:
    """Print a rubric's columns and its full prompt rendered for a sample item."""
    from judgekit.study.own_prompt import load_any_rubric
    from judgekit.types import Item

    rubric = load_any_rubric(name, tuple(column_map or ()), None, option="rubric")
    if variant not in rubric.variants:
        raise UsageError(f"--variant {variant!r}: {name} has {', '.join(rubric.variants)}")
    typer.echo(f"{name}: {rubric.output_format}, scale {list(rubric.scale.allowed)}")
    typer.echo(f"required columns: {', '.join(rubric.required_columns)}")
    typer.echo(f"optional columns: {', '.join(rubric.optional_columns) or '-'}")
    typer.echo(f"human label column: {rubric.label_column}  variants: {', '.join(rubric.variants)}")
    added = rubric.additions(structured=False)
    if rubric.verbatim or added:
        typer.echo(f"judgekit adds: {'; '.join(added) or 'nothing (sent as written)'}")
    sample = Item("1", {column: f"<{column} of the item>" for column in rubric.input_columns})
    for message in rubric.render([sample], variant=variant):
        typer.echo(f"--- {message['role']} ---\n{message['content']}")


@app.command()
def report(
    study: Annotated[Path, typer.Argument(help="Study folder written by `judgekit judge`.")],
    html: Annotated[
        bool, typer.Option("--html", help="Also write report/report.html (no Jupyter needed).")
    ] = False,
    own_model: Annotated[
        list[str] | None,
        typer.Option(help="JUDGE=ANSWERING_MODEL: the judge's own family (self-preference)."),
    ] = None,
) -> None:
    """Run the analysis notebooks on a study folder; print where they and the figures are."""
    from judgekit.reporting.report import run_report

    run_report(study, own_models=own_model or ())
    if html:
        from judgekit.reporting.html import write_html_report

        typer.echo(f"html report: {write_html_report(study)}", err=True)


@app.command("export")
def export_(
    study: Annotated[Path, typer.Argument(help="Study folder to pack.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Bundle to write (.zip, or a new folder).")
    ],
    allow_failed: Annotated[
        bool,
        typer.Option(help="Export although a report step failed (marked; verify reports it)."),
    ] = False,
) -> None:
    """Pack a study (items, settings, prompts, store, labels, report) with a sha256 manifest."""
    from judgekit.sharing.export import export_study

    typer.echo(f"bundle written: {export_study(study, output, allow_failed=allow_failed)}")


@app.command()
def verify(
    bundle: Annotated[Path, typer.Argument(help="Bundle (.zip or folder) from `judgekit export`.")],
    html: Annotated[
        Path | None, typer.Option(help="Also write the recomputed report as HTML here.")
    ] = None,
) -> None:
    """Re-run a bundled study offline (0 calls) and compare every table with the bundle's."""
    from judgekit.sharing.verify import MANIFEST_PROVES, verify_bundle
    from judgekit.study.errors import RunFailed

    result = verify_bundle(bundle, sys.stderr, html)
    for line in result.checked:
        typer.echo(f"checked: {line}")
    for line in result.library_changes:
        typer.echo(f"library version differs: {line}")
    for line in result.problems:
        typer.echo(f"DIFFERS: {line}")
    typer.echo(f"note: {MANIFEST_PROVES}")
    if not result.ok:
        raise RunFailed(
            f"{bundle}: {len(result.problems)} difference(s); first: {result.problems[0]}"
        )
    typer.echo(f"{bundle}: verified, every check passed")


@app.command()
def compare(
    baseline: Annotated[Path, typer.Argument(help="Folder of baseline tables (*.csv).")],
    run: Annotated[Path, typer.Argument(help="Run folder holding the fresh tables.")],
    rtol: Annotated[float, typer.Option(help="Relative tolerance for numbers.")] = 1e-6,
    atol: Annotated[float, typer.Option(help="Absolute tolerance for numbers.")] = 1e-9,
) -> None:
    """Compare a run's tables with a baseline's (numbers within a tolerance, clocks skipped)."""
    from judgekit.data.compare import Tolerance, compare_folders, differing_tables
    from judgekit.study.errors import RunFailed

    for folder in (baseline, run):
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
    count, problems = compare_folders(baseline, run, Tolerance(rtol=rtol, atol=atol))
    if count == 0:
        raise UsageError(f"no *.csv under {baseline}")
    for problem in problems:
        typer.echo(problem)
    typer.echo(f"{count - len(differing_tables(problems))} of {count} tables match {baseline}")
    if problems:
        raise RunFailed(f"{len(differing_tables(problems))} table(s) differ from {baseline}")


@app.command()
def label(
    study: Annotated[Path, typer.Argument(help="Study folder written by `judgekit judge`.")],
    labeller: Annotated[str, typer.Option(help="Your name (each labeller's labels apart).")],
    n: Annotated[
        int | None, typer.Option(help="Items to label (first call; default: from the planner).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample and its order.")] = 0,
    show_model: Annotated[
        bool, typer.Option(help="Show which model wrote each answer (unblinds the labeller).")
    ] = False,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (default: free).")] = 0,
    browser: Annotated[bool, typer.Option(help="Open the page in the browser.")] = True,
    rubric: Annotated[
        str, typer.Option(help="Rubric to label (a study of direct and pairwise rubrics).")
    ] = "",
) -> None:
    """Label the study's items blind on a page of its own; the same command resumes."""
    from judgekit.study.labelling import LabelOptions, run_label

    run_label(study, LabelOptions(labeller, n, seed, show_model, port, browser, rubric))


@app.command("serve-local")
def serve_local(
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: free).")] = None,
    model_path: Annotated[Path | None, typer.Option(help="GGUF model file.")] = None,
    logprobs: Annotated[bool, typer.Option(help="Return logprobs (more memory).")] = False,
) -> None:
    """Serve the local SmolLM2 judge (a plumbing check, not a research-grade judge)."""
    from judgekit.judging.clients import serve_local_command
    from judgekit.local.server import LocalServerConfig

    serve_local_command(LocalServerConfig(port=port, model_path=model_path, logprobs=logprobs))


@app.command()
def simulate(
    config_path: Annotated[
        Path | None, typer.Option("--config", help="Simulator YAML (oracle, faults).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: free).")] = None,
    run_batch: Annotated[
        Path | None, typer.Option(help="Answer this batch JSONL offline instead of serving.")
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Results file of --run-batch.")] = None,
    position_bias: Annotated[
        float | None, typer.Option(help="Pairwise: logit for the answer shown first.")
    ] = None,
    length_bias: Annotated[
        float | None, typer.Option(help="Pairwise: logit per tanh(length difference / 100).")
    ] = None,
    self_preference: Annotated[
        float | None, typer.Option(help="Pairwise: logit for an answer holding --self-marker.")
    ] = None,
    self_marker: Annotated[
        str | None, typer.Option(help="Pairwise: text marking an answer as the judge's own.")
    ] = None,
) -> None:
    """Serve the OpenAI-compatible simulator (for tests and benchmarks; it is not a judge)."""
    from judgekit.simulator.__main__ import run_batch as answer_file
    from judgekit.simulator.__main__ import serve

    knobs = {
        name: value
        for name, value in (
            ("position_bias", position_bias), ("length_bias", length_bias),
            ("self_preference", self_preference), ("self_marker", self_marker),
        )
        if value is not None
    }  # fmt: skip
    if run_batch is None:
        serve(config_path, port, knobs=knobs)
        return
    if output is None:
        raise UsageError("--run-batch needs --output RESULTS.jsonl")
    answered, failed = answer_file(run_batch, output, config_path, knobs=knobs)
    typer.echo(f"{answered} lines answered, {failed} failed: {output}")


@app.command()
def demo(
    out: Annotated[Path | None, typer.Option(help="Run folder (default runs/demo-<time>).")] = None,
) -> None:
    """Judge the illustrative demo set with the local model and run every analysis."""
    from judgekit.cli.demo import run_demo

    run_demo(out)


@app.command()
def notebooks(
    folder: Annotated[Path, typer.Argument(help="Folder for the copies (created).")],
) -> None:
    """Copy the parameterised analysis notebooks into FOLDER, to run in JupyterLab."""
    from judgekit.cli.checkout import copy_notebooks

    copies = copy_notebooks(folder)
    typer.echo(
        f"{len(copies)} notebooks copied to {folder}; set the parameters in each one's first "
        f"cell (e.g. judgments_path = your study folder), then `jupyter lab {folder}` "
        "(pip install 'judgekit[lab]')"
    )


@app.command()
def paper(
    params: Annotated[Path | None, typer.Option(help="Parameter set folder.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/paper-<time>).")
    ] = None,
    bundle: Annotated[
        Path | None, typer.Option(help="Also write the run as a bundle `verify` re-runs.")
    ] = None,
) -> None:
    """Execute every notebook with its parameter file and regenerate every figure."""
    from judgekit import config
    from judgekit.reporting.notebooks import run_paper

    params = params or config.PARAMS_DIR / "paper"
    run_dir = run_paper(params, out)
    if bundle is not None:
        from judgekit.sharing.analysis_bundle import export_analysis

        typer.echo(f"bundle written: {export_analysis(params, run_dir, bundle)}", err=True)


@app.command()
def bench(
    name: Annotated[
        list[str] | None, typer.Argument(help="Benchmarks to run (default all).")
    ] = None,
) -> None:
    """Run the benchmark scripts and rewrite docs/benchmarks.md from their output."""
    from judgekit import config
    from judgekit.cli.bench import run_benchmarks
    from judgekit.cli.checkout import require_checkout

    require_checkout(config.ROOT / "benchmarks", "bench")
    path = run_benchmarks(name or None)
    typer.echo(f"benchmark tables written to {path}")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judgekit`` console script and ``python -m judgekit``.

    Returns:
        The exit code (0 done, 1 a run that did not do its job, 2 a mistake to fix).
    """
    from judgekit.engine import (
        ContextBudgetError,
        JudgeCallError,
        MissingAPIKeyError,
        OfflineStoreMissError,
        StoreWriteError,
    )
    from judgekit.local import LocalJudgeUnavailable, LocalServerError
    from judgekit.study.errors import RunFailed

    ARGV[:] = sys.argv[1:] if argv is None else argv
    try:
        code = app(args=argv, standalone_mode=False)
    except typer.TyperException as error:  # bad option value, unknown option, missing argument
        if type(error).__name__ == "NoArgsIsHelpError":  # bare `judgekit`: the help is the answer
            print(error.format_message())
            return 0
        context = getattr(error, "ctx", None)
        hint = f" (see `{context.command_path} -h`)" if context is not None else ""
        print(f"error: {' '.join(error.format_message().split())}{hint}", file=sys.stderr)
        return USAGE_EXIT
    except typer.Exit as done:
        return done.exit_code
    except typer.Abort:
        print("error: interrupted", file=sys.stderr)
        return 130
    except (UsageError, MissingAPIKeyError, ContextBudgetError, sqlite3.DatabaseError) as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return USAGE_EXIT
    except OSError as error:  # a read-only place (report/, labels.csv, an output folder)
        if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        where = error.filename or "a file"
        print(
            f"error: cannot write {where} ({error.strerror}); run it where you may write "
            "(copy the study folder to a writable place) or fix the permissions",
            file=sys.stderr,
        )
        return USAGE_EXIT
    except (
        RunFailed,
        JudgeCallError,  # a failure that ends the whole run (bad key, unknown model)
        OfflineStoreMissError,
        StoreWriteError,  # a full disk under the store: what was stored is kept
        LocalJudgeUnavailable,
        LocalServerError,
    ) as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return FAILED_EXIT
    return code if isinstance(code, int) else 0
