"""What ``export`` and ``verify`` check before they read a bundle or write anything.

A bundle comes from someone else, and its outputs land beside the user's own files, so:

* an output never replaces a file that is not one of ours: ``export -o`` replaces only an
  earlier bundle (:func:`is_bundle_zip`), ``verify --html`` only an earlier judgekit page
  (:func:`is_judgekit_page`); a read-only place is one line before any work (:func:`writable`);
* a zip's declared expanded size is checked before anything is extracted
  (:func:`check_zip_size`);
* a link never leads out of the folder being packed or verified (:func:`inside`);
* SIGTERM ends the process through ``finally`` blocks (:func:`terminated_as_exit`), so the
  scratch copies in ``TMPDIR/judgekit-*`` and a half-staged folder are removed on every exit a
  process can see (SIGKILL cannot be seen by anyone).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from judgekit.types import UsageError

#: The manifest's name inside a bundle (also in :mod:`judgekit.sharing.export`).
MANIFEST = "manifest.json"
#: The format every bundle's manifest names.
BUNDLE_FORMAT = "judgekit-study-bundle"
#: A bundle expands to at most this many bytes ...
MAX_EXPANDED = 4 << 30
#: ... and, above ``RATIO_FLOOR`` bytes, to at most this many times its compressed size.
MAX_RATIO = 100
RATIO_FLOOR = 32 << 20
#: The start of every page :mod:`judgekit.reporting.html` writes.
PAGE_MARK = "<title>judgekit report: "


def is_bundle_zip(path: Path) -> bool:
    """Whether ``path`` is a zip whose manifest is a judgekit bundle's."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(MANIFEST)
            if info.file_size > RATIO_FLOOR:
                return False
            manifest = json.loads(archive.read(info))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == BUNDLE_FORMAT


def is_judgekit_page(path: Path) -> bool:
    """Whether ``path`` is an HTML page written by judgekit's report (its first 4 KiB tell)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return head.startswith("<!DOCTYPE html>") and PAGE_MARK in head


def writable(output: Path, option: str) -> None:
    """Refuse an output whose folder is missing or cannot be written, in one line.

    Raises:
        UsageError: ``OPTION OUTPUT: cannot write in FOLDER (...)``.
    """
    folder = output.parent
    if not folder.is_dir():
        raise UsageError(f"{option} {output}: no folder {folder}; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {output}: cannot write in {folder} (read-only?)")
    if output.exists() and not os.access(output, os.W_OK):
        raise UsageError(f"{option} {output}: the file is read-only; name another")


def check_zip_size(source: Path, archive: zipfile.ZipFile) -> None:
    """Refuse a zip that declares more than it plausibly holds, before extracting a byte.

    Extraction itself never writes more than an entry declares (:mod:`zipfile` stops there).

    Raises:
        UsageError: If the entries expand past :data:`MAX_EXPANDED`, or past
            :data:`MAX_RATIO` times the zip's size once above :data:`RATIO_FLOOR`.
    """
    declared = sum(info.file_size for info in archive.infolist())
    packed = max(source.stat().st_size, 1)
    if declared > MAX_EXPANDED or (declared > RATIO_FLOOR and declared > MAX_RATIO * packed):
        raise UsageError(
            f"{source}: its entries expand to {declared / 2**20:.0f} MiB from "
            f"{packed / 2**20:.2f} MiB; refused before extraction (not a bundle judgekit wrote?)"
        )


def inside(path: Path, base: Path, shown: Path) -> bool:
    """Whether the link or file ``path`` stays inside ``base`` (resolved).

    Raises:
        UsageError: If ``path`` is a link that leads out of ``base``.
    """
    resolved = path.resolve()
    if resolved != base and base not in resolved.parents:
        raise UsageError(
            f"{shown}: a link to {resolved}, outside {base.name}/; refused (copy the file in "
            "if it belongs there)"
        )
    return True


@contextmanager
def terminated_as_exit() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`SystemExit`, so cleanup in ``finally`` runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def check_page_target(bundle: Path, html: Path) -> None:
    """Refuse an ``--html`` target that is not a page of ours, or inside the bundle, up front.

    Raises:
        UsageError: One line naming the target.
    """
    target = html.resolve()
    if target.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--html {html}: name a new .html file (this one is not a page)")
    if target.exists() and not is_judgekit_page(target):
        raise UsageError(f"--html {html}: exists and is not a judgekit report page; not replaced")
    folder = bundle.resolve()
    if bundle.is_dir() and folder in target.parents:
        raise UsageError(f"--html {html}: write the page outside the bundle it verifies")
    writable(target, "--html")
