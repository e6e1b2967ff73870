"""The ``judgekit`` typer application every command module registers its commands on.

Kept apart from the commands so that :mod:`judgekit.cli.main` and
:mod:`judgekit.cli.judge_options` both add to the one application.
"""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from judgekit import __version__

app = typer.Typer(
    help="Run and validate LLM-as-a-Judge studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
rubrics_app = typer.Typer(help="The packaged rubrics.", invoke_without_command=True)
app.add_typer(rubrics_app, name="rubrics")

#: The arguments of the command being run (set by :func:`judgekit.cli.main.main`).
ARGV: list[str] = []


def _version(value: bool) -> None:
    if value:
        typer.echo(f"judgekit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print version.")
    ] = False,
) -> None:
    """Run and validate LLM-as-a-Judge studies."""


def invoked() -> str:
    """The command line being run, as ``study.json`` records it (keys never appear on it)."""
    return shlex.join(["judgekit", *ARGV])
