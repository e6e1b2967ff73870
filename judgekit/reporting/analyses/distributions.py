"""Report step 05: how each judge uses the scale, and two bias probes against the human score.

Per rubric: the score distributions per answering model beside the human's (one figure each),
``score_coverage`` (the share of the scale each judge uses, its distribution tested against the
human's, one family of tests), ``length_bias`` (an OLS of the judge's score on the log answer
length at equal human score) and ``self_preference`` (a judge's extra score on its own model's
answers, naive and controlled for the human score). The bias probes need human labels; each
part that does not apply is one line.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgekit.data.tidy import HUMAN, rater_table, with_human_score
from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.reporting.combinations import each_with_human, selected
from judgekit.stats import Columns
from judgekit.stats.bias import BIAS_COLUMNS, length_bias, self_preference
from judgekit.stats.coverage import score_coverage
from judgekit.stats.significance import adjust_p
from judgekit.study.folder import Study, figure_notes

#: A regression needs a few scored answers; fewer are skipped, and said so.
MIN_SCORED = 3
#: The self-preference methods drawn, as the figure names them.
SHOWN = {"naive_welch": "naive", "ols_human_clustered": "controlled for human score"}


@step("05_distributions_and_bias")
def distributions_analysis(
    study: Study, *, run: int = 1, own_models: dict[str, str] | None = None
) -> Analysis:
    """Score distributions, scale coverage, length bias and self-preference of every rubric.

    Every table has a row per rubric, judge, prompt variant and run.

    Args:
        study: The loaded study (its direct rubrics: see :func:`judgekit.study.folder.open_report`).
        run: The run analysed; 0: every run judged.
        own_models: Judge -> answering model of its family (empty or None: the study settings'
            ``own_models``); self-preference is probed only for the judges it names.

    Returns:
        The tables ``score_coverage``, ``length_bias`` and ``self_preference`` (each written even
        when empty), the figures ``distributions_<rubric>`` and, when estimated,
        ``self_preference``, and the lines the notebook prints.
    """
    import matplotlib.pyplot as plt

    from judgekit import plots

    result = Analysis("05_distributions_and_bias")
    verdicts = selected(study.verdicts, run=run)
    rubrics = list(pd.unique(verdicts["rubric"]))
    long = {r: rater_table(verdicts, study.labels, rubric=r, rater="judge") for r in rubrics}
    # the comparisons and both bias probes need the human score
    with_human = [r for r in rubrics if (long[r]["rater"] == HUMAN).any()]
    for rubric in sorted(set(rubrics) - set(with_human)):
        result.say(
            f"skipped human comparison, length bias and self-preference for {rubric}: no human "
            "labels (--labels-column, or `judgekit label`); distributions and scale use only"
        )
    result.say(f"rubrics: {rubrics}; judges: {list(pd.unique(verdicts['judge']))}")
    several_runs = verdicts["run"].nunique() > 1  # then each panel names its run
    for rubric in rubrics:
        name = plots.figure_name("distributions", rubric)
        result.figures[name] = _distributions(result, study, rubric, long[rubric], several_runs)

    coverage = []
    for rubric in rubrics:
        for combination, rows in each_with_human(long[rubric], rubric=rubric):
            scored = rows[rows["status"] == "ok"].groupby("rater").size()
            for rater in sorted(set(rows["rater"]) - set(scored.index)):
                result.say(f"skipped {rubric} / {rater}: no scored items")
            rows = rows[rows["rater"].isin(scored.index)]
            human = HUMAN if rubric in with_human else None
            summary = score_coverage(rows, scale=study.rubric(rubric).scale, human=human).summary
            coverage.append(summary.assign(**combination))
    # every judge's distribution is tested against the human's: one family of tests
    coverage_table = adjust_p(pd.concat(coverage, ignore_index=True))
    result.tables["score_coverage"] = coverage_table
    result.lines += figure_notes(coverage_table, ["rubric", "variant", "run", "rater"], "p_value")

    # answers to one question are alike: the bias regressions cluster their errors on the
    # question when the table has one, else on the item (heteroskedasticity-robust only)
    by_cluster = Columns(cluster=study.cluster or "item")
    result.say(f"standard errors clustered on {by_cluster.cluster!r}")
    lengths = _length_bias(result, long, with_human, by_cluster)
    result.tables["length_bias"] = lengths
    result.lines += figure_notes(lengths, ["rubric", "judge", "variant", "run", "term"])

    bias = _self_preference(result, long, with_human, by_cluster, own_models or
                            study.settings.get("own_models", {}))  # fmt: skip
    result.tables["self_preference"] = bias
    result.lines += figure_notes(bias, ["rubric", "judge", "variant", "run", "method"])
    if not bias.empty and bias["estimate"].notna().any():
        shown = bias[bias["method"].isin(list(SHOWN))].dropna(subset=["estimate"]).copy()
        named = ["rubric", "judge", *[k for k in ("variant", "run") if shown[k].nunique() > 1]]
        shown["judge"] = shown[named].astype(str).agg(" · ".join, axis=1)
        shown["method"] = shown["method"].map(SHOWN)
        result.figures["self_preference"] = plots.plot_self_bias(shown)
    # closed, pyplot shows none where made: the notebook displays each where it explains it
    for figure in result.figures.values():
        plt.close(figure)
    return result


def _distributions(
    result: Analysis, study: Study, rubric: str, long: pd.DataFrame, several_runs: bool
) -> object:
    """The score distributions of one rubric: a panel per rater, bars per answering model."""
    from judgekit import plots

    table = long.copy()
    if "answer_model" not in table.columns:
        result.say(f"{rubric}: no Model column in the items file, so one bar for all answers")
        table["answer_model"] = "all answers"
    judged = table["rater"] != HUMAN
    table.loc[judged, "rater"] = table.loc[judged, "rater"] + " · " + table.loc[judged, "variant"]
    if several_runs:
        table.loc[judged, "rater"] += " · run " + table.loc[judged, "run"].astype(str)
    table["rater"] = table["rater"].astype(str)
    allowed = study.rubric(rubric).scale.allowed
    usable = table[table["status"] == "ok"]
    assert usable["score"].isin(allowed).all(), f"{rubric}: a scored verdict off the scale"
    return plots.plot_score_distributions(
        table,
        group="answer_model",
        panel="rater",
        panel_order=[HUMAN, *sorted(set(table["rater"]) - {HUMAN})],
        levels=allowed,
        score_label=rubric,
    )


def _length_bias(
    result: Analysis, long: dict[str, pd.DataFrame], with_human: list[str], by_cluster: Columns
) -> pd.DataFrame:
    """Per judge, the OLS of its score on the log answer length and the human score."""
    rows_out = []
    for rubric in with_human:
        absent = [c for c in ("answer_chars", "question") if c not in long[rubric].columns]
        if absent:
            result.say(
                f"skipped {rubric}: the judgments lack {absent} (Answer and Question columns)"
            )
            continue
        for combination, rows in each_with_human(long[rubric], rubric=rubric):
            paired = with_human_score(rows).rename(columns={"answer_chars": "length"})
            if (paired["status"] == "ok").sum() < MIN_SCORED:
                result.say(f"skipped {combination}: fewer than {MIN_SCORED} scored items")
                continue
            rows_out.append(length_bias(paired, columns=by_cluster).assign(**combination))
    if not rows_out:
        return pd.DataFrame()
    return adjust_p(pd.concat(rows_out, ignore_index=True))  # one family: every judge, rubric


def _self_preference(
    result: Analysis,
    long: dict[str, pd.DataFrame],
    with_human: list[str],
    by_cluster: Columns,
    own_models: dict[Any, Any],
) -> pd.DataFrame:
    """Each paired judge's extra score on its own model's answers, naive and controlled."""
    bias = pd.DataFrame(columns=[*BIAS_COLUMNS, "rubric", "variant", "run"])
    if not own_models:
        result.say(
            "self-preference not probed: no judge is paired with an answering model "
            "(`judgekit report STUDY --own-model JUDGE=MODEL`, or the own_models parameter)"
        )
        return bias
    result.say(
        "self-preference: " + ", ".join(f"{j} belongs to {m}" for j, m in own_models.items())
    )
    for rubric in with_human:
        for combination, rows in each_with_human(long[rubric], rubric=rubric):
            paired = with_human_score(rows)
            if (paired["status"] == "ok").sum() < MIN_SCORED:
                result.say(f"skipped {combination}: fewer than {MIN_SCORED} scored items")
                continue
            probed = self_preference(
                paired, own=own_models, author_col="answer_model", columns=by_cluster
            ).assign(**combination)
            bias = pd.concat([bias.dropna(axis=1, how="all"), probed], ignore_index=True)
    if not bias.empty and "p_value" in bias:
        # one family per method: the same question asked of every judge and rubric
        bias = adjust_p(bias[bias["method"] != "none"], family=["method"])
    return bias
