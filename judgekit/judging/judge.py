"""``judgekit judge`` as plain functions: check everything, then (dry-run or) judge and summarise.

Order matters: every input, output path, option and endpoint setting is checked before a
server starts or a call is paid (:mod:`judgekit.judging.command`); the judging and the
outputs are :mod:`judgekit.judging.run`'s; the run ends with a summary table and an exit
code that says whether it did its job (:func:`finish`).
"""

from __future__ import annotations

import functools
import sqlite3
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TextIO

from judgekit.engine import MODES, ResponseStore
from judgekit.engine.interrupts import interrupt_explained
from judgekit.engine.options import check_items
from judgekit.judging.batch import (
    batch_client,
    check_batch_command,
    run_batch_api,
)
from judgekit.judging.clients import planning_client
from judgekit.judging.command import JudgeCommand, Prepared, describe_inputs, prepare
from judgekit.judging.dry_run import dry_run, replay_refusal
from judgekit.judging.panel import probe_panel
from judgekit.judging.panel_run import JudgeOutcome, panel_clients
from judgekit.judging.panel_summary import summarise_judge
from judgekit.judging.requests_file import write_requests
from judgekit.judging.run import run
from judgekit.study.errors import RunFailed
from judgekit.study.own_prompt import prompt_notice
from judgekit.types import UsageError


def check_options(prepared: Prepared, clients: Mapping[str, Any]) -> None:
    """Check the judging options against the rubric and every judge, without a call.

    The engine's own checks, once each: the items against the rubric, the options against each
    judge's client (``clients``, by label); the store is opened (read-only) to see that it can
    be. Nothing is rendered.

    Raises:
        UsageError: For inconsistent options, or a store file that cannot be opened.
    """
    check_items(prepared.items, prepared.rubric)
    for spec in prepared.judges:
        try:
            prepared.options(spec).check(prepared.rubric, clients[spec.label], MODES)
        except UsageError as error:
            if len(prepared.judges) == 1:
                raise
            raise UsageError(f"judge {spec.label}: {error}") from None
    if prepared.store.is_file():
        try:
            with ResponseStore.open_readonly(prepared.store):
                pass
        except sqlite3.DatabaseError as error:
            raise UsageError(
                f"--store {prepared.store}: cannot open it ({error}); move it away or pass another"
            ) from None


def finish(prepared: Prepared, outcomes: Mapping[str, JudgeOutcome], err: TextIO) -> None:
    """Print each judge's summary; fail the run when a judge failed, or rows did.

    Raises:
        RunFailed: One line saying which judge or how many rows failed, and the first reason.
    """
    problems = []
    for spec in prepared.judges:
        outcome = outcomes[spec.label]
        problems += summarise_judge(spec, outcome, prepared.command.max_unscored, err)
    print(f"judgments: {prepared.output}", file=err)
    failed = [o for o in outcomes.values() if o.failure]
    if len(outcomes) == 1 and failed and failed[0].error is not None:
        raise failed[0].error  # one judge: its own error, as without a panel
    if failed:
        kept = "; the other judges' judgments are written" if len(failed) < len(outcomes) else ""
        raise RunFailed(
            f"{len(failed)} of {len(outcomes)} judges failed (first: {failed[0].label}: "
            f"{failed[0].failure[:200]}){kept}"
        )
    if problems:
        raise RunFailed(
            problems[0]
            if len(problems) == 1
            else f"{problems[0]} (and {len(problems) - 1} more judges)"
        )


def execute(command: JudgeCommand, out: TextIO | None = None, err: TextIO | None = None) -> None:
    """Run ``judgekit judge``: check, (dry-run or) judge, write, summarise.

    Raises:
        UsageError: A mistake found before any call (one line).
        RunFailed: The run ended without doing its job (one line; outputs are written).
    """
    out, err = out or sys.stdout, err or sys.stderr  # the streams of the moment, not of import
    prepared = prepare(command)
    # each judge's client, built once: a remote one is the client the run uses; a local one
    # renders requests until its server starts (panel_clients)
    clients = {spec.label: planning_client(spec.endpoint) for spec in prepared.judges}
    if not command.dry_run:  # a dry run's previews are its checks (once each)
        check_options(prepared, clients)
    for spec in prepared.judges if command.batch_api or command.write_requests else ():
        check_batch_command(
            batch_api=command.batch_api, write_requests=command.write_requests,
            judging=command.judging, endpoint=spec.endpoint, items=command.items,
            temporary_store=prepared.temporary_store,
        )  # fmt: skip
    first = prepared.judges[0]
    if not command.dry_run:
        print(prompt_notice(prepared.rubric, clients[first.label], prepared.options()), file=err)
    describe_inputs(prepared, err)
    if command.dry_run:
        dry_run(prepared, out, err)
        return
    if command.write_requests is not None:
        path = command.write_requests
        client = clients[first.label]
        if write_requests(
            prepared.items, prepared.rubric, client, command.judging, prepared.store, path, err
        ):
            return
        print("every request is answered in the store: building the table from it", file=err)
        command = replace(command, judging=command.judging.updated(offline=True))
        prepared = replace(prepared, command=command)
    if command.batch_api:
        batch_clients = {label: batch_client(client) for label, client in clients.items()}
        probe_panel(prepared.judges)
        in_batches = functools.partial(run_batch_api, store=prepared.store, err=err)
        finish(prepared, run(prepared, batch_clients, in_batches), err)
        return
    if command.judging.offline:  # replies come from the store: no server, no connection
        finish(prepared, run(prepared, clients), err)
        return
    try:
        probe_panel(prepared.judges)
    except UsageError as error:  # a full replay needs no endpoint: say --offline
        raise replay_refusal(prepared, error) from None
    with (
        panel_clients(prepared.judges, clients, log_dir=command.study, notice_stream=err) as ready,
        interrupt_explained(prepared.store),
    ):
        outcomes = run(prepared, ready)
    finish(prepared, outcomes, err)
