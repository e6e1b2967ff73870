"""``judgekit verify BUNDLE``: re-run a study offline and check it gives what it says.

Every file of the bundle is data (docs/security.md). The checks, in order, each naming what
differs:

1. *Manifest.* Every file has the sha256 the manifest records; none is missing or added.
2. *Stored replies and items.* Every reply in the response store and every row of
   ``items.csv`` has the digest recorded at export (so a changed reply or item is named even
   when the manifest was rewritten to match).
3. *Provenance.* ``prompts/*.json`` and the judges of ``study.json`` are checked against the
   store, ``environment.json`` against the bundled notebooks' own records
   (:mod:`judgekit.sharing.provenance`).
4. *Judgments.* Each judge's judgments are rebuilt from the store alone through the engine
   (:func:`judgekit.study.record.offline_replay`: 0 calls, none possible) and compared with
   the bundled table. A request that is not in the store is named with the first line where it
   differs from the closest stored request: the prompt or an item changed since judging.
5. *Report.* A study's report tables are computed again in this process by the library's
   step functions (:mod:`judgekit.reporting.compute`): no notebook and no kernel runs, and
   nothing of the bundle is executed. An analysis bundle's notebook runs
   (:mod:`judgekit.sharing.analysis_bundle`) are executed again with this checkout's
   notebooks, never the bundle's. Every table is compared with the bundled one
   (:mod:`judgekit.data.compare`: numbers within a tolerance, columns that measure the machine
   or the clock skipped). A step that failed or did not run, then or now, is a difference.
6. *Libraries.* Library versions that differ from the exporting machine's are listed, and
   given as the likely cause when a number differs.

The bundle is verified in a scratch copy; it is never written to. The outcome is also written
as ``verification.json`` beside the scratch report and returned.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from judgekit.data.atomic import atomic_write_text
from judgekit.data.compare import compare_folders, differing_tables
from judgekit.reporting.html import (
    REPORT_STEPS,
    VERIFICATION,
    read_steps,
    step_outcomes,
    write_html_report,
)
from judgekit.sharing.export import (
    ENVIRONMENT,
    item_digests,
    library_versions,
    reply_digests,
    sha256_file,
    stored_calls,
    study_files,
)
from judgekit.sharing.provenance import (
    check_provenance,
    environment_problems,
)
from judgekit.sharing.replay import check_judgments, judging_records
from judgekit.sharing.safety import (
    BUNDLE_FORMAT,
    MANIFEST,
    check_page_target,
    check_zip_size,
    terminated_as_exit,
)
from judgekit.study.errors import RunFailed
from judgekit.study.folder import StudyFolder
from judgekit.types import UsageError

#: What a passing verification does and does not prove (printed by ``judgekit verify``).
MANIFEST_PROVES = (
    "the manifest's checksums catch accidents (a changed, missing or added file), not "
    "forgery: anyone can rewrite a file and its checksum, so it is not a signature; the "
    "judgments and tables were recomputed here from the stored replies by this checkout's "
    "judgekit, running none of the bundle's code (docs/security.md)"
)
#: Where the rebuilt judgments and report of a verification go inside its scratch copy.
REBUILT = "rebuilt"


@dataclass
class Verification:
    """What a verification found: one line per problem, and what was checked."""

    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    library_changes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether nothing differs."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready record (written as ``verification.json``)."""
        return {
            "ok": self.ok,
            "problems": self.problems,
            "checked": self.checked,
            "library_changes": self.library_changes,
        }


def unpack(source: Path, scratch: Path) -> Path:
    """Copy a bundle (a ``.zip`` or a folder) into ``scratch``; return its root there.

    Raises:
        UsageError: If it is neither, an entry would land outside the folder, a link leads out
            of it, or a zip declares far more than it holds (before extraction).
    """
    root = scratch / "bundle"
    if source.is_dir():
        list(study_files(source))  # a link out of the bundle is refused before any copy
        shutil.copytree(source, root, symlinks=True)  # links stay links, never read through
        return root
    if not zipfile.is_zipfile(source):
        raise UsageError(f"{source}: not a bundle (a .zip or a folder from `judgekit export`)")
    with zipfile.ZipFile(source) as archive:
        check_zip_size(source, archive)
        for name in archive.namelist():
            target = (root / name).resolve()
            if root.resolve() not in target.parents:
                raise UsageError(f"{source}: entry {name!r} points outside the bundle; refused")
        archive.extractall(root)
    return root


