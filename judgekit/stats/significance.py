"""Tests that respect the design: families of tests corrected together, permutation within clusters.

* :func:`adjust_p` corrects a family of p-values (Holm 1979 by default, which controls the
  family-wise error rate under any dependence; Benjamini & Hochberg 1995 controls the false
  discovery rate instead) with ``statsmodels.stats.multitest.multipletests`` and keeps the raw
  p-value beside the adjusted one.
* :func:`permutation_within_clusters` tests a difference in means between two labelled groups
  by shuffling the labels *inside* each cluster (e.g. among the answers to one question), so
  the null distribution keeps the clustering and needs neither normality nor interval-scaled
  scores for its validity (Good 2005, Permutation, Parametric and Bootstrap Tests, ch. 3.
  Assumption: under no effect the labels are exchangeable within a cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from statsmodels.stats.multitest import multipletests

from judgekit.stats._bootstrap import SeedLike, as_generator
from judgekit.stats._prep import require_columns
from judgekit.types import UsageError

PAdjust = Literal["holm", "fdr_bh"]
_METHOD_NAMES = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}


def adjust_p(
    table: pd.DataFrame,
    *,
    family: Sequence[str] = (),
    method: PAdjust = "holm",
    p_col: str = "p_value",
) -> pd.DataFrame:
    """Add ``p_adjusted``, ``p_adjust`` (method and family size) beside the raw ``p_col``.

    Each distinct value combination of the ``family`` columns is one family of tests asking
    the same question (e.g. ``family=["method"]`` corrects the naive tests of every judge and
    dimension together); no ``family`` makes the whole table one family. Rows without a
    p-value are left out of their family and keep an empty adjusted value.

    Raises:
        ValueError: on an unknown method or a missing column.

    Examples:
        >>> import pandas as pd
        >>> tests = pd.DataFrame({"term": ["a", "b", "c"], "p_value": [0.01, 0.04, 0.03]})
        >>> print(adjust_p(tests)[["term", "p_value", "p_adjusted"]].to_string(index=False))
        term  p_value  p_adjusted
           a     0.01        0.03
           b     0.04        0.06
           c     0.03        0.06
    """
    if method not in _METHOD_NAMES:
        raise UsageError(f"p-value adjustment must be 'holm' or 'fdr_bh', got {method!r}")
    require_columns(table, [p_col, *family], "table of tests")
    out = table.copy()
    out["p_adjusted"] = np.nan
    out["p_adjust"] = ""
    families = out.groupby(list(family), sort=False).indices.values() if family else [out.index]
    for positions in families:
        index = out.index[positions] if family else out.index
        raw = out.loc[index, p_col].astype(float)
        present = raw.dropna()
        if present.empty:
            continue
        adjusted = multipletests(present.to_numpy(), method=method)[1]
        out.loc[present.index, "p_adjusted"] = adjusted
        out.loc[present.index, "p_adjust"] = f"{_METHOD_NAMES[method]} over {present.size} tests"
    return out


def permutation_within_clusters(
    values: npt.ArrayLike,
    labels: npt.ArrayLike,
    clusters: npt.ArrayLike,
    *,
    n_perm: int = 10_000,
    seed: SeedLike | None = None,
) -> dict[str, float]:
    """Two-sided permutation test of ``mean(values[labels]) - mean(values[~labels])``.

    Labels are shuffled within each cluster (the count of labelled rows per cluster is kept),
    ``p = (1 + #{|T*| >= |T|}) / (1 + n_perm)`` (Phipson & Smyth 2010, never 0).

    Returns:
        estimate (observed difference), p_value, n_perm.

    Examples:
        >>> values = [3.0, 1.0, 4.0, 2.0, 5.0, 2.0, 4.0, 1.0]
        >>> own = [True, False] * 4
        >>> question = [1, 1, 2, 2, 3, 3, 4, 4]
        >>> test = permutation_within_clusters(values, own, question, n_perm=999, seed=0)
        >>> print(test["estimate"], round(test["p_value"], 3))
        2.5 0.123
    """
    x = np.asarray(values, dtype=float)
    flag = np.asarray(labels, dtype=bool)
    if not flag.any() or flag.all():
        return {"estimate": np.nan, "p_value": np.nan, "n_perm": 0.0}
    order = np.argsort(pd.factorize(np.asarray(clusters))[0], kind="stable")
    x, flag = x[order], flag[order]
    codes = pd.factorize(np.asarray(clusters)[order])[0].astype(float)
    n_flag, n_rest = flag.sum(), (~flag).sum()

    def difference(marks: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        own = (marks * x).sum(axis=-1)
        return np.asarray(own / n_flag - (x.sum() - own) / n_rest, dtype=float)

    observed = float(difference(flag))
    rng = as_generator(seed)
    exceed = 0
    for lo in range(0, n_perm, 1000):
        m = min(1000, n_perm - lo)
        # A random key inside each cluster's integer band: sorting shuffles within clusters only.
        shuffled = np.argsort(codes[None, :] + rng.random((m, x.size)), axis=1)
        exceed += int(np.sum(np.abs(difference(flag[shuffled])) >= abs(observed) - 1e-12))
    return {
        "estimate": observed,
        "p_value": (1 + exceed) / (1 + n_perm),
        "n_perm": float(n_perm),
    }
