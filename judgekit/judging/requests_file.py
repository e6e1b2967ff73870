"""``judgekit judge --write-requests FILE`` and ``judgekit ingest``: a study run elsewhere.

``--write-requests`` walks the study exactly as ``judgekit judge`` would, but writes every
request the store cannot answer to an OpenAI batch-input JSONL file (``custom_id`` ending in
the store's request hash; each request recorded ``pending`` in the store) instead of sending
it. ``vllm run-batch`` reads that file on a GPU machine or cluster (docs/engine.md); its
results file goes back through ``judgekit ingest``; the same ``--write-requests`` command
then writes the re-asks the replies call for, and once nothing is left to ask it builds the
judgments table from the store, as an offline run does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TextIO

from judgekit.engine import ResponseStore
from judgekit.engine.batch_api import collect_pending
from judgekit.engine.batch_files import write_batch_jsonl
from judgekit.engine.ingest import IngestReport, ingest_results
from judgekit.engine.options import JudgeOptions
from judgekit.judging.batch import judge_options, store_of
from judgekit.study.errors import RunFailed
from judgekit.types import Item, JudgeClient, Rubric, UsageError

#: Refused lines printed one by one before the rest are only counted.
SHOWN_REFUSALS = 50


def write_requests(
    items: list[Item],
    rubric: Rubric,
    client: JudgeClient,
    judging: JudgeOptions,
    store_path: Path,
    path: Path,
    err: TextIO,
) -> int:
    """Write the requests the store cannot answer to ``path``; return how many (0: all done).

    Args:
        items: The checked items of the ``judgekit judge`` command.
        rubric: Its rubric.
        client: The planning client (renders requests; never called).
        judging: Its judging options.
        store_path: The study's (or ``--store``) response store.
        path: The batch-input JSONL file to write.
        err: Where the one-line summary and next steps go.

    The command was checked first (:func:`judgekit.judging.batch.check_batch_command`).
    """
    with ResponseStore(store_path) as store:
        pending = asyncio.run(
            collect_pending(items, rubric, client, store, **judge_options(judging))
        )
        if not pending:
            return 0
        for written in [store.submit_request(request.key) for request in pending]:
            written.result()  # grouped into few transactions; each one committed
    write_batch_jsonl(pending, path)
    print(
        f"wrote {len(pending)} requests to {path} (recorded as pending in {store_path}); run "
        f"them, e.g. `vllm run-batch -i {path} -o results.jsonl --model MODEL`, then "
        f"`judgekit ingest results.jsonl --store {store_path}` and run this command again "
        "(it writes the re-asks, or the table once every request is answered)",
        file=err,
    )
    return len(pending)


def ingest(results: Path, study: Path | None, store: Path | None, err: TextIO) -> IngestReport:
    """Record a results file in the store of ``study`` (or ``store``) and say what happened.

    Raises:
        UsageError: Without exactly one of ``study`` and ``store``, or a missing file.
        RunFailed: When lines were refused (each named in one line; the rest are recorded).
    """
    if (study is None) == (store is None):
        raise UsageError("say where the replies go: --study FOLDER or --store FILE (one of them)")
    if not results.is_file():
        raise UsageError(f"{results}: no such results file")
    target = store_of(study) if study is not None else store
    assert target is not None
    if not target.is_file():
        raise UsageError(f"--store {target}: no such store; write requests with --write-requests")
    with ResponseStore(target) as opened:
        report = ingest_results(opened, results)
    for line in report.refused[:SHOWN_REFUSALS]:
        print(f"refused: {line}", file=err)
    if len(report.refused) > SHOWN_REFUSALS:
        print(f"refused: ... and {len(report.refused) - SHOWN_REFUSALS} more lines", file=err)
    print(f"{results}: {report.describe()} in {target}", file=err)
    if report.refused:
        raise RunFailed(
            f"{len(report.refused)} lines of {results} refused (listed above); the others are "
            "recorded, so ingest the corrected or complete file again to add the rest"
        )
    return report
