"""The pairwise contract: pair items, human pairwise labels, comparisons and per-pair outcomes.

A pairwise *item* holds a prompt and two answers with who wrote each (``Answer_A``/``Answer_B``,
``Model_A``/``Model_B``, an optional ``Ref_Answer``). A judge sees it in one or both *orders*:
``"ab"`` shows answer A first, ``"ba"`` shows answer B first. The *comparison long table* has one
row per pair x judge x variant x run x order (:data:`COMPARISON_COLUMNS`); its ``verdict`` is
always in terms of the ORIGINAL A/B, after un-swapping (:func:`unswap`), and is empty unless
``status`` is ``"ok"``.

Across the two orders a pair has one :class:`PairOutcome` (:func:`pair_outcomes`); none is
collapsed into another. Conventions of the field are named views over the outcomes, e.g.
MT-Bench's "inconsistent counts as tie" (:func:`view_inconsistent_as_tie`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.columns import alias_key, is_empty, row_label
from judgekit.data.errors import DataError
from judgekit.data.tables import read_table
from judgekit.types import Item

# --- the comparison long table ----------------------------------------------------------------

PAIR_ID = "pair_id"
JUDGE = "judge"
VARIANT = "variant"
RUN = "run"
ORDER = "order"  # "ab": answer A shown first; "ba": answer B shown first
VERDICT = "verdict"  # "a" / "b" / "tie" in the ORIGINAL A/B; "" unless status == "ok"
STATUS = "status"  # a types.Status value ("ok", "unparseable", "inconsistent", ...)
REASON = "reason"  # why a verdict is missing (or the judge's own reason)
MODEL_A = "model_a"
MODEL_B = "model_b"
CLUSTER = "cluster"  # optional: the prompt/question id a pair belongs to

#: Columns of a comparison long table, in order (``cluster`` may be absent).
COMPARISON_COLUMNS: tuple[str, ...] = (
    PAIR_ID, JUDGE, VARIANT, RUN, ORDER, VERDICT, STATUS, REASON, MODEL_A, MODEL_B, CLUSTER,
)  # fmt: skip

ORDERS: tuple[str, ...] = ("ab", "ba")
VERDICTS: tuple[str, ...] = ("a", "b", "tie")
_SWAPPED = {"a": "b", "b": "a", "tie": "tie"}


def unswap(verdict: str, order: str) -> str:
    """The verdict in the original A/B from the verdict about the answers as shown.

    ``verdict`` names the answer shown first (``"a"``) or second (``"b"``), or ``"tie"``.

    >>> unswap("a", "ba"), unswap("a", "ab"), unswap("tie", "ba")
    ('b', 'a', 'tie')
    """
    if verdict not in _SWAPPED or order not in ORDERS:
        raise ValueError(f"verdict {verdict!r} / order {order!r}: expected a/b/tie and ab/ba")
    return _SWAPPED[verdict] if order == "ba" else verdict


def verdict_from_preference(preference: float) -> str:
    """The verdict a signed preference stands for: > 0 is ``"a"``, < 0 ``"b"``, 0 ``"tie"``.

    The pairwise formats score a reply as a signed preference for the answer shown first
    (``[[A]]`` = 1, ``[[A>>B]]`` = 2, ``[[C]]`` = 0, ``[[B]]`` = -1).

    >>> verdict_from_preference(2.0), verdict_from_preference(-1.0), verdict_from_preference(0.0)
    ('a', 'b', 'tie')
    """
    return "a" if preference > 0 else "b" if preference < 0 else "tie"


def check_comparisons(frame: pd.DataFrame, what: str = "comparisons") -> None:
    """Refuse a comparison table without the contract's columns or with a bad value, in one line.

    Raises:
        DataError: Naming the missing columns, or the record and column of a bad value.
    """
    missing = [c for c in COMPARISON_COLUMNS if c != CLUSTER and c not in frame.columns]
    if missing:
        raise DataError(what, f"missing column(s) {', '.join(missing)}")
    checks = ((ORDER, ORDERS), (VERDICT, (*VERDICTS, "")))
    for column, allowed in checks:
        bad = ~frame[column].fillna("").astype(str).isin(allowed)
        if bad.any():
            position = int(bad.to_numpy().argmax())
            value = frame[column].iloc[position]
            raise DataError(
                what, f"{value!r} is not one of {', '.join(map(repr, allowed))}",
                row=row_label(frame, position), column=column,
            )  # fmt: skip
    ok = frame[STATUS].astype(str) == "ok"
    has_verdict = frame[VERDICT].fillna("").astype(str) != ""
    if (ok != has_verdict).any():
        position = int((ok != has_verdict).to_numpy().argmax())
        raise DataError(
            what, "a verdict is present if and only if the status is 'ok'",
            row=row_label(frame, position), column=VERDICT,
        )  # fmt: skip


# --- per-pair outcomes across the two orders ---------------------------------------------------


class PairOutcome(StrEnum):
    """What a pair's two orders say together. Never collapsed; views name their conventions."""

    CONSISTENT_WIN = "consistent_win"  # both orders name the same answer
    CONSISTENT_TIE = "consistent_tie"  # both orders say tie
    INCONSISTENT = "inconsistent"  # the verdict changes when the order is swapped
    ONE_UNPARSED = "one_unparsed"  # one order has a verdict, the other none
    BOTH_UNPARSED = "both_unparsed"  # neither order has a verdict
    ONE_ORDER = "one_order"  # judged in a single order by design (--orders ab / random)


