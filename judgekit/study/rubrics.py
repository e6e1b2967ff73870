"""The rubrics a study was judged with, found from its folder wherever it goes.

``judgekit judge --study`` copies an own prompt file or rubric folder into the study's
``rubrics/`` (:func:`judgekit.study.record.keep_rubric`) and records in ``study.json``,
for every (rubric, judge), the copy's path, the SHA-256 of each of its files, the
``--column-map`` and ``--format-reminder`` it was judged with. :func:`study_rubric` gives the
rubric back from that record (``Study.rubric(name)``), checked: a copy changed since is refused
in one line. A packaged name, or a study judged before copies were kept, loads the packaged
rubric of that name. A rubric known only from ``judgekit import`` (the source's own name,
``mt_bench``, ``alpaca_eval``, ...) is the :class:`judgekit.rubrics.imported.ImportedRubric`
its import recorded: its scale and output format, and no prompt.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Protocol

from judgekit.rubrics import JinjaRubric, PromptRubric, list_rubrics
from judgekit.rubrics.imported import ImportedRubric
from judgekit.study.own_prompt import load_any_rubric
from judgekit.study.record import KEPT_RUBRICS
from judgekit.types import Scale, UsageError


class NoScale(UsageError):
    """A rubric the study neither packages, keeps a copy of, nor imported with a scale."""


class Folder(Protocol):
    """A study folder's layout (:class:`judgekit.study.folder.StudyFolder`)."""

    @property
    def root(self) -> Path:
        """The study folder."""

    @property
    def manifest(self) -> Path:
        """Its ``study.json``."""


def rubric_record(folder: Folder, name: str) -> dict[str, Any]:
    """How ``study.json`` says ``name`` was last judged: ``source``, ``sha256``, ``column_map``...

    ``{}`` for a study that records none (judged before the rubric was kept, or no
    ``study.json``); the rubric is then the packaged one of that name.
    """
    try:
        manifest = json.loads(folder.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    judged = manifest.get("judged", []) if isinstance(manifest, dict) else []
    latest: tuple[int, dict[str, Any]] = (-1, {})
    for entry in judged if isinstance(judged, list) else []:
        if not isinstance(entry, dict) or entry.get("rubric") != name:
            continue
        kept = (entry.get("settings") or {}).get("rubric")
        if not isinstance(kept, dict) or not kept.get("source"):
            continue
        command = max((int(c.get("command", 0)) for c in entry.get("combinations", [])), default=0)
        if command > latest[0]:
            latest = (command, kept)
    return latest[1]


def recorded_manifest(folder: Folder) -> dict[str, Any]:
    """The study's ``study.json`` as a dict (``{}`` when missing or unreadable)."""
    try:
        manifest = json.loads(folder.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def imported_rubric(folder: Folder, name: str) -> ImportedRubric | None:
    """The rubric ``name`` as the study's latest import of it recorded it (None: never imported).

    Raises:
        UsageError: For a record whose scale judgekit cannot read (one line: import again).
    """
    commands = recorded_manifest(folder).get("commands", [])
    records = [
        c["imported_rubric"]
        for c in commands if isinstance(commands, list)
        if isinstance(c, dict) and isinstance(c.get("imported_rubric"), dict)
        and c["imported_rubric"].get("name") == name
    ]  # fmt: skip
    if not records:
        return None
    record = records[-1]
    try:
        scale = record["scale"]
        return ImportedRubric(
            name=name, adapter=str(record["adapter"]),
            scale=Scale(tuple(scale["allowed"]), tuple(scale["abstain"]), scale["step"]),
            output_format=str(record.get("format") or ""),
            score_marker=record.get("score_marker") or None,
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(
            f"rubric {name!r}: {folder.manifest} records its import with an unreadable scale "
            f"({error}); import the files again into a new folder"
        ) from None


def study_rubric(folder: Folder, name: str) -> JinjaRubric:
    """The rubric ``name`` of a study: packaged, or its own copy checked against ``study.json``.

    An imported rubric is returned as its import recorded it (:func:`imported_rubric`). A
    prompt file or rubric folder was copied into ``rubrics/`` when judged
    (:func:`judgekit.study.record.keep_rubric`) with the SHA-256 of each file; the copy is
    loaded with the command's ``column_map`` and ``format_reminder``.

    Raises:
        NoScale: For a name neither recorded, imported with a scale nor packaged.
        UsageError: For a missing copy, or a copied file whose hash differs from the one
            recorded (one line naming the file).
    """
    kept = rubric_record(folder, name)
    source = str(kept.get("source") or name)
    reminder = kept.get("format_reminder")
    if source in (*list_rubrics(), *list_rubrics("pairwise")):
        return load_any_rubric(source, (), reminder, option=f"rubric {name!r}")
    if not kept:
        imported = imported_rubric(folder, name)
        if imported is not None:
            return imported
        raise NoScale(
            f"rubric {name!r}: {folder.manifest} records no copy of it nor its scale (an import "
            "records it when the source or --scale states one) and judgekit packages no rubric "
            "of that name; judge the study again with --rubric FILE_OR_FOLDER"
        )
    kept_dir = (folder.root / KEPT_RUBRICS).resolve()
    for relative in [source, *dict(kept.get("sha256") or {})]:
        if not (folder.root / relative).resolve().is_relative_to(kept_dir):
            raise UsageError(
                f"rubric {name!r}: {folder.manifest} names {relative!r}, which is not in the "
                f"study's {KEPT_RUBRICS}/ folder; judge the study again"
            )
    for relative, digest in dict(kept.get("sha256") or {}).items():
        path = folder.root / relative
        found = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        if found != digest:
            raise UsageError(
                f"rubric {name!r}: {path} {'is missing' if found == 'missing' else 'changed'} "
                f"since the study was judged with it (SHA-256 in {folder.manifest.name}); "
                "restore it, or judge the study again"
            )
    copy = folder.root / source
    if not copy.exists():
        raise UsageError(f"rubric {name!r}: {copy}, the study's copy of it, is missing")
    column_map = list(kept.get("column_map") or ())
    rubric = load_any_rubric(str(copy), (), reminder, option=f"rubric {name!r}")
    if isinstance(rubric, PromptRubric) and column_map:
        rubric = load_any_rubric(str(copy), column_map, reminder, option=f"rubric {name!r}")
    return rubric
