"""``judgekit export STUDY -o study.zip``: a study another researcher can verify offline.

A bundle is the study folder (see :mod:`judgekit.study.folder`) plus three files of its own:

``prompts/<rubric>--<variant>--<model>.json``
    the first request of every (rubric, variant, judge) exactly as it was sent (messages and
    options, from the response store); every other request is in ``responses.sqlite``.
``environment.json``
    judgekit's version, Python's and those of the libraries that compute the numbers.
``manifest.json``
    the bundle format, and the sha256 and size of every other file; the sha256 of every stored
    reply by request hash, and of every item's row, so :mod:`judgekit.sharing.verify` can
    name a changed reply or item and not only a changed file.

The response store goes in as a consistent one-file SQLite copy
(:meth:`~judgekit.engine.store.ResponseStore.export`, the WAL folded in). Keys never enter a
bundle: every file is searched for the value of each secret-named environment variable before
the bundle is written, and a hit stops the export naming the file and the variable. A zip's
entries are written in sorted order with a fixed timestamp, so exporting the same study twice
gives the same bytes. A URL carrying a password is a secret too.

A study whose report has a step that failed or did not run is not exported (one line naming
the step) unless ``--allow-failed``, which the manifest records for ``verify`` to report. The
output never replaces anything but an earlier bundle, and a link never leads out of the study
(:mod:`judgekit.sharing.safety`; docs/security.md).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit import __version__
from judgekit.data.atomic import atomic_write, atomic_write_text
from judgekit.engine.store import ResponseStore
from judgekit.reporting.html import step_outcomes
from judgekit.reporting.notebooks import RECORDED_PACKAGES, SECRET_NAME
from judgekit.sharing.safety import (
    BUNDLE_FORMAT,
    MANIFEST,
    inside,
    is_bundle_zip,
    terminated_as_exit,
    writable,
)
from judgekit.study.folder import StudyFolder
from judgekit.types import UsageError

BUNDLE_VERSION = 1
ENVIRONMENT = "environment.json"
PROMPTS = "prompts"
#: Libraries whose versions can change a number in the report (beyond paper.RECORDED_PACKAGES).
NUMERIC_PACKAGES = (*RECORDED_PACKAGES, "pyarrow", "seaborn", "ppi-python", "crowd-kit")
#: Study files that are never bundled: locks, SQLite's side files, half-written notebooks.
SKIPPED_SUFFIXES = (".lock", "-wal", "-shm", ".running.ipynb")
#: A zip entry's timestamp (zip's earliest): the bundle's bytes depend on its content only.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    """The hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def library_versions() -> dict[str, str]:
    """Python's version and each numeric library's (``not installed`` where absent)."""
    versions = {"python": sys.version.split()[0], "judgekit": __version__}
    for name in NUMERIC_PACKAGES:
        if name == "judgekit":
            continue
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def study_files(root: Path) -> Iterator[Path]:
    """The study's files to bundle (relative paths), in sorted order.

    Hidden files and folders are left out; a link is followed only when it stays in ``root``
    (a linked folder is not entered: its files are bundled from where they are).

    Raises:
        UsageError: If a file or folder is a link to outside ``root``.
    """
    base = root.resolve()
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        for name in list(dirs):
            if name.startswith(".") or (
                (here / name).is_symlink() and inside(here / name, base, here / name)
            ):
                dirs.remove(name)
        for name in files:
            path = here / name
            if name.startswith(".") or name.endswith(SKIPPED_SUFFIXES):
                continue
            if path.is_symlink():
                inside(path, base, path)
            if path.is_file():
                found.append(path.relative_to(root))
    yield from sorted(found)


def stored_calls(store: Path) -> pd.DataFrame:
    """Every stored request of a store (full messages), in request order."""
    from judgekit.engine.store_rows import COLUMNS

    with ResponseStore.open_readonly(store) as opened:  # an imported study's store is empty
        return pd.DataFrame(list(opened.rows()), columns=list(COLUMNS))


