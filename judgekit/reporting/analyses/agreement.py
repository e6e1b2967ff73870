"""Report step 02: each judge against the human labels, per rubric x judge x variant x run.

Writes the kappa family (unweighted, linear, quadratic; with intervals), the quadratic kappa
with whole questions resampled (when the study names its questions), exact and within-one
agreement, the confusion with the human, the quadratic kappa per answering model, seed 004's
validation protocol, and per rubric the agreement between human raters and the items they
scored differently. Unscored verdicts are dropped from the pairs and counted next to every
estimate. The lines say what was compared, each figure's note, and whether the judging still
matches the calibration record notebook 08 wrote.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import pandas as pd

from judgekit.data.tidy import HUMAN, VERDICT_KEYS, rater_table, shared_scored_items
from judgekit.labels import (
    calibration_changes,
    describe_calibration,
    inter_human_agreement,
    prompt_hash,
    read_calibration,
    rubric_version,
)
from judgekit.labels.table import describe_human_labels, label_conflicts
from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns
from judgekit.stats.agreement import Weights, agreement_rates, cohen_kappa
from judgekit.stats.confusion import confusion_table
from judgekit.stats.protocol import seed004_report
from judgekit.study.folder import Study, figure_notes
from judgekit.types import UsageError

KEYS = ["rubric", "judge", "variant", "run"]  # one comparison with the human per combination
KAPPA_WEIGHTS: dict[str, Weights] = {
    "unweighted": None,
    "linear": "linear",
    "quadratic": "quadratic",
}


def _frame(rows: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows as one table (an empty one when there are none)."""
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def _pages(name: str, pages: list[Any]) -> dict[str, Any]:
    """A figure's pages by file stem, named as :func:`judgekit.plots.save_pages` names them."""
    if len(pages) == 1:
        return {name: pages[0]}
    return {f"{name}_p{number}": page for number, page in enumerate(pages, start=1)}


