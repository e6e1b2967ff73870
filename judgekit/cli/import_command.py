"""``judgekit import``: the command over :func:`judgekit.study.importing.run_import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgekit.cli.app import app, invoked
from judgekit.study.importing import ImportRequest, run_import


@app.command("import")
def import_command(
    files: Annotated[list[Path], typer.Argument(help="The files to import (not changed).")],
    adapter: Annotated[
        str,
        typer.Option(
            "--from",
            help="Adapter: long, fastchat-single, fastchat-pair, alpaca_eval, inspect_ai, "
            "promptfoo, llmbar, pandalm.",
        ),
    ],
    study: Annotated[Path, typer.Option(help="Study folder to write (new, or a judgekit study).")],
    column: Annotated[
        list[str] | None,
        typer.Option(
            help="ROLE=COLUMN of a long table (repeatable): item, judge, score, reply, run, "
            "sample, probability, question, answer, answer_model."
        ),
    ] = None,
    output_format: Annotated[
        str, typer.Option("--format", help="Read the reply column with this output format.")
    ] = "",
    scale: Annotated[
        str, typer.Option(help="MIN-MAX scale of the scores (needed with --format), e.g. 1-10.")
    ] = "",
    score_marker: Annotated[
        str,
        typer.Option(help="How the prompt asked for the score (score_line), e.g. 'Rating: [[N]]'."),
    ] = "",
    rubric: Annotated[
        str,
        typer.Option(help="Read replies with this rubric or prompt file (files under its name)."),
    ] = "",
    name: Annotated[str, typer.Option(help="Rubric name to file the judgments under.")] = "",
    variant: Annotated[str, typer.Option(help="Prompt variant to file them under.")] = "base",
    judge: Annotated[str, typer.Option(help="Judge name, for sources that do not name one.")] = "",
    labels: Annotated[
        Path | None,
        typer.Option(help="Human labels: long (item, rater, score) or one column per rater."),
    ] = None,
    label_column: Annotated[
        list[str] | None, typer.Option(help="ROLE=COLUMN of the labels table: item, rater, score.")
    ] = None,
    assertion: Annotated[
        str,
        typer.Option(
            help="promptfoo: the assertion type to import (default: every model-graded one)."
        ),
    ] = "",
    verdicts: Annotated[
        str,
        typer.Option(
            help="llmbar: read the raw completions (reader) or take the authors' winners (stored)."
        ),
    ] = "",
    rating_ties: Annotated[
        str,
        typer.Option(
            help="llmbar Rating: equal ratings are a tie, or second_shown (the authors' rule)."
        ),
    ] = "",
) -> None:
    """Import judgments made elsewhere (other tools, your own tables) into a study folder."""
    request = ImportRequest(
        adapter, tuple(files), study, tuple(column or ()), output_format, scale, score_marker,
        rubric, name, variant, judge, labels, tuple(label_column or ()),
        {"assertion": assertion, "verdicts": verdicts, "rating_ties": rating_ties},
    )  # fmt: skip
    run_import(request, command_line=invoked())
