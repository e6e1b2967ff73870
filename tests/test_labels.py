"""The human side of validation: label table, widget model, selection, planner, PPI, records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py
import pytest
import scipy.stats

from judgekit.labels import (
    LABEL_TABLE_COLUMNS,
    calibration_changes,
    calibration_record,
    disagreements,
    inter_human_agreement,
    read_calibration,
    read_labels_table,
    record_label,
    rubric_version,
    select_for_labelling,
    write_calibration,
)
from judgekit.labels.select import default_label_count
from judgekit.labels.session import LabellingSession
from judgekit.labels.widget import LabelWidget
from judgekit.riddles import riddles_v2_wide
from judgekit.rubrics import load_rubric
from judgekit.stats import (
    CI,
    corrected_means,
    coverage_summary,
    observed_kappa_halfwidth,
    plan_kappa_halfwidth,
    ppi_coverage,
)
from judgekit.stats.agreement import kappa_from_pairs
from judgekit.stats.ppi import power_tuning
from judgekit.types import JUDGMENT_COLUMNS, UsageError

ACCURACY = (0.0, 3.0, 5.0)
JUDGES = ("Perplexity", "GPT", "Gemini", "Claude")


@pytest.fixture(scope="module")
def riddles() -> pd.DataFrame:
    return riddles_v2_wide()


@pytest.fixture(scope="module")
def rubric():  # type: ignore[no-untyped-def]
    return load_rubric("riddle_accuracy")


def _items(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ID": [f"q{i}" for i in range(n)],
            "Question": [f"question {i}" for i in range(n)],
            "Answer": [f"answer {i}" for i in range(n)],
            "Ref_Answer": [f"reference {i}" for i in range(n)],
            "judge_score": [5] * n,
        }
    )


def test_labels_file_is_plain_utf8_csv_rewritten_per_label(tmp_path, rubric) -> None:
    path = tmp_path / "labels.csv"
    version = rubric_version(rubric)

    def label(item_id: str, status: str, score: float | None, note: str) -> pd.DataFrame:
        return record_label(
            path, item_id=item_id, labeller="Éva", status=status, score=score, note=note,
            rubric=rubric.name, version=version,
        )  # fmt: skip

    label("7", "ok", 3, "a, b")
    label("8", "skip", None, "")
    labels = label("7", "ok", 5, "changed")
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    assert raw.decode("utf-8").splitlines()[0] == ",".join(LABEL_TABLE_COLUMNS)
    back = read_labels_table(path)
    assert len(back) == 2 and len(labels) == 2
    seven = back[back["item_id"] == "7"].iloc[0]
    assert (seven["score"], seven["note"], seven["status"]) == (5.0, "changed", "ok")
    assert np.isnan(back[back["item_id"] == "8"]["score"].iloc[0])
    assert seven["labelled_at"].endswith("+00:00")
    leftovers = {p.name for p in tmp_path.iterdir()} - {"labels.csv", "labels.csv.lock"}
    assert leftovers == set()  # no temporary file left behind


def test_a_labels_table_saved_by_a_spreadsheet_with_a_bom_reads(tmp_path, rubric) -> None:
    labels = pd.DataFrame({
        "item_id": ["q0", "q1", "q2"], "labeller": "dataset", "score": ["5", "", "0"],
        "status": ["ok", "skip", "ok"], "note": "", "labelled_at": "2026-01-01T00:00:00+00:00",
        "rubric": rubric.name, "rubric_version": rubric_version(rubric),
    })[list(LABEL_TABLE_COLUMNS)]  # fmt: skip
    path = tmp_path / "labels.csv"
    path.write_text("\ufeff" + labels.to_csv(index=False), encoding="utf-8")  # as Excel saves
    back = read_labels_table(path)
    assert list(back["item_id"]) == ["q0", "q1", "q2"]
    assert list(back["status"]) == ["ok", "skip", "ok"]


def test_a_score_only_goes_with_status_ok(tmp_path, rubric) -> None:
    with pytest.raises(ValueError, match="score goes with status ok"):
        record_label(
            tmp_path / "l.csv",
            item_id="1",
            labeller="x",
            status="skip",
            score=3,
            note="",
            rubric="r",
            version="v",
        )
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(LABEL_TABLE_COLUMNS) + "\n1,x,,ok,,t,r,v\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad.csv row 2: a score is required"):
        read_labels_table(bad)


def test_rubric_version_changes_with_the_anchors(rubric) -> None:
    edited = load_rubric("riddle_accuracy")
    edited.template_data["anchors"][0]["label"] = "Yes"
    assert rubric_version(rubric) == rubric_version(load_rubric("riddle_accuracy"))
    assert rubric_version(edited) != rubric_version(rubric)


def test_widget_is_blind_records_at_once_and_resumes(tmp_path, rubric) -> None:
    path = tmp_path / "labels.csv"
    items = _items(5).assign(Model="gamma-70b", ID=[f"gamma-70b-{i}" for i in range(5)])
    widget = LabelWidget(LabellingSession(items, rubric, path, labeller="anna"))
    sent = str([widget.items, widget.labelled, widget.scale])
    assert "judge_score" not in sent and "gamma" not in sent  # no model, and no ID naming it
    assert [a["score"] for a in widget.scale] == [5, 3, 0] and widget.abstain is False
    widget._on_message(widget, {"kind": "label", "position": 0, "status": "ok", "score": 3}, [])
    widget.record(1, "skip", None, "unsure")
    assert widget.position == 2
    note = {"kind": "label", "position": 0, "status": "ok", "score": 3, "note": "typo?"}
    widget._on_message(widget, {**note, "advance": False}, [])
    assert widget.position == 2 and widget.labelled["0"]["note"] == "typo?"
    widget._on_message(widget, {"kind": "label", "position": 2, "status": "ok", "score": 4}, [])
    assert "not on the scale" in widget.error and widget.position == 2
    widget._on_message(widget, {"kind": "label", "position": 2, "status": "abstain"}, [])
    assert "has no abstain value" in widget.error
    assert len(read_labels_table(path)) == 2
    again = LabelWidget(LabellingSession(items, rubric, path, labeller="anna"))
    assert again.position == 2 and set(again.labelled) == {"0", "1"}
    assert again.session.counts() == {"labelled": 1, "skipped": 1, "open": 3}
    other = LabelWidget(LabellingSession(items, rubric, path, labeller="bela"))
    assert other.position == 0 and other.labelled == {}
    # two people at once on one file: neither drops the other's labels
    other.record(0, "ok", 5)
    again.record(2, "ok", 0)
    stored = read_labels_table(path)
    assert sorted(zip(stored["labeller"], stored["item_id"], strict=True)) == [
        ("anna", "gamma-70b-0"),
        ("anna", "gamma-70b-1"),
        ("anna", "gamma-70b-2"),
        ("bela", "gamma-70b-0"),
    ]
    with pytest.raises(UsageError, match="labeller"):
        LabellingSession(items, rubric, path, labeller=" ")
    extent = load_rubric("extent_rating")
    ten = LabelWidget(LabellingSession(_items(5), extent, tmp_path / "x.csv", labeller="a"))
    assert [a["score"] for a in ten.scale][:2] == [10, 9] and ten.abstain is True
    ten.record(0, "abstain", None)
    shown = LabelWidget(
        LabellingSession(items, rubric, tmp_path / "y.csv", "c", show_columns=["Model"])
    )
    assert "gamma-70b" in str(shown.items)  # only when asked to unblind


def test_resume_goes_to_open_items_before_skipped_ones(tmp_path, rubric) -> None:
    session = LabellingSession(_items(3), rubric, tmp_path / "l.csv", "anna")
    session.record(0, "skip", None)
    session.record(1, "ok", 5)
    assert session.resume_position() == 2
    session.record(2, "ok", 0)
    assert LabellingSession(_items(3), rubric, tmp_path / "l.csv", "anna").resume_position() == 0


def _judgments(riddles: pd.DataFrame, judge: str) -> pd.DataFrame:
    base = pd.DataFrame({c: pd.Series(dtype=object) for c in JUDGMENT_COLUMNS})
    rows = []
    for variant in ("base", "paraphrase_1"):
        frame = base.reindex(range(len(riddles)))
        frame["item_id"] = riddles["output_id"].astype(str).to_numpy()
        frame["variant"], frame["run"], frame["model"], frame["status"] = variant, 1, judge, "ok"
        scores = riddles[f"accuracy_{judge}"].astype(float).to_numpy()
        if variant != "base":  # the paraphrase disagrees on every 10th item
            scores = np.where(np.arange(len(scores)) % 10 == 0, 0.0, scores)
        frame["score"] = scores
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)


def test_selection_covers_the_scale_and_enriches_with_disputed_items(riddles) -> None:
    judgments = _judgments(riddles, "GPT")
    groups = dict(zip(riddles["output_id"].astype(str), riddles["model"], strict=True))
    plan = select_for_labelling(judgments, 30, seed=3, levels=ACCURACY, groups=groups)
    items = plan.items
    assert len(items) == 30 and items["item_id"].is_unique
    assert (items["reason"] == "disagreement").sum() == 8  # round(0.25 * 30)
    stratified = items[items["reason"] == "stratified"]
    # nine strata (3 scores x 3 models), each with enough items: 22 picks spread 2-3 apiece
    assert stratified["stratum"].value_counts().between(2, 3).all()
    assert set(items["judge_score"]) == set(ACCURACY)
    again = select_for_labelling(judgments, 30, seed=3, levels=ACCURACY, groups=groups)
    pd.testing.assert_frame_equal(items, again.items)
    assert "±" in plan.summary()
    with pytest.raises(UsageError, match="n must be between 2 and 600"):
        select_for_labelling(judgments, 601, seed=3, levels=ACCURACY)


@pytest.mark.parametrize("judge", JUDGES)
def test_planner_predicts_the_kappa_interval_width_within_20_percent(riddles, judge) -> None:
    judge_scores = riddles[f"accuracy_{judge}"].to_numpy(float)
    human = riddles["accuracy_Human"].to_numpy(float)
    # The planner is told the kappa the judge really reaches; what is tested is its width model.
    kappa = float(kappa_from_pairs(judge_scores, human, ACCURACY, weights="quadratic")["estimate"])
    plan = plan_kappa_halfwidth(judge_scores, ACCURACY, [30], expected_kappa=kappa, seed=1)
    predicted = float(plan["half_width"].iloc[0])
    observed = observed_kappa_halfwidth(judge_scores, human, ACCURACY, 30, seed=2)
    assert abs(predicted / observed - 1) <= 0.20, (predicted, observed)


def _latent_study(seed: int, n: int, spread: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Judge and human scores on 1-10: a shared latent quality plus each one's own noise.

    Not the planner's own disagreement model, so agreeing with it is a real check.
    """
    rng = np.random.default_rng(seed)
    quality = rng.normal(6.0, spread, n)
    judge, human = (np.clip(np.round(quality + rng.normal(0, noise, n)), 1, 10) for _ in "jh")
    return judge, human


