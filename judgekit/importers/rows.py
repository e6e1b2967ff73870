"""From the records an adapter read to the judgments table ``judgekit judge`` writes.

Every adapter builds one *record* per (item, judge, run, sample) -- :data:`RECORD_COLUMNS` --
and hands them to :func:`judgments_table`, which refuses what cannot be imported honestly
(IDs differing only by case or whitespace, two rows for one item x judge x run x sample),
reads raw replies with the user's reader (:func:`read_replies`: a parse failure is a status,
never a number) and summarises several samples of one run by a stated rule
(:func:`summarise_samples`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgekit.importers import ImportOptions
from judgekit.types import JUDGMENT_COLUMNS, Status, UsageError

#: What an adapter gives per (item, judge, run, sample); ``probability`` weights a sample.
RECORD_COLUMNS: tuple[str, ...] = (
    "item_id", "judge", "run", "sample", "status", "score", "expected_score", "probability",
    "reason", "raw_reply", "answer_model", "question",
)  # fmt: skip
#: The rules :func:`summarise_samples` states in each summarised row's ``reason``.
MEAN_RULE = "mean of parsed samples"
WEIGHTED_RULE = "probability-weighted mean of parsed samples"


def empty_records() -> pd.DataFrame:
    """A records table with no rows."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RECORD_COLUMNS})


def records(rows: Sequence[Mapping[str, object]]) -> pd.DataFrame:
    """A records table from dicts (missing fields empty; ``run`` and ``sample`` default 1)."""
    frame = pd.DataFrame(list(rows), columns=list(RECORD_COLUMNS))
    for column, default in (("run", 1), ("sample", 1), ("status", Status.OK.value)):
        frame[column] = frame[column].fillna(default)
    for column in ("reason", "raw_reply", "answer_model", "question"):
        frame[column] = texts(frame[column].fillna(""))
    return frame


def texts(column: pd.Series) -> pd.Series:
    """``column`` as Python strings in an object column (no copy of a cell that is one).

    pandas' ``astype(str)`` would copy every cell into an Arrow buffer, and the table writers
    would box each one again.
    """
    cells = [v if type(v) is str else str(v) for v in column.to_numpy(dtype=object)]
    return pd.Series(cells, index=column.index, dtype=object)


def _folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def check_ids(ids: pd.Series, what: str = "item IDs") -> None:
    """Refuse IDs that differ only by case or whitespace (``A1``, ``a1 ``): one item or two?

    Raises:
        UsageError: Naming the first such pair.
    """
    distinct = pd.Series(ids.astype(str).unique())
    folded = distinct.map(_folded)
    clash = folded[folded.duplicated(keep=False)]
    if len(clash):
        names = distinct[folded == clash.iloc[0]].tolist()[:2]
        raise UsageError(
            f"{what} {names[0]!r} and {names[1]!r} differ only by case or whitespace; "
            "make them one ID or two clearly different ones in the source"
        )


def check_duplicates(frame: pd.DataFrame) -> None:
    """Refuse two records for one item x judge x run x sample.

    Raises:
        UsageError: Naming the first duplicate and how many there are.
    """
    keys = ["item_id", "judge", "run", "sample"]
    repeated = frame.duplicated(keys, keep="first")
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise UsageError(
            f"{int(repeated.sum())} duplicate row(s) for one item x judge x run x sample, first: "
            f"item {first['item_id']!r}, judge {first['judge']!r}, run {first['run']}, sample "
            f"{first['sample']}; give each repetition its own run or sample number"
        )


def read_replies(frame: pd.DataFrame, options: ImportOptions) -> tuple[pd.DataFrame, list[str]]:
    """Read every row's ``raw_reply`` with the user's reader, as a live reply would be read.

    Returns:
        The records with status, score, reason and tolerances from the reader, and one note
        saying what share failed and why.

    Raises:
        UsageError: When no reply could be read (the format is likely the wrong one).
    """
    reader = options.reader
    assert reader is not None
    statuses, scores, reasons, tolerances = [], [], [], []
    for item, text in zip(frame["item_id"].astype(str), frame["raw_reply"], strict=True):
        parsed = reader.parse(str(text), [item])
        verdict = parsed.verdicts[0]
        statuses.append(verdict.status.value)
        scores.append(np.nan if verdict.score is None else float(verdict.score))
        reasons.append(verdict.reason)
        tolerances.append(";".join(parsed.tolerances))
    result = frame.assign(status=statuses, score=scores, reason=reasons, tolerances=tolerances)
    failed = Counter(s for s in statuses if s != Status.OK.value)
    n_failed, total = sum(failed.values()), len(statuses)
    why = ", ".join(f"{status} {n}" for status, n in failed.most_common())
    if total and n_failed == total:
        first = reasons[0] or statuses[0]
        raise UsageError(
            f"none of the {total} replies could be read ({why}; first: {first}); name the "
            "output format the judge was asked for with --format or --rubric"
        )
    notes = [f"{n_failed} of {total} replies ({n_failed / total:.1%}) not read: {why}"] * bool(
        n_failed
    )
    return result, notes