@step("02_human_agreement")
def agreement_analysis(
    study: Study,
    *,
    repeats: Study | None = None,
    variant: str = "base",
    run: int = 1,
    ci_method: Literal["analytic", "percentile", "bca"] = "bca",
    n_boot: int = 2000,
    seed: int = 0,
    threshold: float = 0.8,
) -> Analysis:
    """How far each judge agrees with the study's human labels.

    Args:
        study: The loaded study (its ``labels`` are the human the judges are compared with).
        repeats: A study holding repeated runs for seed 004's consistency check (None: none).
        variant: The prompt variant compared with the human (empty: every variant judged).
        run: The run compared with the human (0: every run judged).
        ci_method: The kappa interval: ``analytic``, ``percentile`` or ``bca``.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.
        threshold: Seed 004's agreement gate for the quadratic weighted kappa.

    Returns:
        The tables ``kappa_family``, ``kappa_quadratic_clustered``, ``agreement_rates``,
        ``confusion``, ``kappa_by_answer_model``, ``seed004_report`` and, per rubric,
        ``inter_human_RUBRIC`` (two raters or more) and ``label_conflicts_RUBRIC`` (any);
        the figures ``agreement_kappa_forest`` and ``agreement_confusion`` (its pages).

    Raises:
        UsageError: When no judged rubric has human labels, or no verdict has the variant and
            run asked for.
    """
    from judgekit import plots

    result = Analysis("02_human_agreement")
    verdicts, labels = study.verdicts, study.labels
    rubrics = [r for r in pd.unique(verdicts["rubric"]) if (labels["rubric"] == r).any()]
    if not rubrics:
        raise UsageError("no rubric of the judgments table has human labels")
    judges = list(pd.unique(verdicts["judge"]))
    chosen = selected(verdicts[verdicts["rubric"].isin(rubrics)], variant, run)
    result.say(f"rubrics with human labels: {rubrics}; judges: {judges}")
    result.say(f"human labels compared with the judges: {study.labels_source or 'none'}")
    result.say(f"every human label of the study: {describe_human_labels(study.human)}")

    # each combination's long table: its judge's verdicts and the human's labels of the rubric
    long, keys = {}, {}
    for combination, rows in combinations(chosen, KEYS):
        name = label(combination)
        keys[name] = combination
        long[name] = rater_table(rows, labels, rubric=combination["rubric"], rater="judge")
    scales = {r: study.rubric(r).scale for r in rubrics}
    # a judge sharing fewer than two scored items with the human cannot be compared
    pairs = [n for n in long if shared_scored_items(long[n], [keys[n]["judge"], HUMAN]) >= 2]
    for name in [n for n in long if n not in pairs]:
        result.say(f"skipped {name}: fewer than two items scored by judge and human")
    result.say(f"compared with the human: {pairs}")
    interval = CI(ci_method, n_boot=n_boot, seed=seed)

    def kappa(n: str, rows: pd.DataFrame, weights: Weights, ci: CI, **more: Any) -> pd.DataFrame:
        judge, scale = keys[n]["judge"], scales[keys[n]["rubric"]]
        return cohen_kappa(rows, judge, HUMAN, scale=scale, weights=weights, ci=ci, **more)

    kappas = _frame([
        kappa(n, long[n], weights, interval).assign(**keys[n], kappa=weighting)
        for n in pairs
        for weighting, weights in KAPPA_WEIGHTS.items()
    ])  # fmt: skip
    result.tables["kappa_family"] = kappas.assign(human_labels=study.labels_source)
    result.lines += figure_notes(kappas, [*KEYS, "kappa"])
    if pairs:  # what every row shares is said in the figure's title
        result.figures["agreement_kappa_forest"] = plots.plot_kappa_forest(
            kappas.rename(columns={"kappa": "weighting"}),
            label=[*KEYS, "weighting"],
            colour_by="weighting",
            xlabel="Cohen's kappa, judge vs human (95% CI)",
        )

    # answers to one question are alike: resample whole questions (percentile)
    by_question = Columns(cluster=study.cluster) if study.cluster else None
    clustered = _frame([
        kappa(n, long[n], "quadratic", replace(interval, method="percentile"),
              columns=by_question).assign(**keys[n])
        for n in pairs
    ] if by_question is not None else [])  # fmt: skip
    result.tables["kappa_quadratic_clustered"] = clustered
    if clustered.empty:
        result.say(
            "the study's items share no question: the intervals above treat items as independent"
        )
    else:
        result.say(f"design effect = clustered width / item-resampling width (cluster: "
                   f"{study.cluster})")  # fmt: skip

    result.tables["agreement_rates"] = _frame([
        agreement_rates(long[n], keys[n]["judge"], HUMAN, scale=scales[keys[n]["rubric"]])
        .assign(**keys[n])
        for n in pairs
    ])  # fmt: skip
    confusion = _frame([
        confusion_table(long[n], HUMAN, keys[n]["judge"], scale=scales[keys[n]["rubric"]])
        .assign(**keys[n], panel=n)
        for n in pairs
    ])  # fmt: skip
    result.tables["confusion"] = confusion
    if pairs:  # at most 9 in tall a page
        pages = plots.plot_confusion_pages(confusion, panel=KEYS)
        result.figures.update(_pages("agreement_confusion", pages))

    with_models = [n for n in pairs if "answer_model" in long[n].columns]
    if len(with_models) < len(pairs):
        result.say("skipped agreement per answering model where the items file has no Model "
                   "column: it names the model that wrote each answer")  # fmt: skip
    by_model = _frame([
        kappa(n, subset, "quadratic", interval).assign(**keys[n], answer_model=model)
        for n in with_models
        for model, subset in long[n].groupby("answer_model")
        if shared_scored_items(subset, [keys[n]["judge"], HUMAN]) >= 2
    ])  # fmt: skip
    result.tables["kappa_by_answer_model"] = by_model
    for rubric in dict.fromkeys(keys[n]["rubric"] for n in with_models):
        human_rows = rater_table(chosen, labels, rubric=rubric, rater="judge")
        human_rows = human_rows[human_rows["rater"] == HUMAN]
        per_model = human_rows.groupby("answer_model")["item"].nunique()
        result.say(
            f"{rubric}: {len(per_model)} answering models with {per_model.min()}-"
            f"{per_model.max()} of the {human_rows['item'].nunique()} labelled items each"
        )
    result.lines += figure_notes(by_model, [*KEYS, "answer_model"])

    pairs_judged = list(dict.fromkeys((keys[n]["rubric"], keys[n]["judge"]) for n in pairs))
    result.tables["seed004_report"] = _seed004(
        result, study, repeats, rubrics, pairs_judged, variant, threshold, interval
    )
    _between_people(result, study, interval)
    _calibration(result, study, variant)
    return result


