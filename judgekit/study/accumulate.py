"""A study folder that accumulates: every command adds to it, none replaces it.

Each ``(rubric, variant, judge, run)`` judged into a study stays in its judgments table; a
later command adds its own combinations and, for a combination judged again, puts the new
rows (replayed from the store) in place of the old. ``study.json`` lists the judges, every
combination with the command that judged it, every command, and the SHA-256 of every file
judgekit wrote, so that judgekit never overwrites a file it did not write:

* a folder holding anything but a judgekit study is refused before any call, naming its files;
* a study file changed by hand since judgekit wrote it is refused the same way.

Studies written before this layout (``study.json`` without ``files``) are taken as judgekit's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit import __version__
from judgekit.data import write_id_score_csv, write_table
from judgekit.data.atomic import atomic_write_text
from judgekit.data.pairwise import VERDICT
from judgekit.data.tidy import JUDGE, LABEL_COLUMNS, read_judgments, read_labels, write_judgments
from judgekit.study.folder import StudyFolder
from judgekit.study.record import kept_rubric_hashes
from judgekit.types import UsageError

#: The layout version ``study.json`` records (1: one run per folder, before accumulation).
LAYOUT = 2
#: What identifies one judged combination of a study.
COMBINATION = ("rubric", "variant", JUDGE, "run")
#: What a first run leaves in its study before its outputs are written (e.g. when interrupted).
UNFINISHED = (
    "responses.sqlite",
    "responses.sqlite-*",
    "responses.sqlite.*",  # its lock, the Batch API's saved batches
    "llama-server-*.log",
)
#: Files a command rewrites; each must be one judgekit wrote (its hash in ``study.json``).
REWRITTEN = ("items.csv", "judgments.parquet", "judgments.csv", "human_labels.parquet")


def label_slug(label: str) -> str:
    """The judge's label as a file-name part (``openai:gpt-4.1`` -> ``openai_gpt-4.1``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "judge"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:6])
    return shown + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The study's ``study.json``, or ``None`` for a new folder.

    A folder holding only what an interrupted first run leaves (the store, its companions, the
    local server's log) is a new study: the run resumes there without paying twice.

    Raises:
        UsageError: For a folder holding files judgekit did not write (named), or a
            ``study.json`` that is not judgekit's.
    """
    if not root.exists():
        return None
    if all(any(fnmatch(p.name, own) for own in UNFINISHED) for p in root.iterdir()):
        return None
    folder = StudyFolder(root)
    manifest: Any = None
    if folder.manifest.is_file():
        try:
            manifest = json.loads(folder.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = None
    if not isinstance(manifest, dict) or "judgekit" not in manifest:
        names = sorted(p.name for p in root.iterdir())
        raise UsageError(
            f"--study {root} holds files judgekit did not write ({_listing(names)}); "
            "give a new or empty folder, or a study judgekit wrote"
        )
    return manifest


def check_rewritable(root: Path, manifest: Mapping[str, Any] | None) -> None:
    """Refuse to go on when a study file judgekit would rewrite was not written by judgekit.

    Raises:
        UsageError: Naming the files changed (or put there) since judgekit wrote the study.
    """
    if manifest is None or "files" not in manifest:
        return
    written: Mapping[str, str] = manifest["files"]
    changed = []
    for name in (*REWRITTEN, *(n for n in written if n.startswith("scores/"))):
        path = root / name
        if path.is_file() and written.get(name) != _sha256(path):
            changed.append(name)
    if changed:
        raise UsageError(
            f"--study {root}: {_listing(changed)} changed since judgekit wrote them (or were "
            "put there); move them out of the study, then run again"
        )


def _text_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells as the CSV writer writes them, so a table read back compares equal to its source.

    A text column only has its missing cells filled: mapping it cell by cell would hold its
    text again, as Python strings, beside the table's.
    """

    def text(column: pd.Series) -> pd.Series:
        if isinstance(column.dtype, pd.StringDtype) and column.dtype.na_value is np.nan:
            return column.fillna("")  # pandas 3's str, what read_table gives
        return column.map(lambda v: "" if pd.isna(v) else str(v))

    return frame.apply(text)


def merged_items(root: Path, table: pd.DataFrame, id_column: str = "ID") -> pd.DataFrame:
    """The study's items with ``table``'s added (new IDs appended, new columns joined).

    Raises:
        UsageError: When an item already in the study has other content in ``table``.
    """
    path = StudyFolder(root).items
    new = _text_rows(table.reset_index(drop=True))
    if not path.is_file():
        return new
    old = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    by_id = old.set_index(id_column)
    for _, row in new.iterrows():
        item = row[id_column]
        if item not in by_id.index:
            continue
        for column in set(old.columns) & set(new.columns) - {id_column}:
            if by_id.at[item, column] != row[column]:
                raise UsageError(
                    f"item {item!r}: column {column!r} differs from the study's items.csv; "
                    "judge this table into another study (a study holds one version of an item)"
                )
    added = new[~new[id_column].isin(by_id.index)]
    merged = pd.concat([old, added], ignore_index=True)
    return merged.fillna("")


def merged_judgments(root: Path, judgments: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple]]:
    """The study's judgments with this command's; returns them and the combinations re-judged.

    Rows of a combination judged again are replaced by this command's rows (a replay from the
    store gives the same rows); every other combination is kept as it was.
    """
    folder = StudyFolder(root)
    if not folder.judgments.is_file():
        return judgments.reset_index(drop=True), []
    old = read_judgments(folder.judgments)
    if JUDGE not in old.columns:  # written before panels: the label of this model's judge
        labels = judgments.drop_duplicates("model").set_index("model")[JUDGE]
        old[JUDGE] = old["model"].map(labels).fillna(old["model"]).astype(str)
    keys = [tuple(key) for key in old[list(COMBINATION)].itertuples(index=False)]
    new_keys = {tuple(key) for key in judgments[list(COMBINATION)].itertuples(index=False)}
    again = pd.Series([key in new_keys for key in keys], index=old.index, dtype=bool)
    rejudged = sorted({key for key, hit in zip(keys, again, strict=True) if hit}, key=str)
    kept = old[~again]
    merged = pd.concat([kept, judgments], ignore_index=True) if len(kept) else judgments
    return merged.reset_index(drop=True), rejudged


