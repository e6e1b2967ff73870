"""``judgekit export STUDY -o study.zip``: a study another researcher can verify offline.

A bundle is the study folder (see :mod:`judgekit.workflows.study`) plus three files of its own:

``prompts/<rubric>--<variant>--<model>.json``
    the first request of every (rubric, variant, judge) exactly as it was sent (messages and
    options, from the response store); every other request is in ``responses.sqlite``.
``environment.json``
    judgekit's version, Python's and those of the libraries that compute the numbers.
``manifest.json``
    the bundle format, and the sha256 and size of every other file; the sha256 of every stored
    reply by request hash, and of every item's row, so :mod:`judgekit.workflows.verify` can
    name a changed reply or item and not only a changed file.

The response store goes in as a consistent one-file SQLite copy
(:meth:`~judgekit.engine.store.ResponseStore.export`, the WAL folded in). Keys never enter a
bundle: every file is searched for the value of each secret-named environment variable before
the bundle is written, and a hit stops the export naming the file and the variable. A zip's
entries are written in sorted order with a fixed timestamp, so exporting the same study twice
gives the same bytes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
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
from judgekit.types import UsageError
from judgekit.workflows.paper import RECORDED_PACKAGES, SECRET_NAME
from judgekit.workflows.study import StudyFolder

BUNDLE_FORMAT = "judgekit-study-bundle"
BUNDLE_VERSION = 1
MANIFEST = "manifest.json"
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
    """The study's files to bundle (relative paths), in sorted order."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        hidden = any(part.startswith(".") for part in relative.parts)
        if path.is_file() and not hidden and not path.name.endswith(SKIPPED_SUFFIXES):
            yield relative


def stored_calls(store: Path) -> pd.DataFrame:
    """Every stored request of a store (full messages), in request order."""
    with ResponseStore.open_readonly(store) as opened:
        return pd.DataFrame(list(opened.rows()))


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


def secret_hits(root: Path, environ: dict[str, str] | None = None) -> list[str]:
    """Lines naming each bundled file that holds a secret-named environment variable's value."""
    environ = dict(os.environ) if environ is None else environ
    secrets = {k: v.encode() for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 6}
    hits = []
    for relative in study_files(root):
        data = (root / relative).read_bytes()
        hits += [
            f"{relative} holds the value of ${name}" for name, v in secrets.items() if v in data
        ]
    return hits


def build_bundle(study_dir: str | Path, target: Path) -> dict[str, Any]:
    """Fill the empty folder ``target`` with the bundle of a study; return the manifest."""
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


def export_study(study_dir: str | Path, output: str | Path) -> Path:
    """Write the bundle of ``study_dir`` to ``output`` (a ``.zip`` file, or a new folder).

    Raises:
        UsageError: If the folder is not a study, the output is inside it or exists as a
            non-empty folder, or a file holds a secret (one line each).
    """
    root, target = Path(study_dir).resolve(), Path(output).resolve()
    if not root.is_dir():
        raise UsageError(f"{study_dir}: no such study folder")
    if target == root or root in target.parents:
        raise UsageError(f"{output}: write the bundle outside the study folder it packs")
    as_zip = target.suffix.lower() == ".zip"
    if not as_zip and target.exists() and any(target.iterdir()):
        raise UsageError(f"{output}: the folder exists and is not empty; name a new one or a .zip")
    with tempfile.TemporaryDirectory(prefix="judgekit-bundle-") as scratch:
        staged = Path(scratch) / "bundle"
        staged.mkdir()
        build_bundle(root, staged)
        hits = secret_hits(staged)
        if hits:
            raise UsageError(f"not exported: {hits[0]} (a key must never leave this machine)")
        if as_zip:
            return write_zip(staged, target)
        shutil.copytree(staged, target, dirs_exist_ok=True)
    return target
