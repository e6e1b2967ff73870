"""Meta-evaluation correlations and inter-human agreement against scipy, pingouin, krippendorff."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats

from judgekit.stats import CI, icc_absolute, inter_human_agreement, meta_correlation
from judgekit.stats.meta_correlation import dataset_replicates, document_correlations

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _study(seed: int = 0, docs: int = 30, per_doc: int = 8, raters: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = docs * per_doc
    truth = rng.normal(size=n)
    items = [f"i{k}" for k in range(n)]
    doc = np.repeat(np.arange(docs), per_doc)
    judged = np.clip(np.round(3 + truth + rng.normal(0, 0.8, n)), 1, 5)
    frames = [pd.DataFrame({"item": items, "rater": "judge", "question": doc, "score": judged})]
    for r in range(raters):
        human = np.clip(np.round(3 + truth + rng.normal(0, 0.6, n)), 1, 5)
        frames.append(
            pd.DataFrame({"item": items, "rater": f"h{r}", "question": doc, "score": human})
        )
    return pd.concat(frames, ignore_index=True)


def _xy(long: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    wide = long.pivot_table(index="item", columns="rater", values="score")
    docs = long.drop_duplicates("item").set_index("item")["question"].reindex(wide.index)
    human = wide[[c for c in wide.columns if c.startswith("h")]].mean(axis=1)
    return wide["judge"].to_numpy(), human.to_numpy(), docs.to_numpy()


def test_both_levels_match_scipy_and_name_their_level() -> None:
    long = _study()
    table = meta_correlation(long, ["judge"], ["h0", "h1", "h2"], ci=CI(None))
    x, y, doc = _xy(long)
    for method, test in SCIPY.items():
        dataset = table[(table["level"] == "dataset") & (table["method"] == method)].iloc[0]
        assert dataset["estimate"] == pytest.approx(test(x, y).statistic, abs=1e-12)
        per_doc = [test(x[doc == d], y[doc == d]).statistic for d in np.unique(doc)]
        document = table[(table["level"] == "document") & (table["method"] == method)].iloc[0]
        assert document["estimate"] == pytest.approx(np.nanmean(per_doc), abs=1e-12)
        assert document["n_documents"] == np.isfinite(per_doc).sum()
    assert set(table["level"]) == {"dataset", "document"}


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_each_replicate_is_the_statistic_of_its_resample(method: str) -> None:
    """Replicate b equals scipy on the documents drawn as rng.integers(0, G, G) draw them."""
    x, y, doc = _xy(_study(seed=3))
    doc = doc.astype(int)
    replicates, note = dataset_replicates(x, y, doc, method, CI("percentile", n_boot=5, seed=11))  # type: ignore[arg-type]
    rng = np.random.default_rng(11)
    draws = rng.integers(0, doc.max() + 1, size=(5, doc.max() + 1))
    for b in range(5):
        rows = np.concatenate([np.flatnonzero(doc == d) for d in draws[b]])
        assert replicates[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-9)
    assert note == ""


def test_document_correlations_of_uneven_documents_match_scipy() -> None:
    rng = np.random.default_rng(5)
    doc = rng.integers(0, 40, 400)
    x, y = rng.integers(1, 6, 400).astype(float), rng.integers(1, 4, 400).astype(float)
    for method, test in SCIPY.items():
        got = document_correlations(x, y, doc, method)  # type: ignore[arg-type]
        for d in range(40):
            xs, ys = x[doc == d], y[doc == d]
            flat = xs.size < 2 or np.ptp(xs) == 0 or np.ptp(ys) == 0
            assert np.isnan(got[d]) if flat else got[d] == pytest.approx(test(xs, ys).statistic)


def test_interval_is_seeded_and_covers_the_estimate() -> None:
    long = _study(seed=1)
    first = meta_correlation(
        long, ["judge"], ["h0", "h1", "h2"], ci=CI("percentile", n_boot=300, seed=4)
    )
    again = meta_correlation(
        long, ["judge"], ["h0", "h1", "h2"], ci=CI("percentile", n_boot=300, seed=4)
    )
    pd.testing.assert_frame_equal(first, again)
    assert (first["ci_low"] <= first["estimate"]).all() and (
        first["estimate"] <= first["ci_high"]
    ).all()
    assert (first["ci_method"] == "percentile, documents resampled").all()


def test_without_a_document_column_the_document_level_says_so() -> None:
    long = _study().drop(columns="question")
    table = meta_correlation(long, ["judge"], ["h0"], ci=CI(None))
    document = table[table["level"] == "document"]
    assert (
        document["estimate"].isna().all()
        and (document["note"] == "no document column 'question'").all()
    )


def test_inter_human_agreement_matches_krippendorff_and_pingouin() -> None:
    long = _study(seed=2)
    humans = long[long["rater"].str.startswith("h")]
    table = inter_human_agreement(humans, ["h0", "h1", "h2"], ci=CI(None)).set_index("statistic")
    matrix = humans.pivot_table(index="rater", columns="item", values="score").to_numpy()
    for metric in ("interval", "ordinal"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=metric)
        assert table.loc[f"krippendorff_alpha[{metric}]", "estimate"] == pytest.approx(expected)
    icc = pingouin.intraclass_corr(
        humans, targets="item", raters="rater", ratings="score"
    ).set_index("Type")
    for ours, theirs in (("ICC(A,1)", "ICC(A,1)"), ("ICC(A,k)", "ICC(A,k)")):
        assert table.loc[ours, "estimate"] == pytest.approx(icc.loc[theirs, "ICC"])
        low, high = icc.loc[theirs, "CI95"]
        assert (table.loc[ours, "ci_low"], table.loc[ours, "ci_high"]) == pytest.approx(
            (low, high), abs=0.006
        )


def test_icc_of_shrout_and_fleiss_table() -> None:
    """Shrout & Fleiss (1979), Table 2: ICC(2,1) = 0.29, ICC(2,4) = 0.62."""
    table = np.array(
        [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float
    )
    out = icc_absolute(table)
    assert (
        round(out["ICC(A,1)"]["estimate"], 2) == 0.29
        and round(out["ICC(A,k)"]["estimate"], 2) == 0.62
    )
