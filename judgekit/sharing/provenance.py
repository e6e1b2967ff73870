"""Provenance checked, not trusted: the readable records of a bundle against its response store.

A bundle's ``prompts/*.json``, the judges in ``study.json`` and ``environment.json`` are what a
reader looks at; the response store is what the judgments are rebuilt from. After export any of
them can be rewritten and the manifest re-hashed to match (the manifest is a checksum list, not a
signature: see docs/security.md), so ``judgekit verify`` checks each against the store:

* every ``prompts/*.json`` must be exactly the first stored request of its (rubric, variant,
  judge), written again from the store here (none missing, none added);
* every judge's model in ``study.json`` must be the model the store's requests of that rubric
  were sent to, with the temperature and seed the requests carried;
* ``environment.json``'s library versions must be those the bundled report's notebooks recorded
  when they were executed (their provenance, :func:`judgekit.reporting.notebooks.provenance`).

A request the replay needs and the store lacks is explained by its first difference from the
closest stored request (:func:`explain_miss`).
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd

from judgekit.engine.session import OfflineStoreMissError
from judgekit.sharing.export import ENVIRONMENT, PROMPTS, stored_calls, write_prompts
from judgekit.study.folder import StudyFolder

#: Request options whose stored value must match the judge's recorded setting.
CHECKED_OPTIONS = ("temperature", "seed")


def check_prompts(root: Path, calls: pd.DataFrame) -> list[str]:
    """``prompts/*.json`` files that differ from the store's first requests, or are extra."""
    bundled = root / PROMPTS
    with tempfile.TemporaryDirectory(prefix="judgekit-prompts-") as scratch:
        written = {p.name: p for p in write_prompts(calls, Path(scratch))}
        present = {p.name: p for p in bundled.glob("*.json")} if bundled.is_dir() else {}
        problems = [f"{PROMPTS}/{n}: missing (the store has its request)" for n in
                    sorted(set(written) - set(present))]  # fmt: skip
        problems += [f"{PROMPTS}/{n}: the store holds no such request" for n in
                     sorted(set(present) - set(written))]  # fmt: skip
        for name in sorted(set(written) & set(present)):
            try:
                shown = json.loads(present[name].read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                shown = None
            if shown != json.loads(written[name].read_text(encoding="utf-8")):
                problems.append(
                    f"{PROMPTS}/{name}: differs from the request the store holds "
                    "(rewritten after export?)"
                )
    return problems


def check_judges(
    root: Path, records: Sequence[Mapping[str, Any]], calls: pd.DataFrame
) -> list[str]:
    """Judges in ``study.json`` whose model or options are not those of the stored requests."""
    study = json.loads(StudyFolder(root).manifest.read_text(encoding="utf-8"))
    models = set(calls["model"].astype(str))
    problems = [
        f"study.json: judge {judge.get('label', '?')} records model {judge.get('model')!r}, "
        f"but no stored request was sent to it (the store's: {', '.join(sorted(models))})"
        for judge in study.get("judges") or []
        if isinstance(judge, dict)
        and str(judge.get("model")) not in models
        and judge.get("provider") != "imported"  # judged elsewhere: no request to store
    ]
    for record in records:
        rubric, settings = str(record["rubric"]), record["settings"]
        model = str(settings["client"]["model"])
        mine = calls[(calls["rubric"] == rubric) & (calls["model"] == model)]
        if mine.empty:
            sent = sorted(set(calls.loc[calls["rubric"] == rubric, "model"].astype(str)))
            problems.append(
                f"study.json: {rubric} judged by {model!r}, but the store's requests of {rubric} "
                f"went to {', '.join(sent) or 'no judge'}"
            )
            continue
        for option in CHECKED_OPTIONS:
            wanted = settings.get("options", {}).get(option)
            sent_values = {json.loads(str(o)).get(option) for o in mine["options"]}
            if wanted is not None and sent_values and sent_values != {wanted}:
                shown = ", ".join(map(str, sorted(sent_values, key=str)))
                problems.append(
                    f"study.json: {rubric}/{model} records {option} {wanted}, but its stored "
                    f"requests were sent with {shown}"
                )
    return problems


def check_provenance(root: Path, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """:func:`check_prompts` and :func:`check_judges` on a bundle's copy."""
    calls = stored_calls(StudyFolder(root).store)
    return check_prompts(root, calls) + check_judges(root, records, calls)


def environment_problems(report: Path, root: Path) -> list[str]:
    """Versions in ``environment.json`` that the bundled notebooks' provenance contradicts."""
    path = root / ENVIRONMENT
    if not path.is_file():
        return []
    stated = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for notebook in sorted(report.glob("[0-9][0-9]_*.ipynb")):
        try:
            record = nbformat.read(notebook, as_version=4).metadata["judgekit"]["provenance"]
        except (KeyError, ValueError, TypeError, OSError):
            continue
        recorded = {**record.get("packages", {}), "python": record.get("python")}
        for name, version in recorded.items():
            if name in stated and version not in (None, "not installed", stated[name]):
                problems.append(
                    f"{ENVIRONMENT}: {name} {stated[name]}, but report/{notebook.name} was "
                    f"executed with {name} {version}"
                )
        if problems:
            break  # one notebook's record says enough
    return problems


def first_difference(wanted: Sequence[Any], stored: Sequence[Any]) -> str:
    """The first line where the messages to send differ from stored ones, quoted briefly."""
    for index, (new, old) in enumerate(zip(wanted, stored, strict=False)):
        if new == old:
            continue
        new_lines, old_lines = str(new["content"]).splitlines(), str(old["content"]).splitlines()
        for line, (a, b) in enumerate(zip(new_lines, old_lines, strict=False), start=1):
            if a != b:
                return (
                    f"message {index + 1} ({new['role']}), line {line}: now {a[:80]!r}, "
                    f"stored {b[:80]!r}"
                )
        return (
            f"message {index + 1} ({new['role']}): {len(new_lines)} lines, stored {len(old_lines)}"
        )
    return f"{len(wanted)} messages, stored {len(stored)}"


def explain_miss(error: OfflineStoreMissError, calls: pd.DataFrame) -> str:
    """Name a request the store lacks by its difference from the closest stored request."""
    key = getattr(error, "key", None)
    if key is None:
        return str(error)
    wanted = [dict(m) for m in key.request.messages]
    same = calls[(calls["rubric"] == key.rubric) & (calls["variant"] == key.variant)]
    text = json.dumps(wanted, ensure_ascii=False)
    best, best_ratio = None, -1.0
    for messages in same["messages"]:
        ratio = difflib.SequenceMatcher(None, text, str(messages), autojunk=False).quick_ratio()
        if ratio > best_ratio:
            best, best_ratio = json.loads(str(messages)), ratio
    if best is None:
        return f"{key.rubric}/{key.variant}: no stored request of this rubric and variant"
    difference = first_difference(wanted, best)
    where = (
        "the prompt changed since judging"
        if difference.startswith("message 1 (system)")
        else "an item or the prompt changed since judging"
    )
    return (
        f"judgments: {key.rubric}/{key.variant}/{key.model} run {key.run}: a request is not in "
        f"the store ({where}); it differs from the closest stored request at {difference}"
    )
