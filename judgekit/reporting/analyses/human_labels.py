"""Report step 08: the labelling plan, every human label, the judges against each rater, PPI.

Plans (and keeps) which judged items people label and how wide the judge-versus-human kappa
interval will be, then reads every human label of the rubric (:attr:`Study.human`): the items
two raters scored differently, the raters against each other, every judge of the panel against
every rater, the items where the planned judge and the reference rater differ most, each
answering model's mean score corrected by prediction-powered inference, and a check of PPI's
coverage on data whose every human score is known. :func:`calibration` builds the record that
binds the agreement figures to the judge, rubric and prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.stats import CI
from judgekit.study.folder import Study
from judgekit.types import UsageError

COVERAGE_CHECKS = ("riddles", "study", "none")


@step("08_human_labels")
def human_labels_analysis(
    study: Study,
    *,
    dataset_path: str = "",
    rubric_name: str = "",
    n_labels: int = 0,
    seed: int = 0,
    expected_kappa: float = 0.8,
    n_boot: int = 1000,
    coverage_check: str = "riddles",
    scores_path: str = "",
    ppi_labels: int = 30,
    n_subsamples: int = 200,
) -> Analysis:
    """The human labels of one rubric, against each other and against every judge.

    Args:
        study: The loaded study (with the judge's replies, for the disagreement review).
        dataset_path: The judged items (empty: the study's ``items.csv``).
        rubric_name: The rubric whose scores are labelled (empty: the first judged).
        n_labels: Items to plan (0: as planned, at least 5 per answering model).
        seed: Seed of the sample, its order and every resampling step.
        expected_kappa: The agreement the planner assumes.
        n_boot: Bootstrap replicates of the kappa intervals.
        coverage_check: PPI coverage check on ``riddles`` (published), ``study`` or ``none``.
        scores_path: Riddles v2 scores for the check (empty: ``config.DATA_DIR``'s).
        ppi_labels: Labels per subsample in the check.
        n_subsamples: Subsamples in the check.

    Returns:
        Tables ``planner``, ``label_conflicts``, ``inter_human_agreement``,
        ``judge_vs_human``, ``disagreements``, ``corrected_means`` and (when a check ran)
        ``ppi_coverage``; figures ``labels_planner`` and ``labels_ppi_<coverage_check>``.

    Raises:
        UsageError: If ``coverage_check`` is unknown or the rubric has no scored label.
    """
    from judgekit import plots
    from judgekit.labels import disagreements, inter_human_agreement, rubric_version
    from judgekit.labels.table import describe_human_labels, label_conflicts
    from judgekit.stats import corrected_means, plan_kappa_halfwidth
    from judgekit.study.folder import figure_notes
    from judgekit.study.labelling import study_items, study_plan

    if coverage_check not in COVERAGE_CHECKS:
        raise UsageError(f"coverage_check {coverage_check!r}: use riddles, study or none")
    result = Analysis("08_human_labels")
    plan, about = study_plan(study, n_labels or None, seed, rubric_name)
    rubric = study.rubric(str(plan["rubric"].iloc[0]))
    levels = rubric.scale.allowed
    result.say(f"{about}; rubric {rubric.name} {levels}")  # the plan itself: not blind
    precision = plan_kappa_halfwidth(
        plan["judge_score"].astype(float).to_numpy(),
        levels,
        sorted({10, 20, 30, 50, 100, len(plan)}),
        expected_kappa=expected_kappa,
        seed=seed,
    )
    result.tables["planner"] = precision
    result.figures["labels_planner"] = plots.plot_planner(precision, chosen=len(plan))

    # every human label, and where raters differ
    human = study.human[study.human["rubric"] == rubric.name]
    result.say(f"human labels of {rubric.name}: {describe_human_labels(human)}")
    stale = sorted(set(human["rubric_version"].dropna()) - {rubric_version(rubric), ""})
    if stale:
        result.say(f"warning: some labels were made with another version of the rubric: {stale}")
    scored = human[human["status"] == "ok"]
    if scored.empty:
        raise UsageError(
            f"no scored labels for {rubric.name} in {study.folder.root} yet: label with "
            f"`judgekit label {study.folder.root} --labeller NAME`, then run this again"
        )
    conflicts = label_conflicts(human)
    result.tables["label_conflicts"] = conflicts
    result.say(
        "no item was scored differently by two raters" if conflicts.empty else
        f"{len(conflicts)} item(s) scored differently by two raters (none is resolved):"
    )  # fmt: skip
    interval = CI("bca", n_boot=n_boot, seed=seed)  # every kappa interval here
    between_people = inter_human_agreement(human, levels, ci=interval)
    if between_people.empty:
        result.say("one rater only: no inter-human agreement (the ceiling for the judge) yet")
    result.tables["inter_human_agreement"] = between_people

    # every judge (by its label in the study) on the plan's variant and run, with each rater
    plan_model, variant, run = (
        str(plan["judge"].iloc[0]), str(plan["variant"].iloc[0]), int(plan["run"].iloc[0])
    )  # fmt: skip
    judge_column = "judge" if "judge" in study.verdicts.columns else "model"
    rubric_verdicts = study.verdicts[study.verdicts["rubric"] == rubric.name]
    panel = [str(j) for j in pd.unique(rubric_verdicts[judge_column].astype(str))]
    # the planned judge (the plan names its model): the sample and PPI check are drawn for it
    mine = rubric_verdicts["model"] == plan_model
    judge = str(rubric_verdicts.loc[mine, judge_column].astype(str).iloc[0])
    result.say(f"judges of {rubric.name}: {', '.join(panel)} (planned with {judge})")

    def judge_rows(name: str) -> pd.DataFrame:
        """One judge's verdicts on the plan's variant and run."""
        rows = rubric_verdicts[rubric_verdicts[judge_column].astype(str) == name]
        return rows[(rows["variant"] == variant) & (rows["run"] == run)]

    raters = sorted(scored["labeller"].unique())
    judge_vs_human = pd.concat(
        [
            _versus(judge_rows(j), scored[scored["labeller"] == r], levels, interval).assign(
                statistic="kappa (quadratic)", rater_a=j, rater_b=r, judge=j, human_labels=r
            )
            for j in panel
            for r in raters
        ],
        ignore_index=True,
    )
    result.tables["judge_vs_human"] = judge_vs_human
    result.lines += figure_notes(judge_vs_human, ["judge", "statistic", "rater_b"])
    chosen = judge_rows(judge)

    # where the planned judge and the reference rater differ most, every variant and run
    reference = study.labels[study.labels["rubric"] == rubric.name]
    result.say(f"reference rater: {study.labels_source}")
    items = study_items(study, dataset_path)
    context = items[[c for c in ("ID", "Question", "Answer") if c in items.columns]].rename(
        columns={"ID": "item_id"}
    )
    verdicts = rubric_verdicts[rubric_verdicts[judge_column].astype(str) == judge]
    review = disagreements(
        verdicts, reference.assign(labeller="reference", status="ok"), context=context, top=10
    )
    result.tables["disagreements"] = review.assign(human_labels=study.labels_source)

    # each model's mean score, corrected by the PPI labels, for every judge of the panel
    tool = scored[scored["source"] == "labelling tool"]
    if len(tool):
        ppi_rater = sorted(tool["labeller"])[0]
        ppi_scores = tool[tool["labeller"] == ppi_rater].set_index("item_id")["score"]
    else:  # no one has labelled yet: the reference rater's labels of the planned items
        ppi_rater = f"{study.labels_source.split(' (')[0]} on the {len(plan)} planned items"
        planned = reference[reference["item_id"].isin(plan["item_id"])]
        ppi_scores = planned.set_index("item_id")["score"]
    result.say(f"labels used for PPI: {ppi_rater}")
    scale = (min(levels), max(levels))  # intervals past the scale are clipped, the note says so
    means = pd.concat(
        [
            corrected_means(_ppi_frame(judge_rows(j), ppi_scores), scale=scale).assign(judge=j)
            for j in panel
        ],
        ignore_index=True,
    ).assign(human_labels=ppi_rater)
    result.tables["corrected_means"] = means
    result.lines += figure_notes(means, ["judge", "model", "estimator"])  # why one is missing

    if coverage_check == "riddles":
        checked = _riddles_check(scores_path)
    elif coverage_check == "study":
        full = reference.set_index("item_id")["score"]
        judged = _ppi_frame(chosen, ppi_scores)
        checked = {judge: judged.assign(human_score=chosen["item_id"].map(full)).dropna()}
    else:
        checked = {}
    _coverage(result, checked, coverage_check, ppi_labels, n_subsamples, seed)
    return result


def _versus(
    rows: pd.DataFrame, theirs: pd.DataFrame, levels: Sequence[float], interval: CI
) -> pd.DataFrame:
    """Quadratic kappa of one judge's verdicts against one human rater's scored labels."""
    from judgekit.stats.agreement import cohen_kappa

    long = pd.concat(
        [
            pd.DataFrame(
                {"item": rows["item_id"], "rater": "judge", "score": rows["score"],
                 "status": rows["status"]}
            ),
            pd.DataFrame(
                {"item": theirs["item_id"], "rater": "human", "score": theirs["score"],
                 "status": "ok"}
            ),
        ],
        ignore_index=True,
    )  # fmt: skip
    return cohen_kappa(long, "judge", "human", scale=levels, weights="quadratic", ci=interval)


def _ppi_frame(rows: pd.DataFrame, ppi_scores: pd.Series) -> pd.DataFrame:
    """One judge's scores per answering model, with the PPI labels where there are any."""
    has_models = "answer_model" in rows.columns
    models = rows["answer_model"].fillna("").astype(str) if has_models else "all answers"
    return pd.DataFrame(
        {
            "model": models,
            "judge_score": rows["score"].astype(float),
            "human_score": rows["item_id"].map(ppi_scores),
        }
    )


def _riddles_check(scores_path: str) -> dict[str, pd.DataFrame]:
    """The published riddles study's four judges, each with the human's score of every answer."""
    from judgekit import config
    from judgekit.riddles import riddles_v2_wide

    wide = riddles_v2_wide(scores_path or config.DATA_DIR / "riddles_v2_scores.csv")
    return {
        name: pd.DataFrame(
            {
                "model": wide["model"],
                "judge_score": wide[f"accuracy_{name}"].astype(float),
                "human_score": wide["accuracy_Human"].astype(float),
            }
        )
        for name in ("Perplexity", "GPT", "Gemini", "Claude")
    }


def _coverage(
    result: Analysis,
    checked: dict[str, pd.DataFrame],
    coverage_check: str,
    ppi_labels: int,
    n_subsamples: int,
    seed: int,
) -> None:
    """How often PPI's interval from ``ppi_labels`` labels covers the mean of all of them."""
    from judgekit.plots import plot_ppi_study
    from judgekit.stats import coverage_summary, ppi_coverage

    enough = {j: d for j, d in checked.items() if len(d) >= 2 * ppi_labels}
    for name in sorted(set(checked) - set(enough)):
        result.say(
            f"coverage check skipped for {name}: fewer than {2 * ppi_labels} fully labelled items"
        )
    runs = {
        name: ppi_coverage(data, n_labels=ppi_labels, n_subsamples=n_subsamples, seed=seed)
        for name, data in enough.items()
    }
    if not runs:
        result.say("no coverage check run")
        return
    summary = pd.concat(
        [coverage_summary(c).assign(judge=j) for j, c in runs.items()], ignore_index=True
    )
    result.tables["ppi_coverage"] = summary
    pooled = {j: c[c["estimator"] == "ppi"]["covered"].mean() for j, c in runs.items()}
    result.say(
        "PPI coverage pooled over models: " + ", ".join(f"{j} {v:.3f}" for j, v in pooled.items())
    )
    example_judge = "Gemini" if "Gemini" in runs else next(iter(runs))
    example = runs[example_judge][runs[example_judge]["subsample"] == 0]
    result.figures[f"labels_ppi_{coverage_check}"] = plot_ppi_study(
        example, summary[summary["estimator"] == "ppi"]
    )


def calibration(
    study: Study, result: Analysis, *, rubric_name: str = "", seed: int = 0, endpoint: str = ""
) -> dict[str, Any]:
    """The calibration record of :func:`human_labels_analysis`'s agreement figures.

    Args:
        study: The study the analysis read.
        result: Its :func:`human_labels_analysis`.
        rubric_name: The analysis's ``rubric_name``.
        seed: The analysis's ``seed``.
        endpoint: The judge's base URL (never a key).

    Returns:
        The record (see :func:`judgekit.labels.calibration_record`), bound to the planned
        judge's model, the rubric's version and the plan's variant.
    """
    from judgekit.labels import calibration_record
    from judgekit.study.labelling import study_plan

    plan, _ = study_plan(study, None, seed, rubric_name)  # the kept plan
    rubric = study.rubric(str(plan["rubric"].iloc[0]))
    human = study.human[study.human["rubric"] == rubric.name]
    agreement = [result.tables["judge_vs_human"], result.tables["inter_human_agreement"]]
    return calibration_record(
        judge_model=str(plan["judge"].iloc[0]),
        endpoint=endpoint,
        rubric=rubric,
        variant=str(plan["variant"].iloc[0]),
        labels=human[human["status"] == "ok"],
        agreement=pd.concat(agreement, ignore_index=True),
    )