def merged_labels(root: Path, labels: pd.DataFrame) -> pd.DataFrame:
    """The study's human labels with this command's (a relabelled item takes the new label)."""
    path = StudyFolder(root).human_labels
    if not path.is_file():
        return labels
    old = read_labels(path)
    fresh = set(zip(labels["rubric"], labels["item_id"].astype(str), strict=True))
    keep = [key not in fresh for key in zip(old["rubric"], old["item_id"], strict=True)]
    columns = [*LABEL_COLUMNS, *(c for c in (VERDICT,) if c in old or c in labels)]
    return pd.concat([old[keep], labels], ignore_index=True)[columns]


def score_file(rubric: str, variant: str, judge: str, run: int, *, panel: bool) -> str:
    """The ``scores/`` file of one combination, relative to the study.

    ``panel``: the study has several judges, so the judge's label is part of the name
    (``riddle_accuracy-base-gpt-run1.csv``); with one judge it is not
    (``riddle_accuracy-base-run1.csv``, the name notebook 01 has always written).
    """
    judged_by = f"-{label_slug(judge)}" if panel else ""
    return f"scores/{rubric}-{variant}{judged_by}-run{run}.csv"


@dataclass(frozen=True)
class CommandRecord:
    """One command as ``study.json`` lists it.

    Attributes:
        command: The command line (keys never appear on it: they come from the environment).
        items_file: The items table it read.
        details: Everything else it chose and what came of it (rubric, variants, runs, judges,
            labels, calls per judge, judges that failed).
    """

    command: str
    items_file: str
    details: Mapping[str, Any]


def _pairwise(rows: pd.DataFrame) -> bool:
    """Whether judgments rows are a pairwise rubric's (an ``order`` per row; docs/pairwise.md)."""
    return "order" in rows.columns and bool(rows["order"].fillna("").astype(str).ne("").any())