#: The keys one pair's judgment is identified by (one outcome each).
OUTCOME_KEYS: tuple[str, ...] = (PAIR_ID, JUDGE, VARIANT, RUN)


def pair_outcomes(comparisons: pd.DataFrame) -> pd.DataFrame:
    """One row per pair x judge x variant x run: both orders' verdicts and their outcome.

    Returns:
        The keys, ``model_a``, ``model_b`` (and ``cluster`` when present), ``verdict_ab``,
        ``verdict_ba`` ("" when missing or not parsed), ``outcome`` (a :class:`PairOutcome`)
        and ``winner`` (the consistent verdict, or the single order's; "" otherwise).

    Raises:
        DataError: For a table off the contract or an order judged twice for one key.

    >>> rows = [("p1", "ab", "a"), ("p1", "ba", "b"), ("p2", "ab", "a"), ("p2", "ba", "a")]
    >>> frame = pd.DataFrame(rows, columns=["pair_id", "order", "verdict"]).assign(
    ...     judge="j", variant="base", run=1, status="ok", reason="", model_a="x", model_b="y")
    >>> pair_outcomes(frame)[["pair_id", "outcome", "winner"]].values.tolist()
    [['p1', 'inconsistent', ''], ['p2', 'consistent_win', 'a']]
    """
    check_comparisons(comparisons)
    extra = [CLUSTER] if CLUSTER in comparisons.columns else []
    frame = comparisons.assign(**{VERDICT: comparisons[VERDICT].fillna("").astype(str)})
    duplicated = frame.duplicated([*OUTCOME_KEYS, ORDER])
    if duplicated.any():
        position = int(duplicated.to_numpy().argmax())
        raise DataError(
            "comparisons", "this pair, judge, variant, run and order appear twice",
            row=row_label(frame, position), column=ORDER,
        )  # fmt: skip
    wide = frame.pivot_table(
        index=[*OUTCOME_KEYS, MODEL_A, MODEL_B, *extra], columns=ORDER, values=VERDICT,
        aggfunc="first", fill_value=None, dropna=False, observed=True,
    )  # fmt: skip
    wide = wide.dropna(how="all").reset_index()
    for order in ORDERS:
        if order not in wide.columns:
            wide[order] = None
    judged_ab, judged_ba = wide["ab"].notna(), wide["ba"].notna()
    ab, ba = wide["ab"].fillna(""), wide["ba"].fillna("")
    outcome = [
        _outcome(x, y, both) for x, y, both in zip(ab, ba, judged_ab & judged_ba, strict=True)
    ]
    result = wide[[*OUTCOME_KEYS, MODEL_A, MODEL_B, *extra]].assign(
        verdict_ab=ab.to_numpy(), verdict_ba=ba.to_numpy(), outcome=outcome
    )
    winner = [
        x if o in (PairOutcome.CONSISTENT_WIN, PairOutcome.CONSISTENT_TIE) else (x or y)
        if o == PairOutcome.ONE_ORDER else ""
        for o, x, y in zip(outcome, ab, ba, strict=True)
    ]  # fmt: skip
    result.columns.name = None
    return result.assign(winner=winner).reset_index(drop=True)