def read_manifest(root: Path) -> dict[str, Any]:
    """The bundle's manifest (checked to be one).

    Raises:
        UsageError: If there is none or it is not a judgekit bundle's.
    """
    path = root / MANIFEST
    if not path.is_file():
        raise UsageError(f"{MANIFEST} is missing: this is not a bundle from `judgekit export`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UsageError(f"{MANIFEST}: not JSON ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise UsageError(f"{MANIFEST}: not a judgekit study bundle's manifest")
    return manifest


def check_files(root: Path, manifest: dict[str, Any]) -> list[str]:
    """Files whose sha256 differs from the manifest's, missing ones and added ones."""
    recorded: dict[str, dict[str, Any]] = manifest.get("files", {})
    present = {p.as_posix() for p in study_files(root)} - {MANIFEST}
    problems = [f"{name}: missing from the bundle" for name in sorted(set(recorded) - present)]
    problems += [f"{name}: not in the manifest" for name in sorted(present - set(recorded))]
    for name in sorted(set(recorded) & present):
        if sha256_file(root / name) != recorded[name]["sha256"]:
            problems.append(f"{name}: changed since export (sha256 differs from the manifest)")
    return problems


def check_replies_and_items(root: Path, manifest: dict[str, Any]) -> list[str]:
    """Stored replies and item rows whose digest differs from the one recorded at export."""
    folder = StudyFolder(root)
    calls = stored_calls(folder.store)
    now, then = reply_digests(calls), manifest.get("replies", {})
    where = calls.set_index("request_hash")
    problems = []
    for request_hash in sorted(set(then) | set(now)):
        if now.get(request_hash) == then.get(request_hash):
            continue
        if request_hash not in now:
            problems.append(f"responses.sqlite: the reply to request {request_hash[:12]} is gone")
            continue
        row = where.loc[request_hash]
        what = f"{row['rubric']}/{row['variant']}/{row['model']} run {row['run']}"
        change = "was added" if request_hash not in then else "changed"
        problems.append(
            f"responses.sqlite: the stored reply to request {request_hash[:12]} ({what}, "
            f"attempt {row['attempt']}) {change} since export"
        )
    items_then = manifest.get("items", {})
    items_now = item_digests(folder.items) if folder.items.is_file() else {}
    for item_id in sorted(set(items_then) | set(items_now)):
        if items_now.get(item_id) != items_then.get(item_id):
            state = "is gone" if item_id not in items_now else "changed since export"
            problems.append(f"items.csv: item {item_id} {state}")
    return problems


def check_report(
    root: Path, err: TextIO, allow_failed: Sequence[str] = (), *, figures: bool = False
) -> list[str]:
    """Compute the report's tables again on the bundle; compare every table with its own.

    A study's tables are computed in this process by the library's step functions
    (:func:`judgekit.reporting.compute.compute_report`): no notebook runs, the bundle's
    ``.ipynb`` files are moved aside unread (they are data, compared by hash), and no code
    that came in the bundle runs. An analysis bundle (no judge) still has its notebook runs
    executed with the checkout's notebooks
    (:func:`~judgekit.sharing.analysis_bundle.rerun_analysis`): its steps reproduce the
    riddles study, which step 06 computes in its notebook only. Every step that failed or did
    not run, in the bundled report or now, is a problem naming the step (as is one the bundle
    skipped that applies now), so a bundle whose analyses failed never verifies. ``figures``
    draws the figures for ``--html``.
    """
    from judgekit.reporting.compute import compute_report
    from judgekit.sharing.analysis_bundle import rerun_analysis

    folder = StudyFolder(root)
    report = folder.report
    if not (report / "tables").is_dir() and not (report / REPORT_STEPS).is_file():
        return []
    kept = root / REBUILT / "bundled-report"
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(report), str(kept))
    study = folder.manifest.is_file()
    marked = " (exported with --allow-failed)" if allow_failed else ""
    then = {o.notebook: o for o in step_outcomes(kept)} if study else {}
    problems = [
        f"report: {o.line()} when the study was reported{marked}"
        for o in then.values()
        if o.state in ("failed", "not run")
    ]
    failed: list[str] = []
    if study:
        now = compute_report(root, err, figures=figures)
    else:  # an analysis bundle: the checkout's notebooks (06 has no function; docstring)
        try:
            rerun_analysis(root, read_steps(kept), err)
        except RunFailed as error:  # the tables that were written are still compared
            failed = [f"report: {error}"]
        now = step_outcomes(report)
    again = "on recomputation" if study else "on re-execution"
    problems += [f"report: {o.line()} {again}" for o in now if o.state != "skipped"
                 and o.state != "ran"] or failed  # fmt: skip
    problems += [
        f"report: {o.notebook} applies to this study but the bundle skipped it "
        f"({then[o.notebook].why})"
        for o in now
        if o.state == "ran" and o.notebook in then and then[o.notebook].state == "skipped"
    ]
    if (kept / "tables").is_dir():
        _, differences = compare_folders(kept / "tables", report / "tables")
        problems += [f"report/tables/{line}" for line in differences]
    return problems