def summarise_samples(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    r"""One row per (item, judge, run): several samples summarised by a stated rule.

    The score is the mean of the parsed samples' scores (G-Eval, n = 20), or, when the samples
    carry probabilities, :math:`\sum_i p_i s_i / \sum_i p_i` over the parsed ones; a run
    with no parsed sample takes its most common status and no score. ``samples`` and
    ``parsed_samples`` count them; ``sample_scores`` lists each sample's score ("" unparsed).
    """
    frame = frame.assign(
        ok=frame["status"] == Status.OK.value, score=pd.to_numeric(frame["score"], errors="coerce")
    )
    keys = ["item_id", "judge", "run"]
    groups = frame.groupby(keys, sort=False)
    counts = groups.size()
    several = counts[counts > 1]
    if several.empty:
        single = frame.drop(columns=["ok"]).assign(
            samples=1, parsed_samples=frame["ok"].astype(int)
        )
        return single, []
    rows = []
    weighted = False
    for _, group in groups:
        if len(group) == 1:
            row = group.iloc[0].to_dict()
            row.update(samples=1, parsed_samples=int(row["ok"]))
            rows.append(row)
            continue
        parsed = group[group["ok"]]
        row = group.iloc[0].to_dict()
        probs = pd.to_numeric(parsed["probability"], errors="coerce")
        use_probs = len(parsed) > 0 and probs.notna().all() and probs.sum() > 0
        weighted |= bool(use_probs)
        if len(parsed) == 0:
            row.update(status=Counter(group["status"]).most_common(1)[0][0], score=np.nan)
        elif use_probs:
            row.update(
                status=Status.OK.value, score=float((probs * parsed["score"]).sum() / probs.sum())
            )
        else:
            row.update(status=Status.OK.value, score=float(parsed["score"].mean()))
        rule = WEIGHTED_RULE if use_probs else MEAN_RULE
        row.update(
            samples=len(group),
            parsed_samples=len(parsed),
            reason=f"{rule}: {len(parsed)} of {len(group)}",
            expected_score=pd.to_numeric(group["expected_score"], errors="coerce").mean(),
            sample_scores=";".join("" if pd.isna(s) else f"{s:g}" for s in group["score"]),
        )
        rows.append(row)
    summary = pd.DataFrame(rows).drop(columns=["ok"])
    rule = WEIGHTED_RULE if weighted else MEAN_RULE
    return summary, [f"{len(several)} runs with several samples summarised: {rule}"]


def request_hash(*parts: object) -> str:
    """A stable stand-in for the request hash of an imported verdict (its source and key)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:32]


def judgments_table(
    raw: pd.DataFrame, options: ImportOptions, *, rubric: str, source: str
) -> tuple[pd.DataFrame, list[str]]:
    """The judgments table (``JUDGMENT_COLUMNS``, ``judge``, context, sample counts).

    Args:
        raw: Records (:data:`RECORD_COLUMNS`).
        options: The import's options (reader, rubric and variant names).
        rubric: The adapter's rubric name (``options.rubric`` wins when set).
        source: Names the source in each row's stand-in request hash.

    Returns:
        The table, sorted by item, judge, run; and the notes for the user.

    Raises:
        UsageError: For an empty source, IDs differing only by case or whitespace, duplicate
            records, or replies no reader could read.
    """
    if raw.empty:
        raise UsageError(f"{source}: no judgments found in it")
    raw = raw.assign(item_id=texts(raw["item_id"]), judge=texts(raw["judge"]))
    raw = raw.assign(run=raw["run"].astype(int), sample=raw["sample"].astype(int))
    check_ids(raw["item_id"])
    check_ids(raw["judge"], "judge names")
    check_duplicates(raw)
    notes: list[str] = []
    raw = raw.assign(tolerances="")
    if options.reader is not None:
        raw, notes = read_replies(raw, options)
    summary, sample_notes = summarise_samples(raw)
    name = options.rubric or rubric
    table = pd.DataFrame(
        {
            "item_id": summary["item_id"],
            "rubric": name,
            "variant": options.variant,
            "model": summary["judge"],
            "run": summary["run"].astype(int),
            "attempt": 1,
            "status": texts(summary["status"]),
            "score": pd.to_numeric(summary["score"], errors="coerce").astype(float),
            "expected_score": pd.to_numeric(summary["expected_score"], errors="coerce"),
            "reason": texts(summary["reason"]),
            "batch_index": 0,
            "position": 0,
            "request_hash": [
                request_hash(source, name, i, j, r)
                for i, j, r in zip(
                    summary["item_id"], summary["judge"], summary["run"], strict=True
                )
            ],
            "prompt_tokens": np.nan,
            "completion_tokens": np.nan,
            "latency_s": np.nan,
            "tolerances": texts(summary["tolerances"]),
            "raw_reply": texts(summary["raw_reply"]),
        },
        columns=list(JUDGMENT_COLUMNS),
    )
    unscored = table["status"] != Status.OK.value
    table.loc[unscored, "score"] = np.nan
    table["judge"] = summary["judge"].to_numpy()
    table["answer_model"] = texts(summary["answer_model"]).to_numpy()
    table["question"] = texts(summary["question"]).to_numpy()
    table["samples"] = summary["samples"].astype(int).to_numpy()
    table["parsed_samples"] = summary["parsed_samples"].astype(int).to_numpy()
    if "sample_scores" in summary.columns:
        table["sample_scores"] = texts(summary["sample_scores"].fillna("")).to_numpy()
    table = table.sort_values(["item_id", "judge", "run"], kind="stable").reset_index(drop=True)
    return plain_text(table), [*notes, *sample_notes]


def plain_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as Python strings (object dtype), as the engine's judgments hold them.

    Arrow-backed strings (pandas' default when reading a CSV) are read back one boxed cell at
    a time by the row-wise table writers, many times slower.
    """
    text = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c].dtype)]
    return frame.astype(dict.fromkeys(text, object))