def _outcome(ab: str, ba: str, both_judged: bool) -> PairOutcome:
    if not both_judged:
        return PairOutcome.ONE_ORDER if (ab or ba) else PairOutcome.BOTH_UNPARSED
    if not ab and not ba:
        return PairOutcome.BOTH_UNPARSED
    if not ab or not ba:
        return PairOutcome.ONE_UNPARSED
    if ab != ba:
        return PairOutcome.INCONSISTENT
    return PairOutcome.CONSISTENT_TIE if ab == "tie" else PairOutcome.CONSISTENT_WIN


def view_inconsistent_as_tie(outcomes: pd.DataFrame) -> pd.DataFrame:
    """MT-Bench's convention (FastChat): a pair whose verdict flips under swap counts as a tie.

    Pairs with an unparsed order keep an empty ``winner`` and are named in ``dropped_reason``
    (FastChat drops them silently); nothing else changes. The ``view`` column names the view.

    >>> frame = pd.DataFrame({"outcome": ["inconsistent", "one_unparsed"], "winner": ["", ""]})
    >>> view_inconsistent_as_tie(frame)[["winner", "dropped_reason"]].values.tolist()
    [['tie', ''], ['', 'one_unparsed']]
    """
    flips = outcomes["outcome"] == PairOutcome.INCONSISTENT
    winner = outcomes["winner"].where(~flips, "tie")
    dropped = outcomes["outcome"].where(winner == "", "").astype(str)
    return outcomes.assign(winner=winner, dropped_reason=dropped, view="inconsistent_as_tie")


