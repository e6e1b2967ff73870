"""Report step 07: does the score drift with a row's place in its batch, and what batching costs.

On the study's judgments, per rubric x variant x run with the judges as groups:
``position_effects`` (an OLS of the score on the row's position in its request and on the batch
number, at equal human score, clustered on the question), ``leniency_drift_verdicts`` (each
drift against a tolerance chosen before looking; inconclusive when every item sat at one
position) and ``position_profile`` (the mean leniency at each position, drawn per combination).
Optionally the same items are judged again at several batch sizes: ``batch_size_sensitivity``
(agreement with the human and prompt tokens per item at each size).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgekit import config
from judgekit.judging.clients import EndpointOptions
from judgekit.reporting.analyses import step
from judgekit.reporting.analysis import Analysis
from judgekit.reporting.combinations import combinations, label, selected
from judgekit.stats import CI, Columns, leniency_drift_verdict, position_effects, position_profile
from judgekit.stats.significance import adjust_p
from judgekit.study.folder import Study
from judgekit.types import UsageError

#: One position analysis per combination of these, the judges as groups.
KEYS = ["rubric", "variant", "run"]
#: A slope needs a few scored rows; fewer are skipped, and said so.
MIN_SCORED = 3


@step("07_batch_effects")
def batch_effects_analysis(
    study: Study,
    *,
    rubric: str = "riddle_accuracy",
    variant: str = "base",
    run: int = 1,
    adjust: Literal["item", "human", "difference"] = "human",
    tolerance: float = 0.5,
    p_adjust: Literal["holm", "fdr_bh"] = "holm",
    batch_sizes: Sequence[int] = (),
    dataset_path: str = "",
    id_column: str = "ID",
    judge_model: str = "",
    base_url: str = "",
    provider: str = "",
    max_tokens: int = 0,
    max_reasks: int = 1,
    seed: int = 0,
    n_boot: int = 2000,
    bootstrap_seed: int = 0,
    store_dir: Path | None = None,
) -> Analysis:
    """Position effects on the study's judgments, and optionally a re-judging per batch size.

    Args:
        study: The loaded study.
        rubric: The rubric analysed and re-judged (empty: every rubric judged).
        variant: The prompt variant analysed and re-judged (empty: every variant judged).
        run: The run analysed for position effects (0: every run judged).
        adjust: The position-effect adjustment: ``human``, ``difference`` or ``item``.
        tolerance: The largest drift over a batch (score points) that counts as none.
        p_adjust: The correction of each family of slope tests: ``holm`` or ``fdr_bh``.
        batch_sizes: Rows per request compared (empty: no re-judging).
        dataset_path: The item table judged again (empty: ``data/demo/riddles_demo.csv``).
        id_column: Its column of item IDs.
        judge_model: The judge model (empty: the local judge's).
        base_url: The OpenAI-compatible endpoint (empty: the provider's or the local judge).
        provider: The provider preset (empty: openai or local).
        max_tokens: Output cap per request (0: not sent).
        max_reasks: Re-asks of the rows a reply left unscored, per batch.
        seed: The request seed sent to the judge.
        n_boot: Cluster-bootstrap resamples of each batch size's kappa interval.
        bootstrap_seed: The seed of those resamples.
        store_dir: The folder of the re-judging's response store and the local judge's log
            (None: no store, so every run asks the judge again).

    Returns:
        The tables ``position_effects``, ``leniency_drift_verdicts``, ``position_profile`` and,
        with ``batch_sizes``, ``batch_size_sensitivity``; the figures ``position_effect_...``
        and ``batch_size_<rubric>``; and the lines the notebook prints.

    Raises:
        UsageError: No judgments of ``rubric``, or ``batch_sizes`` without one rubric and one
            variant.
    """
    import matplotlib.pyplot as plt

    result = Analysis("07_batch_effects")
    judgments = selected(study.judgments, variant, run)
    judgments = judgments[judgments["rubric"] == rubric] if rubric else judgments
    if judgments.empty:
        raise UsageError(f"{study.folder.root}: no judgments of rubric {rubric!r}")
    parts = {label(c): (c, rows) for c, rows in combinations(judgments, KEYS)}
    labels = study.labels
    human = {r: labels[labels["rubric"] == r].set_index("item_id")["score"]
             for r in set(judgments["rubric"])}  # fmt: skip
    for name, (combination, rows) in parts.items():
        result.say(f"{name}: {len(rows)} rows, {len(human[combination['rubric']])} human labels")

    cluster = study.cluster  # the study names its cluster column (None: the item)
    result.say(f"standard errors clustered on {cluster or 'the item'!r}")
    by_question = Columns(item="item_id", cluster=cluster)
    analysed = dict(parts)
    for name, (combination, _) in parts.items():
        if adjust != "item" and human[combination["rubric"]].empty:
            result.skip(f"position effects ({name})", f"no human labels, which adjust={adjust!r} "
                        "needs (adjust='item' compares each item with itself)")  # fmt: skip
            del analysed[name]
    if analysed:
        effects = _position_effects(result, judgments, analysed, human, adjust, p_adjust,
                                    tolerance, by_question)  # fmt: skip
        _position_profiles(result, analysed, human, effects)

    if batch_sizes:
        if not (rubric and variant):
            raise UsageError("re-judging at batch_sizes needs one rubric and one variant")
        ci = CI("bca" if cluster else "analytic", n_boot=n_boot, seed=bootstrap_seed)
        judging = {"max_tokens": max_tokens or None, "max_reasks": max_reasks, "seed": seed}
        endpoint = EndpointOptions(judge_model or None, base_url or None, provider or None)
        dataset = (
            Path(dataset_path) if dataset_path else config.DATA_DIR / "demo" / "riddles_demo.csv"
        )
        sensitivity = _rejudged(result, study, rubric, variant, human[rubric], dataset, id_column,
                                [int(s) for s in batch_sizes], endpoint, judging, ci, by_question,
                                store_dir)  # fmt: skip
        result.tables["batch_size_sensitivity"] = sensitivity
        _batch_size_figure(result, sensitivity, rubric)
    else:
        result.say("no batch-size figure: kappa could be computed at 0 batch size(s)")
    # closed, pyplot shows none where made: the notebook displays each where it explains it
    for figure in result.figures.values():
        plt.close(figure)
    return result


def _scores(human: dict[str, pd.Series], rubric: str) -> pd.Series | None:
    """The rubric's human scores; None when it has none (adjust="item" then needs none)."""
    return human[rubric] if len(human[rubric]) else None


def _position_effects(
    result: Analysis,
    judgments: pd.DataFrame,
    parts: dict[str, tuple[dict[str, Any], pd.DataFrame]],
    human: dict[str, pd.Series],
    adjust: Literal["item", "human", "difference"],
    p_adjust: Literal["holm", "fdr_bh"],
    tolerance: float,
    by_question: Columns,
) -> pd.DataFrame:
    """The slopes on position and batch number, and their drift verdicts (both tables)."""
    effects = []
    for combination, rows in parts.values():
        scores = _scores(human, combination["rubric"])
        by_item = position_effects(rows, scores, adjust=adjust, group_col="judge")
        clustered = position_effects(
            rows, scores, adjust=adjust, group_col="judge", columns=by_question
        )
        # the design effect: the clustered interval's width over the item-clustered one
        clustered["design_effect"] = (clustered["ci_high"] - clustered["ci_low"]) / (
            by_item["ci_high"] - by_item["ci_low"]
        )
        effects.append(clustered.assign(**combination))
    # the same slope asked of every judge (and combination) is one family of tests
    table = adjust_p(pd.concat(effects, ignore_index=True), family=["term"], method=p_adjust)
    # one verdict per row of effects, in its order: the combination's keys go in front
    verdicts = pd.concat([table[KEYS], leniency_drift_verdict(table, tolerance=tolerance)], axis=1)
    # unshuffled, every item sits at one place: a slope cannot separate leniency from item order
    confounded = judgments.groupby("item_id")["position"].nunique().max() == 1
    drifts = verdicts["term"].isin(["position", "batch_index"]) & (
        verdicts["verdict"] != "not tested"
    )
    if confounded:  # the estimate stays in the statement; the verdict cannot be read from it
        verdicts.loc[drifts, "verdict"] = "inconclusive"
        verdicts.loc[drifts, "statement"] = (
            "inconclusive (position confounded with item order): every item sat at one position "
            "only; judge again with a shuffle seed and two or more runs to separate them; "
            "measured: " + verdicts.loc[drifts, "statement"].str.split(": ", n=1).str[1]
        )
    result.tables["position_effects"] = table
    result.tables["leniency_drift_verdicts"] = verdicts
    for row in verdicts.to_dict("records"):
        result.say(label({k: row[k] for k in [*KEYS, "group", "term"]}))
        result.say(f"  instruction: {row['instruction']}")
        result.say(f"  {row['statement']}")
    result.say(f"rule: {verdicts['rule'].iloc[0]}")
    result.say(f"set aside: {table['dropped_reason'].iloc[0] or 'nothing'}")
    assert set(verdicts["verdict"]) <= {"pass", "fail", "inconclusive", "not tested"}
    tested = verdicts[verdicts["verdict"] != "not tested"]
    assert (tested["drift_ci_low"] <= tested["drift"]).all()
    assert (tested["drift"] <= tested["drift_ci_high"]).all()
    return table


def _position_profiles(
    result: Analysis,
    parts: dict[str, tuple[dict[str, Any], pd.DataFrame]],
    human: dict[str, pd.Series],
    effects: pd.DataFrame,
) -> None:
    """The mean leniency at each position: one table, a figure per combination with a slope."""
    from judgekit import plots

    profiles = []
    for name, (combination, rows) in parts.items():
        profile = position_profile(rows, _scores(human, combination["rubric"]), group_col="judge")
        profiles.append(profile.assign(**combination))
        scored_rows, positions = int(profile["n"].sum()), profile["value"].nunique()
        if scored_rows < MIN_SCORED or positions < 2:
            result.say(f"no position figure of {name}: {scored_rows} scored rows at "
                       f"{positions} position(s)")  # fmt: skip
            continue
        mine = (effects[KEYS] == pd.Series(combination)).all(axis=1)
        assert profile["n"].sum() == effects.loc[mine & (effects["term"] == "position"), "n"].sum()
        single = (profile["n"] == 1).all()  # one row per position: a point, no interval
        outcome = profile["outcome"].iloc[0]
        ylabel = f"{outcome} (score points{', one row each' if single else ', 95% CI'})"
        # the rubric names the figure; its variant and run too when the rubric has several
        several = len([c for c, _ in parts.values() if c["rubric"] == combination["rubric"]]) > 1
        shown = [combination["variant"], f"run{combination['run']}"] if several else []
        figure = plots.figure_name("position_effect", combination["rubric"], *shown)
        result.figures[figure] = plots.plot_position_effect(profile, ylabel=ylabel)
    result.tables["position_profile"] = pd.concat(profiles, ignore_index=True)


def _rejudged(
    result: Analysis,
    study: Study,
    rubric: str,
    variant: str,
    human: pd.Series,
    dataset: Path,
    id_column: str,
    sizes: list[int],
    endpoint: EndpointOptions,
    judging: dict[str, Any],
    ci: CI,
    by_question: Columns,
    store_dir: Path | None,
) -> pd.DataFrame:
    """Every item of ``dataset`` judged again at each batch size, against the human."""
    from judgekit.data import read_table
    from judgekit.judging.batch_probe import batch_size_sensitivity
    from judgekit.judging.clients import default_judge_client
    from judgekit.study.items import study_items

    table = read_table(dataset, id_column=id_column)
    items, _ = study_items(table, study.rubric(rubric), id_column=id_column)
    store = store_dir / "responses.sqlite" if store_dir is not None else None
    with default_judge_client(endpoint, log_dir=store_dir) as client:
        result.say(f"judge model: {client.model}; {len(items)} items at sizes {sizes}")
        sensitivity = batch_size_sensitivity(
            items, study.rubric(rubric), client, human, sizes=sizes, variants=[variant],
            store=store, columns=by_question,  # kappa has no clustered analytic interval: BCa
            ci=ci, **judging,
        )  # fmt: skip
    result.say(f"kappa intervals: {sensitivity['kappa_ci_method'].iloc[0]}, resampling "
               f"{by_question.cluster or 'items'}")  # fmt: skip
    assert list(sensitivity["batch_size"]) == sizes
    assert (sensitivity["rows_judged"] == len(items)).all()
    for column in ["first_ask_failure_rate", "reask_rate", "final_failure_rate"]:
        assert sensitivity[column].between(0, 1).all(), column
    return sensitivity


def _batch_size_figure(result: Analysis, sensitivity: pd.DataFrame, rubric: str) -> None:
    """Kappa and prompt tokens per item against the batch size (two or more sizes with a kappa)."""
    from judgekit import plots

    scored = sensitivity[sensitivity["kappa"].notna()]
    if len(scored) < 2:
        result.say(f"no batch-size figure: kappa could be computed at {len(scored)} batch size(s)")
        return
    bare = scored[scored["kappa_ci_low"].isna()]
    if len(bare):
        sizes = ", ".join(str(size) for size in bare["batch_size"])
        result.say(f"kappa drawn without an interval at batch size {sizes}: "
                   f"{bare['kappa_note'].iloc[0]}")  # fmt: skip
    result.figures[plots.figure_name("batch_size", rubric)] = plots.plot_batch_size(scored)
