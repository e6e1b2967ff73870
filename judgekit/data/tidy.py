"""Read judgments tables and reshape them into the long rater tables the statistics take.

The engine's judgments table holds one row per (rubric, variant, model, run, item): the verdict
of the attempt that settled it (``attempt`` says which; a row re-asked after an unusable reply
shows its last attempt, earlier attempts are not rows), plus one row per foreign ID a reply
scored. Every attempt's request and reply is in the response store
(:func:`judgekit.engine.history.attempt_history` lists them as a table). The analysis
notebooks need one *final* verdict per (rubric, variant, judge model, run, item), foreign IDs
dropped. Human labels live in a separate table (``item_id, rubric, answer_model, score``)
that the judging notebook writes from the rubric's label column.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgekit.data.frames import read_frame, write_table
from judgekit.types import JUDGMENT_COLUMNS, Item, Status

#: Columns that identify one final verdict (and ``judge``, a panel member's label, when present).
VERDICT_KEYS: tuple[str, ...] = ("rubric", "variant", "model", "run", "item_id")
JUDGE = "judge"
#: Columns of the human labels table.
LABEL_COLUMNS: tuple[str, ...] = ("item_id", "rubric", "answer_model", "score")
HUMAN = "human"


def _with_text_ids(frame: pd.DataFrame) -> pd.DataFrame:
    frame["item_id"] = frame["item_id"].astype(str)
    return frame


#: The columns holding a reply's text: the reply, the fragment a verdict was read from, and the
#: verdict's reason (for a one-item reply often most of the reply again).
REPLY_TEXT_COLUMNS: tuple[str, ...] = ("raw_reply", "verdict_raw", "reason")


def share_texts(frame: pd.DataFrame, columns: Sequence[str] = REPLY_TEXT_COLUMNS) -> pd.DataFrame:
    """Hold each distinct text of ``columns`` once (in place): one string object per value.

    A reply repeated on every row of its batch, or a ``verdict_raw`` equal to the reply, is
    read from a file as one string per cell; after this they are one object, so a study's
    replies take the memory of one copy.
    """
    kept: dict[str, str] = {}
    for column in columns:
        if column in frame.columns:
            values = [
                kept.setdefault(value, value) if isinstance(value, str) else value
                for value in frame[column].to_numpy(dtype=object)
            ]
            # object dtype: cells point at the shared Python strings (a string dtype would
            # copy every cell into its own buffer again)
            frame[column] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def write_judgments(judgments: pd.DataFrame, path: str | Path) -> Path:
    """Write a judgments table (:func:`judgekit.data.write_table`) holding each reply once.

    ``raw_reply`` is written on the first row of each request (``request_hash``) and left
    empty on the request's other rows, so a reply judged in a batch of 20 is one copy in the
    file, not 20; :func:`read_judgments` gives every row its reply again.
    """
    repeated = judgments["request_hash"].duplicated()
    if not repeated.any():
        return write_table(judgments, path)
    replies = judgments["raw_reply"].to_numpy(dtype=object).copy()
    replies[repeated.to_numpy()] = ""
    return write_table(judgments.assign(raw_reply=replies), path)


def _replies_on_every_row(frame: pd.DataFrame) -> pd.DataFrame:
    """Give each row without ``raw_reply`` its request's reply (see :func:`write_judgments`).

    Plain Python over the cells: pandas would infer a string column and copy the reply once
    per row it fills.
    """
    hashes = frame["request_hash"].to_numpy(dtype=object)
    replies = frame["raw_reply"].to_numpy(dtype=object)
    given: dict[object, str] = {}
    for request_hash, reply in zip(hashes, replies, strict=True):
        if isinstance(reply, str) and reply:
            given.setdefault(request_hash, reply)
    filled = [
        reply if isinstance(reply, str) and reply else given.get(request_hash, reply)
        for request_hash, reply in zip(hashes, replies, strict=True)
    ]
    frame["raw_reply"] = pd.Series(filled, index=frame.index, dtype=object)
    return frame


def read_judgments(path: str | Path, *, replies: bool = True) -> pd.DataFrame:
    """Read a judgments table (one copy of each reply text, see :func:`share_texts`).

    Every row carries its request's reply, also when the file holds it once per request
    (:func:`write_judgments`).

    Args:
        path: The table.
        replies: Load the reply texts (:data:`REPLY_TEXT_COLUMNS`); the analyses need none
            of them, so the report reads a study without them.
    """
    skip = () if replies else REPLY_TEXT_COLUMNS
    frame = read_frame(path, required=JUDGMENT_COLUMNS, what="judgments table", skip=skip)
    if not replies:
        return _with_text_ids(frame)
    return _with_text_ids(share_texts(_replies_on_every_row(frame)))


def read_labels(path: str | Path) -> pd.DataFrame:
    """Read a human labels table (``item_id, rubric, answer_model, score``)."""
    return _with_text_ids(read_frame(path, required=LABEL_COLUMNS, what="human labels table"))


#: The order a pairwise row's pair was shown in (``ab``/``ba``; docs/pairwise.md).
ORDER = "order"


def final_verdicts(judgments: pd.DataFrame) -> pd.DataFrame:
    """Keep the last attempt of every (rubric, variant, model, run, item); drop foreign IDs.

    In a panel study (a ``judge`` column) the judge's label is part of the key too, so two
    judges asking the same model name (e.g. at two endpoints) stay apart. Rows with status
    ``unknown_id`` name IDs that were never asked about, so they are not verdicts on any item;
    count them from the full table instead.
    """
    asked = judgments[judgments["status"] != Status.UNKNOWN_ID.value]
    keys = [*VERDICT_KEYS, JUDGE] if JUDGE in asked.columns else list(VERDICT_KEYS)
    if ORDER in asked.columns:  # a pairwise table: each order of a pair is its own verdict
        keys.append(ORDER)
    last = asked.groupby(keys, sort=False, dropna=False)["attempt"].transform("max")
    return asked[asked["attempt"] == last].reset_index(drop=True)


def labels_from_items(
    items: Sequence[Item], rubric_name: str, answer_model_key: str, column: str
) -> pd.DataFrame:
    """Human labels of ``items`` for the rubric called ``rubric_name``: ``column`` in their meta.

    Items whose label is empty are left out. Returns an empty table (with the label columns)
    when ``column`` is empty or the items do not carry it.
    """
    rows = [
        {
            "item_id": item.id,
            "rubric": rubric_name,
            "answer_model": str(item.meta.get(answer_model_key, "")),
            "score": float(item.meta[column]),
        }
        for item in items
        if column and item.meta.get(column) is not None and str(item.meta[column]).strip() != ""
    ]
    return pd.DataFrame(rows, columns=list(LABEL_COLUMNS))


#: Item context the judging notebook carries next to every verdict, when known.
CONTEXT_COLUMNS: tuple[str, ...] = ("answer_model", "question", "answer_chars")


def rater_table(
    verdicts: pd.DataFrame,
    labels: pd.DataFrame | None = None,
    *,
    rubric: str,
    rater: str = "model",
) -> pd.DataFrame:
    """Long table of one rubric: judges' verdicts plus, optionally, the human as rater "human".

    Columns: ``item, rater, score, status, run, variant`` and the context columns
    (``answer_model, question, answer_chars``) the verdicts carry. Human rows have status
    ``ok`` and empty run and variant.

    Args:
        verdicts: Final verdicts (:func:`final_verdicts`).
        labels: Human labels (:func:`read_labels`); None leaves the human out.
        rubric: The rubric to keep.
        rater: Verdict column whose values become raters (``model``, ``variant`` or ``run``).

    Raises:
        ValueError: If the rubric has no verdicts.
    """
    chosen = verdicts[verdicts["rubric"] == rubric]
    if chosen.empty:
        present = sorted(set(verdicts["rubric"]))
        raise ValueError(f"no verdicts for rubric {rubric!r}; present: {present}")
    context = [c for c in CONTEXT_COLUMNS if c in chosen.columns]
    judged = pd.DataFrame(
        {
            "item": chosen["item_id"].astype(str),
            "rater": chosen[rater].astype(str),
            "score": chosen["score"].astype(float),
            "status": chosen["status"].astype(str),
            "run": chosen["run"],
            "variant": chosen["variant"].astype(str),
            **{c: chosen[c] for c in context},
        }
    )
    if labels is None:
        return judged.reset_index(drop=True)
    human = labels[labels["rubric"] == rubric]
    first = chosen.drop_duplicates("item_id").set_index("item_id")
    rows = pd.DataFrame(
        {
            "item": human["item_id"].astype(str),
            "rater": HUMAN,
            "score": human["score"].astype(float),
            "status": Status.OK.value,
            "run": pd.NA,
            "variant": pd.NA,
        }
    )
    for column in context:
        rows[column] = rows["item"].map(first[column]).to_numpy()
    return pd.concat([judged, rows], ignore_index=True)


def with_human_score(long: pd.DataFrame) -> pd.DataFrame:
    """The judges' rows of a :func:`rater_table`, each with the human's score as ``human_score``.

    Items the human did not label get an empty ``human_score``.
    """
    human = long[long["rater"] == HUMAN].drop_duplicates("item").set_index("item")["score"]
    judged = long[long["rater"] != HUMAN].copy()
    judged["human_score"] = judged["item"].map(human).astype(float)
    return judged.reset_index(drop=True)


def shared_scored_items(
    long: pd.DataFrame, raters: Sequence[object], *, rater_col: str = "rater"
) -> int:
    """Count the items that every one of ``raters`` scored (status ``ok`` with a score).

    The analysis notebooks skip, and say so, a comparison with fewer than two such items: a
    kappa or a bootstrap over nothing is not an estimate.
    """
    usable = long[(long["status"] == Status.OK.value) & long["score"].notna()]
    items = None
    for rater in raters:
        scored = set(usable.loc[usable[rater_col].astype(str) == str(rater), "item"])
        items = scored if items is None else items & scored
    return len(items or ())