def view_consistent_only(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Only pairs whose two orders agree keep a winner; the rest name their outcome as reason.

    >>> frame = pd.DataFrame({"outcome": ["inconsistent", "consistent_win"], "winner": ["", "a"]})
    >>> view_consistent_only(frame)["dropped_reason"].tolist()
    ['inconsistent', '']
    """
    kept = outcomes["outcome"].isin([PairOutcome.CONSISTENT_WIN, PairOutcome.CONSISTENT_TIE])
    winner = outcomes["winner"].where(kept, "")
    dropped = outcomes["outcome"].where(~kept, "").astype(str)
    return outcomes.assign(winner=winner, dropped_reason=dropped, view="consistent_only")


def games(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Every parsed order as one game (Arena-Hard's convention): model_a, model_b, winner.

    Unparsed orders are left out and counted in the frame's ``attrs["n_dropped"]``.
    """
    check_comparisons(comparisons)
    ok = comparisons[STATUS].astype(str) == "ok"
    kept = comparisons.loc[ok].rename(columns={VERDICT: "winner"})
    kept.attrs["n_dropped"] = int((~ok).sum())
    return kept.reset_index(drop=True)


# --- human pairwise labels ----------------------------------------------------------------------

#: Label spellings (case-folded) and the side they mean; PandaLM writes 1/2/0.
LABEL_VALUES: Mapping[str, str] = {
    "a": "a", "b": "b", "tie": "tie", "1": "a", "2": "b", "0": "tie",
    "modela": "a", "modelb": "b", "answera": "a", "answerb": "b", "draw": "tie",
    "tie(bothbad)": "tie", "tiebothbad": "tie", "c": "tie",
}  # fmt: skip


def read_pair_label(value: Any, *, source: str, row: int | str, column: str) -> str:
    """One human pairwise label as ``"a"``, ``"b"`` or ``"tie"``; empty cells are ``""``.

    Accepts A, B, tie (any case), model_a/model_b, C, and PandaLM's 1 / 2 / 0.

    Raises:
        DataError: ``FILE: row R, column 'winner': 'maybe' is not a side (A, B or tie; 1, 2, 0)``.

    >>> [read_pair_label(v, source="f", row=2, column="w") for v in ("A", "Tie", 2, "0", "")]
    ['a', 'tie', 'b', 'tie', '']
    """
    if is_empty(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    found = LABEL_VALUES.get(alias_key(str(value)))
    if found is None:
        raise DataError(
            source, f"{value!r} is not a side (A, B or tie; 1, 2, 0)", row=row, column=column
        )
    return found


def read_pair_labels(frame: pd.DataFrame, column: str, *, source: str) -> pd.Series:
    """A column of human pairwise labels as ``"a"``/``"b"``/``"tie"`` (``""`` when empty).

    Raises:
        DataError: For a missing column, or the first value that is neither side nor tie.
    """
    if column not in frame.columns:
        raise DataError(source, f"label column '{column}' is missing")
    values = [
        read_pair_label(v, source=source, row=row_label(frame, i), column=column)
        for i, v in enumerate(frame[column].tolist())
    ]
    return pd.Series(values, index=frame.index, name=column)


# --- pair item tables -----------------------------------------------------------------------------

ANSWER_A, ANSWER_B = "Answer_A", "Answer_B"
ITEM_MODEL_A, ITEM_MODEL_B = "Model_A", "Model_B"
PAIR_INPUT_COLUMNS: tuple[str, ...] = ("Question", ANSWER_A, ANSWER_B, "Ref_Answer")

#: Headers a user would write for the pair columns (matched with :func:`alias_key`).
PAIR_ALIASES: Mapping[str, str] = {
    **{a: ANSWER_A for a in ("answer a", "response a", "output a", "output 1", "response 1",
                              "answer 1", "completion a", "answer1", "output_1", "resp a")},
    **{b: ANSWER_B for b in ("answer b", "response b", "output b", "output 2", "response 2",
                              "answer 2", "completion b", "answer2", "output_2", "resp b")},
    **{a: ITEM_MODEL_A for a in ("model a", "model 1", "generator a", "generator 1", "system a")},
    **{b: ITEM_MODEL_B for b in ("model b", "model 2", "generator b", "generator 2", "system b")},
    **{q: "Question" for q in ("prompt", "instruction", "question", "query", "turn 1")},
    **{r: "Ref_Answer" for r in ("reference", "ref answer", "reference answer", "gold")},
}  # fmt: skip


def canonical_pair_frame(
    frame: pd.DataFrame, *, source: str, aliases: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Rename pair headers to the canonical ones and check every pair, before any call.

    Args:
        frame: The table (its index named ``row`` when it came from a file).
        source: File name for the messages.
        aliases: Extra ``{header: canonical}`` pairs; they win over :data:`PAIR_ALIASES`.

    Returns:
        A copy with ``Question``, ``Answer_A``, ``Answer_B`` (and ``Model_A``, ``Model_B``,
        ``Ref_Answer`` when present) under their canonical names.

    Raises:
        DataError: A missing answer or prompt column, an empty answer, the same answer in
            both slots, or two headers meaning one column; file, row and column named.
    """
    lookup = {alias_key(k): v for k, v in {**PAIR_ALIASES, **(aliases or {})}.items()}
    renamed: dict[str, str] = {}
    for header in frame.columns:
        target = lookup.get(alias_key(str(header)), str(header))
        if target in renamed.values():
            raise DataError(source, f"means '{target}', as another column does", column=header)
        renamed[str(header)] = target
    table = frame.rename(columns=renamed)
    for column in ("Question", ANSWER_A, ANSWER_B):
        if column not in table.columns:
            raise DataError(
                source, f"required column '{column}' is missing (columns found: "
                f"{', '.join(map(str, frame.columns))})",
            )  # fmt: skip
    position = {c: i for i, c in enumerate(table.columns)}
    for i, (a, b, q) in enumerate(
        zip(table[ANSWER_A], table[ANSWER_B], table["Question"], strict=True)
    ):
        where = {"row": row_label(table, i)}
        for column, value in (("Question", q), (ANSWER_A, a), (ANSWER_B, b)):
            if is_empty(value):
                raise DataError(
                    source, "empty cell in a required column",
                    column=column, position=position[column], **where,
                )  # fmt: skip
        if str(a).strip() == str(b).strip():
            raise DataError(
                source, "the same answer is in both slots (Answer_A); nothing to compare",
                column=ANSWER_B, position=position[ANSWER_B], **where,
            )  # fmt: skip
    return table


def read_pair_items(
    path: str | Path,
    *,
    aliases: Mapping[str, str] | None = None,
    label_column: str | None = None,
) -> pd.DataFrame:
    """Read a pairwise items file (CSV/TSV/XLSX) into a checked, canonical frame.

    Args:
        path: The file; it needs an ``ID`` column, a prompt and both answers.
        aliases: Extra ``{header: canonical}`` pairs.
        label_column: A column of human winners, read into ``label`` (``a``/``b``/``tie``).

    Raises:
        DataError: One line naming file, row and column for every mistake of the file.
    """
    table = read_table(path, id_column="ID")
    frame = canonical_pair_frame(table.frame, source=str(table.path), aliases=aliases)
    if label_column is not None:
        frame["label"] = read_pair_labels(frame, label_column, source=str(table.path))
    return frame


def pair_items(frame: pd.DataFrame, *, source: str, order: str = "ab") -> list[Item]:
    """Items of a checked pair frame, shown in ``order`` (``"ba"`` swaps the two answers).

    ``fields`` hold what the judge sees (``Question``, ``Answer_A``, ``Answer_B``, the reference
    when present); ``meta`` holds the models, the order and every other column.
    """
    if order not in ORDERS:
        raise ValueError(f"order {order!r}: expected one of {ORDERS}")
    shown = [c for c in PAIR_INPUT_COLUMNS if c in frame.columns]
    items = []
    for record in frame.reset_index(drop=frame.index.name != "row").to_dict("records"):
        fields = {c: "" if is_empty(record[c]) else str(record[c]) for c in shown}
        if order == "ba":
            fields[ANSWER_A], fields[ANSWER_B] = fields[ANSWER_B], fields[ANSWER_A]
        meta = {str(k): _plain(v) for k, v in record.items() if k not in shown and k != "ID"}
        items.append(Item(id=str(record["ID"]).strip(), fields=fields, meta={**meta,
                          "order": order, "source": source}))  # fmt: skip
    return items


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    item = getattr(value, "item", None)
    return item() if callable(item) else value


__all__ = [
    "COMPARISON_COLUMNS",
    "LABEL_VALUES",
    "ORDERS",
    "PAIR_ALIASES",
    "PAIR_INPUT_COLUMNS",
    "VERDICTS",
    "PairOutcome",
    "canonical_pair_frame",
    "check_comparisons",
    "games",
    "pair_items",
    "pair_outcomes",
    "read_pair_items",
    "read_pair_label",
    "read_pair_labels",
    "unswap",
    "verdict_from_preference",
    "view_consistent_only",
    "view_inconsistent_as_tie",
]  # fmt: skip