@pytest.mark.parametrize(("spread", "noise"), [(1.5, 0.5), (2.5, 1.0), (2.5, 1.5)])
def test_planner_predicts_a_ten_point_kappa_interval_within_25_percent(spread, noise) -> None:
    levels = tuple(float(x) for x in range(1, 11))
    # The study: 40 judged items, a plan for 15 labels. The kappa the planner is told
    # comes from a calibration sample; the width is observed on a held-back population.
    calibration = _latent_study(2, 3000, spread, noise)
    held_back = _latent_study(3, 20000, spread, noise)
    kappa = float(
        kappa_from_pairs(*calibration, levels, weights="quadratic", ci=CI(None))["estimate"]
    )
    observed = observed_kappa_halfwidth(*held_back, levels, 15, seed=2)
    ratios = []
    for study in range(10, 16):  # six 40-item studies: each sees its own judge distribution
        judge, _ = _latent_study(study, 40, spread, noise)
        plan = plan_kappa_halfwidth(judge, levels, [15], expected_kappa=kappa, seed=1, n_sim=2000)
        assert plan["disagreement"].iloc[0] == "steps"
        ratios.append(float(plan["half_width"].iloc[0]) / observed)
    # On average within 25 %; one study's 40 scores move it further, never past 40 %.
    assert abs(np.mean(ratios) - 1) <= 0.25, (kappa, observed, ratios)
    assert all(abs(r - 1) <= 0.40 for r in ratios), (kappa, observed, ratios)


