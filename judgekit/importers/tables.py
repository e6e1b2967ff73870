"""Reading the user's long tables: judgments and human labels, columns found by role.

A role (``item``, ``judge``, ``score``, ...) is found under its common spellings
(:data:`SPELLINGS`, matched ignoring case, spaces and underscores) unless the user names its
column (``--column ROLE=COLUMN``). Files are read as text (``.csv``, ``.tsv``, ``.jsonl``,
``.json`` or ``.parquet``); nothing is written to them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgekit.data import alias_key
from judgekit.types import UsageError

#: Each role's common column names, first match wins.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "item": ("item_id", "item", "id", "doc_id", "example_id", "question_id", "uid"),
    "judge": ("judge", "judge_model", "annotator", "evaluator", "grader", "rater", "model"),
    "score": ("score", "judge_score", "rating", "grade", "prediction"),
    "winner": ("winner", "preference", "choice"),
    "reply": ("raw_reply", "reply", "judgment", "judge_output", "completion", "response"),
    "run": ("run", "epoch", "seed", "trial"),
    "sample": ("sample", "sample_index", "draw"),
    "probability": ("probability", "prob", "weight", "logprob_weight"),
    "expected_score": ("expected_score",),
    "question": ("question", "document", "doc", "prompt_id", "source_id", "cluster", "prompt"),
    "answer": ("answer", "output", "summary", "candidate"),
    "answer_model": ("answer_model", "system", "generator", "system_id"),
    "order": ("order", "shown_order"),
    "model_a": ("model_a", "model_1"),
    "model_b": ("model_b", "model_2"),
    "label": ("human_winner", "human_label", "human_verdict"),
}
#: Label roles: the item, the rater and the score.
LABEL_SPELLINGS: dict[str, tuple[str, ...]] = {
    "item": SPELLINGS["item"],
    "rater": ("rater", "labeller", "labeler", "annotator", "worker", "worker_id", "human"),
    "score": ("score", "label", "rating", "human_score", "grade"),
}


def read_long(path: Path, what: str) -> pd.DataFrame:
    """Read a table file as text cells (empty cells are ``""``).

    Raises:
        UsageError: For a missing file, an unknown suffix or content of another format.
    """
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
            return _as_text(frame)
        if suffix in (".jsonl", ".json"):
            if suffix == ".json":
                data = json.loads(path.read_text(encoding="utf-8-sig"))
                rows = data if isinstance(data, list) else None
                if rows is None or not all(isinstance(r, dict) for r in rows):
                    raise ValueError("not a JSON list of records")
                frame = pd.DataFrame(rows)
            else:
                frame = pd.read_json(path, lines=True, dtype=False)
            return _as_text(frame)
        if suffix not in (".csv", ".tsv", ".txt"):
            raise UsageError(f"{path}: a {what} is .csv, .tsv, .jsonl, .json or .parquet")
        with path.open(encoding="utf-8-sig", newline="") as handle:
            header = handle.readline()
        sep = "\t" if suffix == ".tsv" or header.count("\t") > header.count(",") else ","
        if sep == "," and header.count(";") > header.count(","):
            sep = ";"
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (ValueError, UnicodeDecodeError, OSError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UsageError(f"{path}: cannot read it as a {what} ({first})") from None


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as a Python string ("" for a missing one), object dtype like read_csv's."""
    return frame.astype(object).where(frame.notna(), "").astype(str).astype(object)


def find_columns(
    frame: pd.DataFrame,
    spellings: Mapping[str, Sequence[str]],
    chosen: Mapping[str, str],
    *,
    source: Path,
) -> dict[str, str]:
    """Each role's column: the user's choice, else the first common spelling present.

    Raises:
        UsageError: For a chosen column the table lacks, or an unknown role.
    """
    by_key = {alias_key(str(c)): str(c) for c in frame.columns}
    found: dict[str, str] = {}
    for role, column in chosen.items():
        if role not in spellings:
            raise UsageError(
                f"--column {role}={column}: no role {role!r}; roles: {', '.join(spellings)}"
            )
        if column not in frame.columns:
            headers = ", ".join(str(c) for c in frame.columns)
            raise UsageError(f"--column {role}={column}: {source} has no such column ({headers})")
        found[role] = column
    taken = set(found.values())
    for role, names in spellings.items():
        if role in found:
            continue
        hit = next((by_key[alias_key(n)] for n in names if alias_key(n) in by_key), None)
        if hit is not None and hit not in taken:
            found[role] = hit
            taken.add(hit)
    return found


def read_human_labels(path: Path, chosen: Mapping[str, str]) -> pd.DataFrame:
    """Human labels from a long table (item, rater, score) or one column per rater.

    Without a rater column every column but the item's is a rater (its header names it);
    empty cells are "not labelled".

    Returns:
        ``item_id, rater, score`` with one row per labelled (item, rater).

    Raises:
        UsageError: For a table without an item column, or a label that is not a number.
    """
    frame = read_long(path, "labels table")
    roles = find_columns(frame, LABEL_SPELLINGS, chosen, source=path)
    if "item" not in roles:
        raise UsageError(f"{path}: no item column; name it with --label-column item=COLUMN")
    if "rater" in roles and "score" in roles:
        long = frame[[roles["item"], roles["rater"], roles["score"]]]
        long.columns = ["item_id", "rater", "score"]
    else:
        raters = [c for c in frame.columns if c != roles["item"]]
        long = frame.melt(
            id_vars=roles["item"], value_vars=raters, var_name="rater", value_name="score"
        )
        long = long.rename(columns={roles["item"]: "item_id"})
    long = long[long["score"].astype(str).str.strip() != ""]
    numbers = pd.to_numeric(
        long["score"].astype(str).str.replace(",", ".", regex=False), errors="coerce"
    )
    if numbers.isna().any():
        bad = long[numbers.isna()].iloc[0]
        raise UsageError(
            f"{path}: label {bad['score']!r} of item {bad['item_id']!r} (rater {bad['rater']!r}) "
            "is not a number"
        )
    return pd.DataFrame(
        {"item_id": long["item_id"].astype(str).str.strip(), "rater": long["rater"].astype(str),
         "score": numbers.astype(float)}
    ).reset_index(drop=True)  # fmt: skip


def json_records(path: Path, what: str, required: Sequence[str]) -> list[dict[str, object]]:
    """The records of a JSON list or JSON-lines file, each with the ``required`` keys.

    Raises:
        UsageError: For a missing file, text that is not JSON, or a record that lacks a key
            (the file is likely of another format than named).
    """
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8-sig")
    try:
        data = json.loads(text)
        rows = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            raise UsageError(f"{path}: not JSON or JSON lines, so not {what}") from None
    for number, row in enumerate(rows, 1):
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise UsageError(
                f"{path}: record {number} lacks {', '.join(missing)}, so this is not {what}; "
                "name the adapter of its format with --from"
            )
    return rows