def _seed004(
    result: Analysis,
    study: Study,
    repeats: Study | None,
    rubrics: list[str],
    pairs: list[tuple[str, str]],
    variant: str,
    threshold: float,
    interval: CI,
) -> pd.DataFrame:
    """Seed 004's protocol per rubric and judge; a line per rubric says what it had to go on."""
    protocol = study.verdicts
    if repeats is not None:  # the repeated runs may live in their own judgments table
        protocol = pd.concat([protocol, repeats.verdicts]).drop_duplicates(list(VERDICT_KEYS))
    # the protocol's base prompt: `variant`, else `base` when judged, else the first
    bases = {}
    for rubric in rubrics:
        judged = protocol[protocol["rubric"] == rubric]
        wordings_judged = list(pd.unique(judged["variant"]))
        base = variant or ("base" if "base" in wordings_judged else wordings_judged[0])
        bases[rubric] = base
        paraphrases = sorted(set(wordings_judged) - {base})
        runs_seen = judged.loc[judged["variant"] == base, "run"].nunique()
        wordings, n_pairs = len(paraphrases) + 1, len(paraphrases) * (len(paraphrases) + 1) // 2
        short = [f"{what} ({n})" for n, what in ((wordings, "wordings"), (runs_seen, "runs"))
                 if n < 3]  # fmt: skip
        result.say(
            f"{rubric}: {wordings} wording(s) ({base} + {paraphrases}, {n_pairs} pair(s)), "
            f"{runs_seen} run(s) of {base}"
            + (f"; fewer than the seed's three: {', '.join(short)}" if short else "")
        )
    return _frame([
        seed004_report(
            rater_table(protocol, study.labels, rubric=rubric, rater="judge"), judge=judge,
            human=HUMAN, scale=study.rubric(rubric).scale, kappa_threshold=threshold,
            ci=replace(interval, method="bca"), base_variant=bases[rubric],
        ).assign(rubric=rubric, judge=judge, variant=bases[rubric])
        for rubric, judge in pairs
    ])  # fmt: skip


def _between_people(result: Analysis, study: Study, interval: CI) -> None:
    """Per rubric, the human raters' agreement (two or more) and the items they differ on."""
    people = study.human
    for rubric in sorted(set(people["rubric"])):
        mine = people[people["rubric"] == rubric]
        between = inter_human_agreement(
            mine, study.rubric(rubric).scale.allowed, ci=replace(interval, method="bca")
        )
        if between.empty:
            result.say(f"{rubric}: one human rater ({describe_human_labels(mine)}), no "
                       "inter-human agreement")  # fmt: skip
        else:
            result.tables[f"inter_human_{rubric}"] = between
        conflicts = label_conflicts(mine)
        if len(conflicts):
            result.say(f"{rubric}: {len(conflicts)} item(s) scored differently by two raters:")
            result.tables[f"label_conflicts_{rubric}"] = conflicts


def _calibration(result: Analysis, study: Study, variant: str) -> None:
    """The calibration record notebook 08 wrote, and a warning for each way it no longer holds."""
    calibration = read_calibration(study.folder.root / "calibration.json")
    if calibration is None:
        result.say("no calibration record yet (notebook 08 writes one)")
        return
    result.say(describe_calibration(calibration))
    calibrated = study.rubric(calibration["rubric"])
    # the record names the judge's model; a report of every variant checks the prompt only
    models = study.verdicts[["judge", "model"]].drop_duplicates()
    for judge, model in models.itertuples(index=False):
        current = {
            "judge_model": model,
            **({"variant": variant} if variant else {}),
            "rubric_version": rubric_version(calibrated),
            "prompt_hash": prompt_hash(calibrated, calibration["variant"]),
        }
        for change in calibration_changes(calibration, current):
            result.say(f"warning ({judge}): {change}")
