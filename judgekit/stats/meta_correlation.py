r"""Judge-vs-human correlations as meta-evaluations report them, and agreement among the humans.

Two levels, named in every row (Liu et al. 2023, G-Eval, EMNLP; Fabbri et al. 2021,
SummEval, TACL):

* ``dataset``: one correlation over all items, :math:`r(x, y)`;
* ``document``: the mean over source documents (prompts) :math:`d` of the correlation among
  that document's items, :math:`\bar r = \frac{1}{|D|}\sum_{d \in D} r(x_d, y_d)`; a document
  with fewer than two items or a constant rater has no correlation and is counted apart.

The human score of an item is the mean of its human raters' scores. Intervals are percentile
intervals of a bootstrap that resamples whole documents (or items, without a document column):
:math:`G` documents drawn with replacement per replicate, seeded. Pearson is computed from
per-document sums, Spearman from weighted mid-ranks, Kendall's :math:`\tau_b` from the weighted
contingency table of the distinct values, so each replicate is the statistic of its resample.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse, stats

from judgekit.stats._bootstrap import CI, as_generator
from judgekit.stats._prep import Columns, FloatArray, IntArray

Method = Literal["pearson", "spearman", "kendall"]
#: The default columns: the study's ``question`` is the source document.
DOCUMENTS = Columns(cluster="question")
METHODS: tuple[Method, ...] = ("pearson", "spearman", "kendall")
#: Kendall's bootstrap works on the table of distinct values; above this many cells, no interval.
MAX_KENDALL_CELLS = 40_000
_CELLS_PER_BLOCK = 4_000_000
_SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _usable(df: pd.DataFrame, columns: Columns) -> pd.DataFrame:
    keep = df[columns.score].notna() & ~df[columns.score].isin(columns.abstain)
    if columns.status and columns.status in df.columns:
        keep &= df[columns.status].astype(str) == "ok"
    return df[keep]


def _scipy(x: FloatArray, y: FloatArray, method: Method) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(_SCIPY[method](x, y).statistic)


def _draws(g: int, n_boot: int, rng: np.random.Generator, block: int) -> Iterator[FloatArray]:
    """Blocks of ``(b, g)`` counts: how often each document enters each replicate."""
    for lo in range(0, n_boot, block):
        b = min(block, n_boot - lo)
        drawn = rng.integers(0, g, size=(b, g)) + np.arange(b)[:, None] * g
        yield np.bincount(drawn.ravel(), minlength=b * g).reshape(b, g).astype(float)


def _midranks(codes: IntArray, levels: int, w: FloatArray) -> FloatArray:
    onehot = sparse.csr_matrix(
        (np.ones(codes.size), (np.arange(codes.size), codes)), (codes.size, levels)
    )
    counts = np.asarray((onehot.T @ w.T).T)
    mid = np.cumsum(counts, axis=1) - (counts - 1) / 2
    return mid[:, codes]


def _tau_b(tables: FloatArray) -> FloatArray:
    """Kendall's tau-b of each weighted contingency table (shape ``(b, Lx, Ly)``)."""
    n = tables.sum(axis=(1, 2))
    cum = tables.cumsum(1).cumsum(2)  # cum[i, j] = count of x <= i and y <= j
    pad = np.pad(cum, ((0, 0), (1, 0), (1, 0)))
    rows, cols = tables.sum(2), tables.sum(1)
    below_left = pad[:, :-1, :-1]  # x < i and y < j
    row_cum = np.pad(rows.cumsum(1), ((0, 0), (1, 0)))[:, :-1][:, :, None]  # x < i
    col_cum = np.pad(cols.cumsum(1), ((0, 0), (1, 0)))[:, :-1][:, None, :]  # y < j
    above_right = (
        n[:, None, None] - (row_cum + rows[:, :, None]) - (col_cum + cols[:, None, :]) + (cum)
    )
    below_right = row_cum - pad[:, :-1, 1:]  # x < i and y > j
    above_left = col_cum - pad[:, 1:, :-1]  # x > i and y < j
    s = (tables * (below_left + above_right - below_right - above_left)).sum(axis=(1, 2)) / 2
    pairs = n * (n - 1) / 2
    ties_x = (rows * (rows - 1) / 2).sum(1)
    ties_y = (cols * (cols - 1) / 2).sum(1)
    den = np.sqrt(np.clip(pairs - ties_x, 0, None) * np.clip(pairs - ties_y, 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, s / den, np.nan)


def _spearman_tables(tables: FloatArray) -> FloatArray:
    """Spearman's rho of each weighted contingency table: Pearson's r of the mid-ranks."""
    rows, cols = tables.sum(2), tables.sum(1)
    rank_x = np.cumsum(rows, 1) - (rows - 1) / 2
    rank_y = np.cumsum(cols, 1) - (cols - 1) / 2
    n = rows.sum(1)
    sx, sy = (rows * rank_x).sum(1), (cols * rank_y).sum(1)
    sxx, syy = (rows * rank_x**2).sum(1), (cols * rank_y**2).sum(1)
    sxy = np.einsum("bi,bij,bj->b", rank_x, tables, rank_y)
    den = np.sqrt(np.clip(n * sxx - sx**2, 0, None) * np.clip(n * syy - sy**2, 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (n * sxy - sx * sy) / den, np.nan)


def dataset_replicates(
    x: FloatArray, y: FloatArray, doc: IntArray, method: Method, ci: CI
) -> tuple[FloatArray, str]:
    """Bootstrap replicates of the dataset-level correlation (documents resampled); a note.

    Pearson sums per document; Spearman and Kendall work on the weighted contingency table
    of the distinct values (Spearman on the items when it would exceed
    :data:`MAX_KENDALL_CELLS` cells; Kendall then has no interval).
    """
    g = int(doc.max()) + 1
    rng = as_generator(ci.seed)
    x_levels, x_codes = np.unique(x, return_inverse=True)
    y_levels, y_codes = np.unique(y, return_inverse=True)
    cells = x_levels.size * y_levels.size
    if method == "pearson":
        sums = np.zeros((g, 6))
        for k, v in enumerate((np.ones_like(x), x, y, x * x, y * y, x * y)):
            sums[:, k] = np.bincount(doc, weights=v, minlength=g)
        parts = []
        for counts in _draws(g, ci.n_boot, rng, max(1, _CELLS_PER_BLOCK // g)):
            n, sx, sy, sxx, syy, sxy = (counts @ sums).T
            den = np.sqrt(np.clip(n * sxx - sx**2, 0, None) * np.clip(n * syy - sy**2, 0, None))
            with np.errstate(divide="ignore", invalid="ignore"):
                parts.append(np.where(den > 0, (n * sxy - sx * sy) / den, np.nan))
        return np.concatenate(parts), ""
    if cells > MAX_KENDALL_CELLS:
        if method == "kendall":
            return np.array([]), (
                f"no interval: {cells} distinct value pairs (Kendall's bootstrap takes "
                f"{MAX_KENDALL_CELLS})"
            )
        parts = []
        for counts in _draws(g, ci.n_boot, rng, max(1, _CELLS_PER_BLOCK // x.size)):
            w = counts[:, doc]
            rx, ry = _midranks(x_codes, x_levels.size, w), _midranks(y_codes, y_levels.size, w)
            parts.append(_pearson_rows(rx, ry, w))
        return np.concatenate(parts), ""
    flat = x_codes * y_levels.size + y_codes
    per_doc = sparse.csr_matrix((np.ones(x.size), (doc, flat)), (g, cells))
    statistic = _tau_b if method == "kendall" else _spearman_tables
    parts = []
    for counts in _draws(g, ci.n_boot, rng, max(1, _CELLS_PER_BLOCK // max(cells, g))):
        tables = np.asarray((per_doc.T @ counts.T).T).reshape(-1, x_levels.size, y_levels.size)
        parts.append(statistic(tables))
    return np.concatenate(parts), ""


def _pearson_rows(x: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    total = w.sum(1, keepdims=True)
    dx = x - (w * x).sum(1, keepdims=True) / total
    dy = y - (w * y).sum(1, keepdims=True) / total
    den = np.sqrt((w * dx * dx).sum(1) * (w * dy * dy).sum(1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (w * dx * dy).sum(1) / den, np.nan)


def _rows_r(x: FloatArray, y: FloatArray) -> FloatArray:
    dx, dy = x - x.mean(1, keepdims=True), y - y.mean(1, keepdims=True)
    den = np.sqrt((dx * dx).sum(1) * (dy * dy).sum(1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 1e-12, (dx * dy).sum(1) / den, np.nan)


def _rows_tau_b(x: FloatArray, y: FloatArray) -> FloatArray:
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    s = (sx * sy).sum((1, 2)) / 2
    m = x.shape[1]
    pairs = m * (m - 1) / 2
    ties_x, ties_y = (sx == 0).sum((1, 2)) - m, (sy == 0).sum((1, 2)) - m
    den = np.sqrt((pairs - ties_x / 2) * (pairs - ties_y / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, s / den, np.nan)


def document_correlations(
    x: FloatArray, y: FloatArray, doc: IntArray, method: Method
) -> FloatArray:
    """Each document's correlation among its items (NaN: fewer than two items or a constant).

    Documents of one size are computed together as rows of a matrix; a document of more
    than 200 items by scipy.
    """
    order = np.argsort(doc, kind="stable")
    sizes = np.bincount(doc)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    result = np.full(sizes.size, np.nan)
    for m in np.unique(sizes[sizes >= 2]):
        docs = np.flatnonzero(sizes == m)
        if m > 200:
            for d in docs:
                idx = order[starts[d] : starts[d] + m]
                result[d] = _scipy(x[idx], y[idx], method)
            continue
        idx = order[starts[docs][:, None] + np.arange(m)[None, :]]
        xs, ys = x[idx], y[idx]
        if method == "spearman":
            xs, ys = stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)
        result[docs] = _rows_tau_b(xs, ys) if method == "kendall" else _rows_r(xs, ys)
    return result


def _interval(replicates: FloatArray, level: float) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _pairs(
    df: pd.DataFrame, judge: object, humans: Sequence[object], columns: Columns
) -> pd.DataFrame:
    """Per item: the judge's score (mean over its rows), the humans' mean, the document."""
    raters = df[columns.rater].astype(str)
    judged = df[raters == str(judge)].groupby(columns.item)[columns.score].mean()
    human = df[raters.isin([str(h) for h in humans])].groupby(columns.item)[columns.score].mean()
    pairs = pd.DataFrame({"x": judged, "y": human}).dropna()
    if columns.cluster and columns.cluster in df.columns:
        docs = df.drop_duplicates(columns.item).set_index(columns.item)[columns.cluster]
        pairs["doc"] = docs.reindex(pairs.index).astype(str).to_numpy()
    return pairs


def meta_correlation(
    df: pd.DataFrame,
    judges: Sequence[object],
    humans: Sequence[object] = ("human",),
    *,
    methods: Sequence[Method] = METHODS,
    ci: CI = CI("percentile", seed=0),
    columns: Columns = DOCUMENTS,
) -> pd.DataFrame:
    """Judge-vs-human Pearson, Spearman and Kendall at the dataset and document levels.

    Args:
        df: Long table (item, rater, score; status and the document column optional).
        judges: The judges (raters) to compare with the humans.
        humans: The human raters; an item's human score is their mean.
        methods: Correlations to compute.
        ci: ``CI("percentile")`` (documents resampled, seeded) or ``CI(None)``.
        columns: Column names; ``cluster`` is the document (source/prompt) column.

    Returns:
        One row per judge x level x method: ``judge, level, method, estimate, ci_low,
        ci_high, n`` (items), ``n_documents`` (used), ``ci_method, note``.

    Examples:
        >>> long = pd.DataFrame({"item": list("abcdef") * 2, "rater": ["j"] * 6 + ["human"] * 6,
        ...     "score": [1, 2, 3, 2, 4, 5, 1, 3, 2, 2, 5, 4], "question": list("xxxyyy") * 2})
        >>> table = meta_correlation(long, ["j"], ci=CI("percentile", n_boot=200, seed=1))
        >>> table[["level", "method", "estimate"]].round(3).head(3).values.tolist()
        [['dataset', 'pearson', 0.815], ['dataset', 'spearman', 0.809],
         ['dataset', 'kendall', 0.643]]
    """
    ci_method = ci.offered(("percentile", None), "meta_correlation").method
    usable = _usable(df, columns)
    rows = []
    for judge in judges:
        pairs = _pairs(usable, judge, humans, columns)
        x, y = pairs["x"].to_numpy(float), pairs["y"].to_numpy(float)
        has_docs = "doc" in pairs.columns
        doc = pd.factorize(pairs["doc"])[0] if has_docs else np.arange(len(pairs))
        for level in ("dataset", "document"):
            for method in methods:
                base: dict[str, object] = {"judge": str(judge), "level": level, "method": method}
                base["n"] = len(pairs)
                if level == "document" and not has_docs:
                    missing = f"no document column {columns.cluster!r}"
                    rows.append({**base, "estimate": np.nan, "n_documents": 0, "note": missing})
                    continue
                found = (_dataset if level == "dataset" else _document)(x, y, doc, method, ci)
                estimate, replicates, n_docs, note = found
                low, high = _interval(replicates, ci.level) if ci_method else (np.nan, np.nan)
                resampled = f"{ci_method}, documents resampled" if replicates.size else ""
                found_row: dict[str, object] = {
                    "estimate": estimate,
                    "ci_low": low,
                    "ci_high": high,
                }
                found_row |= {"n_documents": n_docs, "ci_method": resampled, "note": note}
                rows.append({**base, **found_row})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


#: The columns of :func:`meta_correlation`'s table.
TABLE_COLUMNS = (
    "judge", "level", "method", "estimate", "ci_low", "ci_high", "n", "n_documents",
    "ci_method", "note",
)  # fmt: skip
_NONE = np.array([])


def _dataset(
    x: FloatArray, y: FloatArray, doc: IntArray, method: Method, ci: CI
) -> tuple[float, FloatArray, int, str]:
    """Estimate, replicates, documents and note of the dataset-level correlation."""
    estimate = _scipy(x, y, method)
    n_docs = int(doc.max()) + 1 if doc.size else 0
    if ci.method is None or x.size < 3 or not np.isfinite(estimate):
        return (
            estimate,
            _NONE,
            n_docs,
            "" if np.isfinite(estimate) else "undefined: constant or < 2 items",
        )
    replicates, note = dataset_replicates(x, y, doc, method, ci)
    return estimate, replicates, n_docs, note


def _document(
    x: FloatArray, y: FloatArray, doc: IntArray, method: Method, ci: CI
) -> tuple[float, FloatArray, int, str]:
    """Estimate, replicates, documents and note of the document-level (mean) correlation."""
    per_doc = document_correlations(x, y, doc, method)
    valid = np.isfinite(per_doc)
    estimate = float(per_doc[valid].mean()) if valid.any() else float("nan")
    skipped = int((~valid).sum())
    note = f"{skipped} documents have no correlation (fewer than 2 items, or constant)" * bool(
        skipped
    )
    if ci.method is None or valid.sum() < 2:
        return estimate, _NONE, int(valid.sum()), note
    r, used, g = np.where(valid, per_doc, 0.0), valid.astype(float), per_doc.size
    block = max(1, _CELLS_PER_BLOCK // g)
    parts = [(c @ r) / (c @ used) for c in _draws(g, ci.n_boot, as_generator(ci.seed), block)]
    return estimate, np.concatenate(parts), int(valid.sum()), note