def library_changes(root: Path) -> list[str]:
    """``name: exported-version -> this machine's`` for each library whose version differs."""
    path = root / ENVIRONMENT
    if not path.is_file():
        return []
    then, now = json.loads(path.read_text(encoding="utf-8")), library_versions()
    return [
        f"{name} {then[name]} -> {now.get(name, '?')}"
        for name in then
        if then[name] != now.get(name)
    ]


def verify_bundle(source: str | Path, err: TextIO, html: Path | None = None) -> Verification:
    """Verify a bundle (see the module docstring); print progress on ``err``.

    Args:
        source: A bundle: a ``.zip`` or a folder written by ``judgekit export``.
        err: Where progress goes.
        html: Also write the recomputed report, with this verification's outcome, here.

    Raises:
        UsageError: If ``source`` is not a bundle.
    """
    path = Path(source)
    if not path.exists():
        raise UsageError(f"{source}: no such bundle (a .zip or a folder from `judgekit export`)")
    if html is not None:
        check_page_target(path, Path(html))
    result = Verification()
    with terminated_as_exit(), tempfile.TemporaryDirectory(prefix="judgekit-verify-") as scratch:
        root = unpack(path, Path(scratch))
        manifest = read_manifest(root)
        result.problems += check_files(root, manifest)
        result.checked.append(f"{len(manifest.get('files', {}))} files against the manifest")
        if StudyFolder(root).store.is_file():
            result.problems += check_replies_and_items(root, manifest)
            result.checked.append(f"{len(manifest.get('replies', {}))} stored replies")
            records = judging_records(root)
            result.problems += check_provenance(root, records)
            result.checked.append("prompts/*.json and study.json's judges against the store")
            result.problems += check_judgments(root, records)
            result.checked.append(f"judgments of {len(records)} judge(s) rebuilt offline")
        result.problems += environment_problems(StudyFolder(root).report, root)
        how = ("recomputed in this process" if StudyFolder(root).manifest.is_file() else
               "re-executed")  # an analysis bundle: the checkout's notebooks  # fmt: skip
        print(f"report tables: {how} ...", file=err, flush=True)
        allowed = manifest.get("allow_failed") or ()
        table_problems = check_report(root, err, allowed, figures=html is not None)
        result.problems += table_problems
        result.checked.append(f"report tables {how} and compared")
        result.library_changes = library_changes(root)
        if table_problems and result.library_changes:
            tables = ", ".join(differing_tables(table_problems))
            result.problems.append(
                f"numbers differ in {tables} and these libraries differ from the exporting "
                f"machine's: {'; '.join(result.library_changes)}"
            )
        if html is not None:
            report = StudyFolder(root).report
            report.mkdir(parents=True, exist_ok=True)
            atomic_write_text(report / VERIFICATION, json.dumps(result.as_dict(), indent=1) + "\n")
            try:
                write_html_report(root, Path(html))
            except PermissionError as error:
                raise UsageError(f"--html {html}: cannot write {error.filename}") from None
    return result
