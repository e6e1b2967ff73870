"""Verify's judgments check: every judge's judgments rebuilt from the store alone.

Each (rubric, judge) that ``study.json`` records is replayed through the engine
(:func:`judgekit.study.record.offline_replay`: 0 calls, none possible), one variant at a time,
on the items the bundled table holds for it, and the rebuilt rows are compared with the
bundled ones. A pairwise rubric replays each pair in the orders the table shows it in
(:mod:`judgekit.judging.pairs`), so ``both``, ``ab`` and ``random`` replay alike, and its
rows are compared on the pairwise contract too (``order``, ``verdict``, ``model_a/b``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data import Table, read_table
from judgekit.data.compare import Tolerance, table_differences
from judgekit.data.tidy import read_judgments
from judgekit.engine.session import OfflineStoreMissError
from judgekit.judging.pairs import PAIR_COLUMNS, PairPlan, is_pairwise, pair_study_items
from judgekit.rubrics import list_rubrics
from judgekit.sharing.export import stored_calls
from judgekit.sharing.provenance import explain_miss
from judgekit.study.folder import StudyFolder
from judgekit.study.items import study_items
from judgekit.study.own_prompt import load_any_rubric
from judgekit.study.record import offline_replay
from judgekit.types import JUDGMENT_COLUMNS, Item, Rubric


def judging_records(root: Path) -> list[dict[str, Any]]:
    """The per-judge records of ``study.json``: ``rubric``, ``judge`` and ``settings``.

    A study of layout 2 (``judged``: one entry per rubric and judge) lists them; a study of
    layout 1 (one judge, one rubric) has one, labelled by its model.
    """
    study = json.loads(StudyFolder(root).manifest.read_text(encoding="utf-8"))
    judged = study.get("judged")
    if isinstance(judged, list):
        return [entry for entry in judged if isinstance(entry, dict) and "settings" in entry]
    if "settings" in study:
        model = study["settings"]["client"]["model"]
        return [{"rubric": study["rubric"], "judge": model, "settings": study["settings"]}]
    return []


def recorded_rubric(root: Path, record: Mapping[str, Any]) -> Rubric:
    """The rubric a record was judged with: packaged, or the study's own copy of the user's."""
    kept = dict(record["settings"].get("rubric") or {})
    source = str(kept.get("source") or record["rubric"])
    packaged = {*list_rubrics(), *list_rubrics("pairwise")}
    spec = source if source in packaged else str(root / source)
    return load_any_rubric(spec, kept.get("column_map") or (), kept.get("format_reminder"))


def _items(table: Table, rubric: Rubric, rows: pd.DataFrame) -> tuple[list[Item], PairPlan | None]:
    """The engine items the bundled ``rows`` were judged on (a pairwise rubric: and its plan)."""
    judged = set(rows["item_id"].astype(str))
    ids = table.frame["ID"].astype(str).str.strip()
    mine = replace(table, frame=table.frame[ids.isin(judged)])  # a study may hold other items
    if not is_pairwise(rubric):
        items, _ = study_items(mine, rubric, label_column=None)
        return [i for i in items if i.id in judged], None
    items, _, _, _, plan, _ = pair_study_items(
        mine, rubric, None, orders="both", seed=0, no_labels=True
    )
    shown = set(rows["item_id"].astype(str) + "/" + rows["order"].astype(str))
    return [i for i in items if i.id in shown], plan


def check_judgments(root: Path, records: list[dict[str, Any]]) -> list[str]:
    """Rebuild every judge's judgments offline and compare them with the bundled table.

    Each (rubric, judge) is replayed one variant at a time, with that variant's runs and the
    items the table holds for it, so combinations judged by different commands replay as
    they were judged.
    """
    from judgekit.judging.pairs import pairwise_rows

    folder = StudyFolder(root)
    bundled = read_judgments(
        folder.judgments if folder.judgments.is_file() else folder.judgments_csv
    )
    who = "judge" if "judge" in bundled.columns else "model"
    calls = stored_calls(folder.store)
    study = json.loads(folder.manifest.read_text(encoding="utf-8"))
    imported = {  # judged elsewhere (`judgekit import`): no reply to rebuild them from
        str(j.get("label"))
        for j in study.get("judges") or []
        if isinstance(j, dict) and j.get("provider") == "imported"
    }
    covered = {
        (str(r["rubric"]), str(r.get("judge", r["settings"]["client"]["model"]))) for r in records
    }
    pairs = bundled[["rubric", who]].astype(str).drop_duplicates().itertuples(index=False)
    problems = [
        f"judgments ({rubric}, {judge}): study.json records no settings for this judge, so "
        "it cannot be rebuilt offline (judged by an older judgekit? judge it again into the "
        "study: the store replays every reply for free)"
        for rubric, judge in pairs
        if (rubric, judge) not in covered and judge not in imported
    ]
    for record in records:
        rubric = recorded_rubric(root, record)
        judge = str(record.get("judge", record["settings"]["client"]["model"]))
        mine = bundled[(bundled["rubric"] == rubric.name) & (bundled[who].astype(str) == judge)]
        # a study's items.csv holds every rubric's items: a pair's row has no Answer
        table = read_table(folder.items, required=rubric.required_columns, allow_empty=True)
        rebuilt = []
        for variant, rows in mine.groupby("variant", sort=False):
            items, plan = _items(table, rubric, rows)
            settings = json.loads(json.dumps(record["settings"]))
            settings["options"].update(variants=[variant], runs=int(rows["run"].max()))
            try:
                replayed = offline_replay(items, rubric, settings, folder.store)
            except OfflineStoreMissError as error:
                problems.append(explain_miss(error, calls))
                continue
            rebuilt.append(replayed if plan is None else pairwise_rows(replayed, plan))
        if not rebuilt:
            continue
        pairwise = [c for c in PAIR_COLUMNS if c in mine.columns and is_pairwise(rubric)]
        columns = [*(c for c in JUDGMENT_COLUMNS if c in bundled.columns), *pairwise]
        order = ["rubric", "variant", "model", "run", "attempt", "item_id", *pairwise[:1]]
        got = pd.concat(rebuilt)[columns].sort_values(order).reset_index(drop=True)
        want = mine[columns].sort_values(order).reset_index(drop=True)
        if len(got) != len(want):  # a variant that did not replay is named above
            got = got[got["variant"].isin(want["variant"])]
            want = want[want["variant"].isin(got["variant"])]
        for problem in table_differences(want.astype(str), got.astype(str), Tolerance()):
            problems.append(f"judgments ({rubric.name}, {judge}): {problem}")
    return problems