def test_planner_width_shrinks_with_n(riddles) -> None:
    plan = plan_kappa_halfwidth(riddles["accuracy_GPT"], ACCURACY, [10, 30, 100], seed=0)
    assert plan["half_width"].is_monotonic_decreasing


def _study_frame(riddles: pd.DataFrame, judge: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": riddles["model"],
            "judge_score": riddles[f"accuracy_{judge}"].astype(float),
            "human_score": riddles["accuracy_Human"].astype(float),
        }
    )


def test_ppi_estimates_are_ppi_py_run_directly(riddles) -> None:
    frame = _study_frame(riddles, "Claude")
    rng = np.random.default_rng(5)
    labelled = rng.random(len(frame)) < 0.1
    hidden = frame.assign(human_score=frame["human_score"].where(labelled))
    result = corrected_means(hidden, level=0.9).set_index(["model", "estimator"])
    for model, part in frame.groupby("model"):
        mask = labelled[part.index]
        y, yhat = part["human_score"].to_numpy()[mask], part["judge_score"].to_numpy()[mask]
        yhat_u = part["judge_score"].to_numpy()[~mask]
        lam = power_tuning(y, yhat, yhat_u)
        # ppi_py's own tuning picks the same lambda: its interval at lam=None is the one at ours.
        tuned = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
        assert np.ravel(tuned) == pytest.approx(np.ravel(ppi_py.ppi_mean_ci(
            y, yhat, yhat_u, alpha=0.1, lam=lam)), abs=1e-12)  # fmt: skip
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)
        row = result.loc[(model, "ppi")]
        assert row["estimate"] == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
        # ppi_py's standard error with unbiased variances and Student's t (n - 1 df).
        n, big_n = len(y), len(yhat_u)
        se = np.sqrt(lam**2 * np.var(yhat_u, ddof=1) / big_n + np.var(y - lam * yhat, ddof=1) / n)
        half = scipy.stats.t.ppf(0.95, n - 1) * se
        assert row["half_width"] == pytest.approx(half, abs=1e-12)
        human = result.loc[(model, "human_only")]
        t_low, t_high = scipy.stats.t.interval(0.9, len(y) - 1, np.mean(y), scipy.stats.sem(y))
        assert (human["ci_low"], human["ci_high"]) == pytest.approx((t_low, t_high), abs=1e-12)
        assert result.loc[(model, "human_only"), "n_labelled"] == mask.sum()
        assert result.loc[(model, "judge_only"), "estimate"] == pytest.approx(
            part["judge_score"].mean()
        )


