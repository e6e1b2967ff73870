"""Cluster-robust OLS, written once: the bias, position and riddles measures all fit through it.

``clustered_ols`` fits ``y = X b`` by OLS with the Liang & Zeger (1986) sandwich covariance
clustered on ``clusters`` (statsmodels ``cov_type="cluster"``: the CR1 small-sample factor
``G/(G-1) (n-1)/(n-k)``) and Student-t intervals with ``G - 1`` degrees of freedom. Fixed
effects nested in a grouping (the item, the question) are absorbed by demeaning within it:
the coefficients are those of the dummy regression (Frisch-Waugh-Lovell) and, as the effects
are nested in the clusters, the small-sample factor counts only the columns of ``X`` (as
Stata's ``xtreg, fe``).

References:
    Liang, K.-Y., & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
    models. Biometrika 73(1), 13-22.
    Cameron, A. C., & Miller, D. L. (2015). A practitioner's guide to cluster-robust
    inference. Journal of Human Resources 50(2), 317-372.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
import statsmodels.api as sm

from judgekit.types import UsageError

#: Columns of :func:`clustered_ols`'s table, in order.
OLS_COLUMNS: tuple[str, ...] = (
    "term",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "p_value",
    "n",
    "n_clusters",
    "dof",
)


def clustered_ols(
    outcome: npt.ArrayLike,
    design: pd.DataFrame,
    clusters: npt.ArrayLike,
    *,
    level: float = 0.95,
    absorb: npt.ArrayLike | None = None,
) -> pd.DataFrame:
    """OLS of ``outcome`` on ``design`` (plus an intercept) with cluster-robust SEs.

    Args:
        outcome: One value per row.
        design: The regressors, one column per term (an ``Intercept`` column is added unless
            ``absorb`` is given).
        clusters: Cluster label per row (the unit that may be correlated).
        level: Confidence level of the t intervals (``G - 1`` degrees of freedom).
        absorb: Group label per row whose fixed effects are absorbed (demeaned away).

    Returns:
        One row per term: ``term``, ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``p_value``,
        ``n``, ``n_clusters``, ``dof``; NaN estimates when there are fewer than two clusters.

    Examples:
        >>> import pandas as pd
        >>> x = pd.DataFrame({"x": [0.0, 1, 2, 3, 4, 5]})
        >>> fit = clustered_ols([0.1, 1.0, 2.1, 2.9, 4.2, 4.9], x, [1, 1, 2, 2, 3, 3])
        >>> shown = fit[["term", "estimate", "se", "n_clusters", "dof"]].round(3)
        >>> print(shown.to_string(index=False))
             term  estimate    se  n_clusters  dof
        Intercept     0.076 0.018           3  2.0
                x     0.983 0.009           3  2.0
    """
    y = pd.Series(np.asarray(outcome, dtype=float), index=design.index)
    x = design.astype(float)
    labels = pd.Series(np.asarray(clusters, dtype=object), index=design.index)
    if labels.isna().any():
        raise UsageError(
            f"row {labels.index[labels.isna()][0]!r} has no cluster: every row needs one "
            "(an item without a cluster is an error, never its own cluster)"
        )
    groups = pd.Series(pd.factorize(labels)[0], index=design.index)
    if absorb is not None:
        by = np.asarray(absorb)
        x = x - x.groupby(by).transform("mean")
        y = y - y.groupby(by).transform("mean")
    else:
        x.insert(0, "Intercept", 1.0)
    n_clusters = int(groups.nunique())
    base = {"n": len(y), "n_clusters": n_clusters, "dof": float(n_clusters - 1)}
    if n_clusters < 2:
        return pd.DataFrame(
            [{"term": term, **base} for term in x.columns], columns=list(OLS_COLUMNS)
        )
    fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups.to_numpy()}, use_t=True)
    bounds = fit.conf_int(alpha=1 - level)
    rows = [
        {
            "term": term,
            "estimate": float(fit.params[term]),
            "se": float(fit.bse[term]),
            "ci_low": float(bounds.loc[term, 0]),
            "ci_high": float(bounds.loc[term, 1]),
            "p_value": float(fit.pvalues[term]),
            **base,
        }
        for term in x.columns
    ]
    return pd.DataFrame(rows, columns=list(OLS_COLUMNS))


def ols_term(fit: pd.DataFrame, term: str) -> dict[str, float]:
    """One term's row of a :func:`clustered_ols` table, as numbers keyed by column.

    Examples:
        >>> import pandas as pd
        >>> x = pd.DataFrame({"x": [1.0, 2, 3, 4]})
        >>> fit = clustered_ols([1.0, 2.1, 2.9, 4.2], x, [1, 1, 2, 2])
        >>> round(ols_term(fit, "x")["estimate"], 3)
        1.04
    """
    row = fit[fit["term"] == term].iloc[0]
    return {column: float(row[column]) for column in OLS_COLUMNS[1:]}
