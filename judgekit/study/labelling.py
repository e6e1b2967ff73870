"""``judgekit label STUDY --labeller NAME``: label a study's items blind on a page of its own.

The first call plans what to label (:func:`study_plan`: a seeded sample covering the judge's
scale, balanced over the answering models, sized by the planner) and keeps the plan, with its
strata and the judge's scores, in ``STUDY/labelling_plan.csv``: every labeller of the study
labels the same items (so their agreement can be measured), in the same shuffled order (so
the disputed items are not the first ones). The page never sees the plan: it gets the items'
rubric-facing texts only (:mod:`judgekit.labels.session`). Labels go to ``STUDY/labels.csv``
at every key press; the same command resumes, and ``judgekit report STUDY`` analyses them.
"""

from __future__ import annotations

import sys
import time
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from judgekit.config import stop_on_signals
from judgekit.data import read_frame, read_table, write_table
from judgekit.labels.page import LabellingPage
from judgekit.labels.select import default_label_count, select_for_labelling
from judgekit.labels.session import LabellingSession
from judgekit.study.folder import Study, load_study
from judgekit.types import UsageError

#: Columns of ``labelling_plan.csv``, in labelling order.
PLAN_COLUMNS: tuple[str, ...] = (
    "order", "item_id", "answer_model", "rubric", "judge", "variant", "run", "judge_score",
    "stratum", "reason", "seed",
)  # fmt: skip


@dataclass(frozen=True)
class LabelOptions:
    """What ``judgekit label`` was asked for (the plan's settings matter on the first call)."""

    labeller: str
    n: int | None = None
    seed: int = 0
    show_model: bool = False
    port: int = 0
    open_browser: bool = True
    rubric: str = ""  # the rubric labelled; empty: the study's only kind (direct or pairwise)


def study_items(study: Study, items_path: str | Path = "") -> pd.DataFrame:
    """The study's items: its ``items.csv`` (or ``items_path``), read like any items file.

    Raises:
        UsageError: If the file is missing.
    """
    source = Path(items_path) if items_path else study.folder.items
    if not source.is_file():
        raise UsageError(f"{source}: no items file; judge with `judgekit judge --study`")
    items = read_table(source).frame.reset_index(drop=True)
    items["ID"] = items["ID"].astype(str)
    return items


def labelling_items(study: Study, plan: pd.DataFrame, items_path: str | Path = "") -> pd.DataFrame:
    """The planned items in labelling order (see :func:`study_items`).

    Raises:
        UsageError: If the items file is missing or lacks a planned item.
    """
    items = study_items(study, items_path)
    source = items_path or study.folder.items
    missing = sorted(set(plan["item_id"]) - set(items["ID"]))
    if missing:
        raise UsageError(f"{source}: planned items missing: {', '.join(missing[:5])}")
    return items.set_index("ID").loc[plan["item_id"]].reset_index()


def study_plan(
    study: Study, n: int | None = None, seed: int = 0, rubric: str = ""
) -> tuple[pd.DataFrame, str]:
    """The study's labelling plan, made and kept at the first call; and one line about it.

    Args:
        study: The study.
        n: Items to label (default: :func:`~judgekit.labels.select.default_label_count`).
        seed: Seed of the sample and its order.
        rubric: The rubric whose scores are labelled (default: the first judged).

    Raises:
        UsageError: If ``n`` differs from the kept plan's size, or cannot be sampled.
    """
    path = study.folder.labelling_plan
    if path.is_file():
        plan = read_frame(path, required=PLAN_COLUMNS, what="labelling plan")
        plan["item_id"] = plan["item_id"].astype(str)
        if n is not None and n != len(plan):
            raise UsageError(
                f"--n {n}: {path} already plans {len(plan)} items (every labeller labels the "
                "same ones); move that file away to plan again"
            )
        if rubric and rubric not in set(plan["rubric"]):
            raise UsageError(f"{path} plans labels of {plan['rubric'].iloc[0]}, not {rubric}")
        return plan, f"{len(plan)} items planned in {path.name}"
    rubric_name = rubric or str(study.verdicts["rubric"].iloc[0])
    verdicts = study.verdicts[study.verdicts["rubric"] == rubric_name]
    judge = str(verdicts["model"].iloc[0])
    variant = str(verdicts["variant"].iloc[0])
    run = int(verdicts["run"].min())
    mine = verdicts[(verdicts["rubric"] == rubric_name) & (verdicts["model"] == judge)]
    reference = mine[(mine["variant"] == variant) & (mine["run"] == run) & (mine["status"] == "ok")]
    models = {}
    if "answer_model" in mine.columns:
        known = mine.dropna(subset=["answer_model"]).drop_duplicates("item_id")
        models = dict(
            zip(known["item_id"].astype(str), known["answer_model"].astype(str), strict=True)
        )
    levels = study.rubric(rubric_name).scale.allowed
    why = ""
    if n is None:
        n, why = default_label_count(
            reference["score"].astype(float).to_numpy(), levels, len(set(models.values())),
            seed=seed,
        )  # fmt: skip
    chosen = select_for_labelling(
        mine, n, seed=seed, levels=levels, groups=models, variant=variant, run=run,
        balance_groups=bool(models),
    ).items  # fmt: skip
    order = np.random.default_rng(seed).permutation(len(chosen))  # disputed ones not first
    plan = chosen.iloc[order].reset_index(drop=True)
    plan = plan.assign(
        order=range(1, len(plan) + 1),
        answer_model=plan["item_id"].map(models).fillna(""),
        rubric=rubric_name, judge=judge, variant=variant, run=run, seed=seed,
    )[list(PLAN_COLUMNS)]  # fmt: skip
    write_table(plan, path)
    return plan, f"{why or f'{n} labels'}; plan kept in {path.name}"