def write_study(
    root: Path,
    manifest: Mapping[str, Any] | None,
    *,
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    judges: Sequence[Mapping[str, Any]],
    record: CommandRecord,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[tuple]:
    """Add one command's work to the study folder; return the combinations judged again.

    Writes ``items.csv``, the judgments (Parquet and CSV), ``human_labels.parquet``, one
    ``scores/`` file per combination (stale ones that judgekit wrote are removed) and
    ``study.json``; ``settings`` holds each judge's replay record by label.
    """
    folder = StudyFolder(root)
    root.mkdir(parents=True, exist_ok=True)
    previous = dict(manifest or {})
    merged, rejudged = merged_judgments(root, judgments)
    written: dict[str, str] = {}
    for path, frame, write in (
        (folder.items, items, write_table),
        (folder.judgments, merged, write_judgments),
        (folder.judgments_csv, merged, write_judgments),
        (folder.human_labels, merged_labels(root, labels), write_table),
    ):
        write(frame, path)
        written[path.name] = _sha256(path)
    combos = merged[list(COMBINATION)].drop_duplicates()
    panel = merged[JUDGE].nunique() > 1
    for rubric, variant, judge, run in combos.itertuples(index=False):
        name = score_file(str(rubric), str(variant), str(judge), int(run), panel=panel)
        rows = merged[merged[JUDGE] == judge]
        if _pairwise(rows[rows["rubric"] == rubric]):
            continue  # a pairwise rubric's rows are verdicts in two orders, not ID,score lines
        for path in write_id_score_csv(
            rows, root / name, rubric=str(rubric), variant=str(variant), run=int(run)
        ):
            written[path.relative_to(root).as_posix()] = _sha256(path)
    _remove_stale_scores(root, previous, written)
    commands = [*previous.get("commands", []), _command_entry(record, judgments)]
    by_label = {j["label"]: j for j in previous.get("judges", [])}
    by_label.update({j["label"]: dict(j) for j in judges})
    hashed = {label: _with_rubric_hashes(root, rec) for label, rec in (settings or {}).items()}
    judged = _judged(previous.get("judged", []), judgments, len(commands), hashed)
    new_manifest = {
        "judgekit": __version__,
        "layout": LAYOUT,
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "judges": list(by_label.values()),
        "rubrics": sorted({entry["rubric"] for entry in judged}),
        "judged": judged,
        "commands": commands,
        "files": dict(sorted(written.items())),
    }
    atomic_write_text(folder.manifest, json.dumps(new_manifest, indent=1, default=str) + "\n")
    return rejudged


def _with_rubric_hashes(root: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    """A judge's replay record whose rubric copy carries the SHA-256 of each of its files."""
    kept = dict(record.get("rubric") or {})
    if kept.get("source"):
        kept["sha256"] = kept_rubric_hashes(str(kept["source"]), root)
    return {**record, "rubric": kept}


def _judged(
    previous: Sequence[Mapping[str, Any]],
    judgments: pd.DataFrame,
    command: int,
    settings: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """``study.json``'s ``judged``: one entry per (rubric, judge), with its combinations.

    Each entry lists every (variant, run) with its item count and the command that judged it
    last, and ``settings``: the engine options and client facts that replay the judge's
    requests (:func:`judgekit.study.record.judging_record`, from its latest command, with
    the variants and runs widened to all it judged).
    """
    entries = {(str(e["rubric"]), str(e[JUDGE])): dict(e) for e in previous}
    counts = judgments.groupby(list(COMBINATION), sort=False)["item_id"].nunique()
    for key, n_items in counts.items():
        rubric, variant, judge, run = (str(part) for part in key)  # type: ignore[attr-defined]
        entry = entries.setdefault((str(rubric), str(judge)), {"combinations": []})
        entry.update({"rubric": str(rubric), JUDGE: str(judge)})
        combos = {(c["variant"], int(c["run"])): c for c in entry["combinations"]}
        combos[(str(variant), int(run))] = {
            "variant": str(variant), "run": int(run), "items": int(n_items), "command": command
        }  # fmt: skip
        entry["combinations"] = [combos[key] for key in sorted(combos)]
        if str(judge) in settings:
            entry["settings"] = json.loads(json.dumps(settings[str(judge)], default=str))
    for entry in entries.values():
        if "settings" in entry:
            variants = list(dict.fromkeys(c["variant"] for c in entry["combinations"]))
            runs = max(int(c["run"]) for c in entry["combinations"])
            entry["settings"]["options"].update(variants=variants, runs=runs)
    return [entries[key] for key in sorted(entries)]


def _command_entry(record: CommandRecord, judgments: pd.DataFrame) -> dict[str, Any]:
    return {
        "command": record.command,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "items_file": record.items_file,
        **record.details,
        "rows": len(judgments),
    }


def _remove_stale_scores(
    root: Path, previous: Mapping[str, Any], written: Mapping[str, str]
) -> None:
    """Delete ``scores/`` files judgekit wrote before that no combination writes now."""
    files: Mapping[str, str] | None = previous.get("files")
    scores = StudyFolder(root).scores
    if files is not None:
        stale = [n for n in files if n.startswith("scores/") and n not in written]
    elif scores.is_dir():  # layout 1 wrote scores/ and nothing else there: its names go
        old = re.compile(r".+-run\d+(\.status)?\.csv")
        stale = [
            f"scores/{p.name}"
            for p in scores.iterdir()
            if old.fullmatch(p.name) and f"scores/{p.name}" not in written
        ]
    else:
        stale = []
    for name in stale:
        (root / name).unlink(missing_ok=True)