def reply_digests(calls: pd.DataFrame) -> dict[str, str]:
    """sha256 of every stored reply text (``""`` for a request with no reply), by hash."""
    return {
        str(request_hash): sha256_text("" if text is None else str(text))
        for request_hash, text in zip(
            calls["request_hash"], calls["reply_text"].astype(object), strict=True
        )
    }


def item_digests(items_csv: Path) -> dict[str, str]:
    """sha256 of every item's row of ``items.csv`` (its cells joined), by item ID."""
    from judgekit.data import read_frame

    frame = read_frame(items_csv)
    if "ID" not in frame.columns:
        return {}
    cells = frame.astype(str).where(frame.notna(), "")
    return {
        str(item_id): sha256_text("\x1f".join(f"{c}={row[c]}" for c in cells.columns))
        for item_id, (_, row) in zip(frame["ID"].astype(str), cells.iterrows(), strict=True)
    }


def write_prompts(calls: pd.DataFrame, folder: Path) -> list[Path]:
    """The first stored request of each (rubric, variant, model), exactly as sent."""
    written = []
    firsts = calls[calls["attempt"].astype(int) == 1].drop_duplicates(
        ["rubric", "variant", "model"]
    )
    for row in firsts.itertuples(index=False):
        name = "--".join(_safe(str(part)) for part in (row.rubric, row.variant, row.model))
        request = {
            "rubric": row.rubric,
            "variant": row.variant,
            "model": row.model,
            "request_hash": row.request_hash,
            "messages": json.loads(str(row.messages)),
            "options": json.loads(str(row.options)),
        }
        path = folder / f"{name}.json"
        atomic_write_text(path, json.dumps(request, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def _safe(part: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in part)


#: A URL carrying a password (``scheme://user:password@host``).
URL_PASSWORD = re.compile(rb"\b[A-Za-z][A-Za-z0-9+.-]*://[\w.~%!$&'*+,;=-]+:([\w.~%!$&'*+,;=-]+)@")


def secret_hits(root: Path, environ: dict[str, str] | None = None) -> list[str]:
    """Lines naming each bundled file that holds a secret: an environment value or URL password.

    A secret is the value of a secret-named environment variable (:data:`SECRET_NAME`, six
    characters or more) or the password part of a URL (``http://user:password@host``).
    """
    environ = dict(os.environ) if environ is None else environ
    secrets = {k: v.encode() for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 6}
    hits = []
    for relative in study_files(root):
        data = (root / relative).read_bytes()
        hits += [
            f"{relative} holds the value of ${name}" for name, v in secrets.items() if v in data
        ]
        if URL_PASSWORD.search(data):
            hits.append(f"{relative} holds a URL with a password (user:password@host)")
    return hits


def build_bundle(
    study_dir: str | Path, target: Path, failed: list[str] | None = None
) -> dict[str, Any]:
    """Fill the empty folder ``target`` with the bundle of a study; return the manifest.

    ``failed`` lists the report steps that failed or did not run, exported anyway
    (``--allow-failed``): the manifest records them and ``verify`` reports them.
    """
    root = Path(study_dir)
    folder = StudyFolder(root)
    if not folder.manifest.is_file() or not folder.store.is_file():
        raise UsageError(
            f"{root}: not a judgekit study (needs study.json and responses.sqlite); "
            "create one with `judgekit judge --study`"
        )
    for relative in study_files(root):
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if relative == Path(folder.store.name):  # one consistent file, the WAL folded in
            with ResponseStore.open_readonly(root / relative) as store:
                store.export(destination)
        else:
            shutil.copy2(root / relative, destination)
    calls = stored_calls(target / folder.store.name)
    write_prompts(calls, target / PROMPTS)
    atomic_write_text(target / ENVIRONMENT, json.dumps(library_versions(), indent=1) + "\n")
    items = target / folder.items.name
    manifest = {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "judgekit": __version__,
        "study": root.resolve().name,
        "files": {
            relative.as_posix(): {
                "sha256": sha256_file(target / relative),
                "bytes": (target / relative).stat().st_size,
            }
            for relative in study_files(target)
        },
        "replies": reply_digests(calls),
        "items": item_digests(items) if items.is_file() else {},
    }
    if failed:
        manifest["allow_failed"] = failed
    atomic_write_text(target / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def write_zip(folder: Path, output: Path) -> Path:
    """Zip ``folder``'s files (sorted, fixed timestamps) into ``output``, atomically."""

    def write(temporary: Path) -> None:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for relative in sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(relative.as_posix(), date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, (folder / relative).read_bytes())

    return atomic_write(output, write)


def failed_steps(study_dir: Path) -> list[str]:
    """One line per step of the study's report that failed or did not run."""
    report = StudyFolder(study_dir).report
    return [o.line() for o in step_outcomes(report) if o.state in ("failed", "not run")]


def _check_output(output: str | Path, target: Path) -> None:
    """Refuse an output that would replace a file that is not a bundle, before any work."""
    as_zip = target.suffix.lower() == ".zip"
    if target.is_file():
        if not as_zip:
            raise UsageError(f"-o {output}: a file exists there; name a .zip or a new folder")
        if not is_bundle_zip(target):
            raise UsageError(f"-o {output}: exists and is not a judgekit bundle; not replaced")
    elif target.exists() and as_zip:
        raise UsageError(f"-o {output}: a folder exists there; name a .zip file")
    elif target.exists() and any(target.iterdir()):
        raise UsageError(f"-o {output}: the folder exists and is not empty; name a new one")
    writable(target, "-o")


def export_study(study_dir: str | Path, output: str | Path, *, allow_failed: bool = False) -> Path:
    """Write the bundle of ``study_dir`` to ``output`` (a ``.zip`` file, or a new folder).

    A zip is staged in ``TMPDIR/judgekit-bundle-*`` and renamed into place; a folder is staged
    beside ``output`` and renamed. Neither is left behind on an error, Ctrl-C or SIGTERM.

    Args:
        study_dir: The study folder.
        output: A ``.zip`` (new, or an earlier bundle to replace) or a new or empty folder.
        allow_failed: Export although a report step failed or did not run; the manifest
            records those steps and ``judgekit verify`` reports them.

    Raises:
        UsageError: If the folder is not a study, a report step failed (without
            ``allow_failed``), the output would replace anything but an earlier bundle or is
            inside the study, it cannot be written, a link leads out of the study, or a file
            holds a secret (one line each).
    """
    root, target = Path(study_dir).resolve(), Path(output).resolve()
    if not root.is_dir():
        raise UsageError(f"{study_dir}: no such study folder")
    if target == root or root in target.parents:
        raise UsageError(f"{output}: write the bundle outside the study folder it packs")
    _check_output(output, target)
    failed = failed_steps(root)
    if failed and not allow_failed:
        raise UsageError(
            f"not exported: report step {failed[0]}; fix it and run `judgekit report "
            f"{study_dir}` again, or pass --allow-failed to export the bundle marked as failed"
        )
    try:
        with terminated_as_exit(), tempfile.TemporaryDirectory(prefix="judgekit-bundle-") as tmp:
            if target.suffix.lower() == ".zip":
                staged = Path(tmp) / "bundle"
                staged.mkdir()
                _build_checked(root, staged, failed)
                return write_zip(staged, target)
            staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.staged-", dir=target.parent))
            try:
                _build_checked(root, staged, failed)
                if target.exists():
                    target.rmdir()  # empty: checked above
                staged.rename(target)
            finally:
                shutil.rmtree(staged, ignore_errors=True)
    except PermissionError as error:
        raise UsageError(f"-o {output}: cannot write {error.filename} (read-only?)") from None
    return target


def _build_checked(root: Path, staged: Path, failed: list[str]) -> None:
    build_bundle(root, staged, failed)
    hits = secret_hits(staged)
    if hits:
        raise UsageError(f"not exported: {hits[0]} (a key must never leave this machine)")