def pair_plan(
    study: Study, n: int | None = None, seed: int = 0, rubric: str = ""
) -> tuple[pd.DataFrame, str]:
    """A pairwise study's labelling plan: every pair (or a seeded sample of ``n``), shuffled.

    Kept in ``labelling_plan.csv`` like a direct plan, so every labeller labels the same pairs
    in the same order; the left/right order of the answers is each labeller's own
    (:func:`~judgekit.labels.pair_session.left_is_b`).

    Raises:
        UsageError: If ``n`` differs from the kept plan's size or exceeds the pairs.
    """
    path = study.folder.labelling_plan
    if path.is_file():
        return study_plan(study, n, seed, rubric)  # the kept plan, checked the same way
    rubric = rubric or study.pairwise_rubrics()[0]
    pairs = sorted(set(study.comparisons(rubric)["pair_id"]))
    if n is not None and not 0 < n <= len(pairs):
        raise UsageError(f"--n {n}: the study has {len(pairs)} pairs to label")
    order = np.random.default_rng(seed).permutation(len(pairs))[: n or len(pairs)]
    chosen = [pairs[k] for k in order]
    plan = pd.DataFrame({
        "order": range(1, len(chosen) + 1), "item_id": chosen, "answer_model": "",
        "rubric": rubric, "judge": "", "variant": "", "run": 0, "judge_score": float("nan"),
        "stratum": "pair", "reason": "seeded sample of pairs", "seed": seed,
    })[list(PLAN_COLUMNS)]  # fmt: skip
    write_table(plan, path)
    return plan, f"{len(plan)} pairs; plan kept in {path.name}"


def label_session(study: Study, options: LabelOptions) -> tuple[LabellingSession, str]:
    """The labeller's session on the study's plan, and the line describing the plan."""
    name = _labelled_rubric(study, options.rubric)
    if study.is_pairwise(name):
        from judgekit.labels.pair_session import PairLabellingSession

        if options.show_model:
            raise UsageError("--show-model: pairwise labels are blind to the models; leave it out")
        plan, about = pair_plan(study, options.n, options.seed, name)
        pairs = labelling_items(study, plan)
        rubric = study.rubric(str(plan["rubric"].iloc[0]))
        pair_session = PairLabellingSession(
            pairs, rubric, study.folder.long_labels, options.labeller, seed=options.seed
        )
        return pair_session, about
    plan, about = study_plan(study, options.n, options.seed, name)
    ordered = labelling_items(study, plan)
    shown = ("Model",) if options.show_model and "Model" in ordered.columns else ()
    rubric = study.rubric(str(plan["rubric"].iloc[0]))
    session = LabellingSession(
        ordered, rubric, study.folder.long_labels, options.labeller, show_columns=shown
    )
    return session, about


def _labelled_rubric(study: Study, rubric: str) -> str:
    """The rubric to label: ``rubric``, the kept plan's, or the study's only kind's first.

    Raises:
        UsageError: For a rubric the study did not judge, or none named in a study that judged
            both direct and pairwise rubrics.
    """
    judged = sorted(set(study.verdicts["rubric"].astype(str)))
    if rubric and rubric not in judged:
        raise UsageError(f"--rubric {rubric}: the study judged {', '.join(judged)}")
    path = study.folder.labelling_plan
    if path.is_file():  # the kept plan names its rubric; study_plan checks --rubric against it
        kept = read_frame(path, required=PLAN_COLUMNS, what="labelling plan")
        return rubric or str(kept["rubric"].iloc[0])
    pairwise = study.pairwise_rubrics()
    if rubric or not pairwise:
        return rubric or str(study.verdicts["rubric"].iloc[0])
    if set(judged) - set(pairwise):
        raise UsageError(
            f"the study judged direct and pairwise rubrics ({', '.join(judged)}): say which to "
            "label with --rubric"
        )
    return pairwise[0]


def run_label(folder: str | Path, options: LabelOptions, err: TextIO | None = None) -> None:
    """Serve the labelling page for ``folder`` until Ctrl-C; say where the labels went."""
    err = err or sys.stderr
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{root}: no such study folder; create one with `judgekit judge --study`")
    study = load_study(root.resolve())
    session, about = label_session(study, options)
    page = LabellingPage(session, f"Labelling {root.resolve().name}", options.port).start()
    counts = session.counts()
    print(
        f"labelling {root} as {session.labeller}: {about}; {counts['labelled']} labelled so far",
        file=err,
    )
    print(f"open {page.url}  (labels go to {session.path}; Ctrl-C stops)", file=err, flush=True)
    if options.open_browser:
        webbrowser.open(page.url)
    try:
        with stop_on_signals():  # Ctrl-C stops it even when started with SIGINT ignored
            while True:
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        page.close()
    counts = session.counts()
    print(
        f"stopped: {counts['labelled']} of {len(session.ids)} labelled by {session.labeller}, "
        f"{counts['skipped']} skipped; the same command resumes; `judgekit report {root}` "
        "analyses the labels",
        file=err,
    )