def _useless_judge_study(seed: int, n_labels: int = 6) -> pd.DataFrame:
    """40 items on a 1-10 scale; the judge's scores are unrelated to the human's."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 11, 40).astype(float)
    return pd.DataFrame(
        {
            "model": "m",
            "judge_score": rng.integers(1, 11, 40).astype(float),
            "human_score": np.where(np.arange(40) < n_labels, human, np.nan),
        }
    )


def test_ppi_is_never_narrower_than_the_labels_alone_when_the_judge_adds_nothing() -> None:
    tuned_away = 0
    for seed in range(60):
        frame = _useless_judge_study(seed)
        labelled = frame["human_score"].notna()
        y, yhat = frame.loc[labelled, "human_score"], frame.loc[labelled, "judge_score"]
        unlabelled = frame.loc[~labelled, "judge_score"].to_numpy()
        if power_tuning(y.to_numpy(), yhat.to_numpy(), unlabelled):
            continue  # lambda > 0: the judge's scores carry weight
        tuned_away += 1
        means = corrected_means(frame).set_index("estimator")
        ppi, human = means.loc["ppi"], means.loc["human_only"]
        assert ppi["estimate"] == pytest.approx(human["estimate"], abs=1e-12)
        # The judge is tuned away (lambda = 0): PPI is the labels' own t-interval, not
        # sqrt(5/6) of it as with ppi_py's divide-by-n variance at six labels.
        assert ppi["half_width"] == pytest.approx(human["half_width"], rel=1e-12), seed
        assert (ppi["ci_low"], ppi["ci_high"]) == pytest.approx(
            (human["ci_low"], human["ci_high"]), rel=1e-12
        )
    assert tuned_away >= 15  # the case is really exercised


def test_ppi_intervals_are_clipped_to_the_scale_and_say_so() -> None:
    frame = pd.DataFrame(
        {
            "model": "m",
            "judge_score": [10.0, 9, 10, 10, 8, 10, 9, 10, 10, 10, 9, 10],
            "human_score": [10.0, 9, 10, 8, 10, 10] + [np.nan] * 6,
        }
    )
    free = corrected_means(frame).set_index("estimator")
    assert free.loc["human_only", "ci_high"] > 10  # the case the clipping is for
    means = corrected_means(frame, scale=(1, 10)).set_index("estimator")
    assert (means["ci_high"] <= 10).all() and (means["ci_low"] >= 1).all()
    clipped = means[means["note"] == "interval clipped to the scale [1, 10]"].index
    assert "human_only" in clipped and set(clipped) == set(free.index[free["ci_high"] > 10])
    # The half-width stays the interval's own: clipping is reported, not a gain in precision.
    assert means["half_width"].to_numpy() == pytest.approx(free["half_width"].to_numpy())


@pytest.mark.parametrize("judge", JUDGES)
def test_thirty_labels_and_one_judge_recover_each_models_human_mean(riddles, judge) -> None:
    coverage = ppi_coverage(_study_frame(riddles, judge), n_labels=30, n_subsamples=200, seed=2026)
    summary = coverage_summary(coverage).set_index(["model", "estimator"])
    ppi = summary.xs("ppi", level="estimator")
    human = summary.xs("human_only", level="estimator")
    pooled = coverage[coverage["estimator"] == "ppi"]["covered"].mean()
    # 30 labels = 10 per answering model: for each model the 95% interval covers the full-data
    # human mean in 90-98% of subsamples (with ppi_py's normal quantile one pair reached 0.86;
    # the t quantile for 10 labels is what brings it into range).
    assert 0.90 <= pooled <= 0.98, pooled
    assert ppi["coverage"].between(0.90, 0.98).all(), ppi["coverage"].to_dict()
    assert (ppi["mean_half_width"] < human["mean_half_width"]).all()
    narrower = coverage.pivot_table(
        index=["subsample", "model"], columns="estimator", values="half_width"
    )
    assert (narrower["ppi"] < narrower["human_only"]).mean() > 0.9


def test_inter_human_agreement_needs_two_labellers(tmp_path) -> None:
    rng = np.random.default_rng(0)
    truth = rng.choice(ACCURACY, 40)
    noisy = np.where(rng.random(40) < 0.2, rng.choice(ACCURACY, 40), truth)
    rows = [
        {"item_id": str(i), "labeller": who, "score": s, "status": "ok", "note": ""}
        for who, scores in (("anna", truth), ("bela", noisy))
        for i, s in enumerate(scores)
    ]
    rows.append({"item_id": "0", "labeller": "cili", "score": np.nan, "status": "abstain"})
    labels = pd.DataFrame(rows)
    table = inter_human_agreement(labels, ACCURACY, ci=CI("bca", n_boot=200, seed=1))
    kappa = table[table["statistic"] == "kappa (quadratic)"]
    assert list(kappa[["rater_a", "rater_b"]].iloc[0]) == ["anna", "bela"]
    assert kappa["ci_low"].iloc[0] < kappa["estimate"].iloc[0] < kappa["ci_high"].iloc[0]
    assert kappa["n"].iloc[0] == 40
    assert inter_human_agreement(labels[labels["labeller"] == "anna"], ACCURACY).empty


def test_disagreements_put_the_largest_gaps_first(riddles) -> None:
    verdicts = _judgments(riddles, "GPT").assign(reason="r", raw_reply="raw")
    labels = pd.DataFrame(
        {
            "item_id": riddles["output_id"].astype(str),
            "labeller": "h",
            "score": riddles["accuracy_Human"].astype(float),
            "status": "ok",
        }
    )
    table = disagreements(verdicts, labels, top=10)
    assert len(table) == 10 and table["gap"].abs().iloc[0] == 5
    assert table["gap"].abs().is_monotonic_decreasing


def test_calibration_record_warns_when_judge_or_prompt_change(tmp_path, rubric) -> None:
    labels = pd.DataFrame(
        {"item_id": ["1", "2"], "labeller": ["a", "a"], "score": [5.0, 3.0], "status": "ok"}
    )
    agreement = pd.DataFrame(
        [{"statistic": "kappa", "estimate": 0.8, "ci_low": 0.6, "ci_high": 0.9, "n": 2}]
    )
    record = calibration_record(
        judge_model="m1",
        endpoint="http://x/v1",
        rubric=rubric,
        variant="base",
        labels=labels,
        agreement=agreement,
    )
    path = write_calibration(record, tmp_path / "calibration.json")
    back = read_calibration(path)
    assert back is not None and back["label_count"] == 2
    assert calibration_changes(back, {"judge_model": "m1", "variant": "base"}) == []
    other_prompt = record | {"prompt_hash": "0"}
    changes = calibration_changes(
        other_prompt, {"judge_model": "m2", "prompt_hash": back["prompt_hash"]}
    )
    assert len(changes) == 2 and changes[0].startswith("judge_model changed")
    assert read_calibration(tmp_path / "absent.json") is None


def test_corrected_means_say_why_an_estimate_or_interval_is_missing() -> None:
    frame = pd.DataFrame(
        {
            "model": ["few"] * 6 + ["same"] * 12,
            "judge_score": [0.0, 3, 5, 5, 3, 0, 5, 3, 5, 0, 5, 5, 3, 5, 0, 5, 5, 3],
            "human_score": [5.0, 3] + [np.nan] * 4 + [5.0] * 6 + [np.nan] * 6,
        }
    )
    means = corrected_means(frame).set_index(["model", "estimator"])
    assert means.loc[("few", "ppi"), "note"] == "undefined: fewer than 5 labels"
    assert np.isnan(means.loc[("few", "human_only"), "estimate"])
    same = means.loc[("same", "human_only")]
    assert same["estimate"] == 5.0 and np.isnan(same["ci_low"]) and np.isnan(same["ci_high"])
    assert same["note"] == "interval undefined: the scores are all equal"
    assert means.loc[("same", "judge_only"), "note"] == ""
    # Constant labels tune PPI's lambda to 0 (labels alone): no interval either, not [5, 5].
    assert means.loc[("same", "ppi"), "note"] == "interval undefined: the scores are all equal"


def test_balanced_selection_gives_every_model_its_share_and_the_default_scales() -> None:
    base = pd.DataFrame({c: pd.Series(dtype=object) for c in JUDGMENT_COLUMNS})
    frame = base.reindex(range(60))
    frame["item_id"] = [f"i{k}" for k in range(60)]
    frame["variant"], frame["run"], frame["model"], frame["status"] = "base", 1, "j", "ok"
    # model a: 40 items over four scores; b and c: 10 items each, all scored 4
    frame["score"] = [float(1 + k % 4) if k < 40 else 4.0 for k in range(60)]
    groups = {f"i{k}": "a" if k < 40 else ("b" if k < 50 else "c") for k in range(60)}
    levels = (1.0, 2.0, 3.0, 4.0)
    plain = select_for_labelling(frame, 15, seed=0, levels=levels, groups=groups).items
    balanced = select_for_labelling(
        frame, 15, seed=0, levels=levels, groups=groups, balance_groups=True
    ).items
    per_model = balanced["item_id"].map(groups).value_counts()
    assert per_model.to_dict() == {"a": 5, "b": 5, "c": 5}
    assert balanced[balanced["item_id"].map(groups) == "a"]["judge_score"].nunique() == 4
    assert plain["item_id"].map(groups).value_counts()["a"] > 5  # strata, not models, share
    n, why = default_label_count(frame["score"].to_numpy(), levels, n_groups=3)
    assert 15 <= n <= 60 and "at least 5 for each of 3 answering models" in why
    small, _ = default_label_count(np.array([1.0, 2.0, 3.0, 4.0] * 3), levels, n_groups=3)
    assert small == 12  # every item of a small study
