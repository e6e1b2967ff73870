"""The one interval spec every statistic takes: its checks, and families drawn from one seed."""

import numpy as np
import pandas as pd
import pytest

from judgekit.stats import (
    CI,
    Columns,
    agreement_rates,
    cohen_kappa,
    correlation,
    krippendorff_alpha,
    pairwise_kappa,
)

SCALE = (0.0, 3.0, 5.0)


def three_raters(seed: int, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    rows = []
    for rater, noise in (("a", 0.1), ("b", 0.3), ("c", 0.5)):
        codes = np.where(rng.random(n) < noise, rng.integers(0, 3, n), truth)
        rows += [{"item": i, "rater": rater, "score": SCALE[c]} for i, c in enumerate(codes)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"method": "bootstrap"}, "CI method must be 'analytic', 'fisher', 'percentile', 'bca'"),
        ({"method": "bca", "level": 95}, "CI level must be between 0 and 1, got 95"),
        ({"method": "bca", "n_boot": 0}, "CI n_boot must be positive, got 0"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        CI(**settings)
    assert "\n" not in str(raised.value)


def test_a_statistic_names_the_methods_it_offers() -> None:
    df = three_raters(1)
    with pytest.raises(ValueError, match=r"correlation offers CI methods 'fisher', 'percentile'"):
        correlation(df, "a", "b", ci=CI("analytic"))
    with pytest.raises(ValueError, match=r"krippendorff_alpha\[interval\] offers CI methods None"):
        krippendorff_alpha(df, ci=CI("analytic"))
    with pytest.raises(ValueError, match=r"agreement_rates offers CI methods None, 'analytic', "):
        agreement_rates(df, "a", "b", ci=CI("fisher"))
    with pytest.raises(ValueError, match="explicit seed"):
        cohen_kappa(df, "a", "b", ci=CI("bca"))


def test_level_reaches_the_interval() -> None:
    df = three_raters(2)
    wide = cohen_kappa(df, "a", "b", ci=CI("analytic", level=0.99)).iloc[0]
    narrow = cohen_kappa(df, "a", "b", ci=CI("analytic", level=0.80)).iloc[0]
    assert wide["ci_low"] < narrow["ci_low"] < narrow["ci_high"] < wide["ci_high"]


def test_a_family_draws_in_turn_from_one_seed_and_reproduces() -> None:
    df = three_raters(3)
    boot = CI("percentile", n_boot=300, seed=5)
    family = pairwise_kappa(df, ci=boot, scale=SCALE)
    assert family.equals(pairwise_kappa(df, ci=boot, scale=SCALE))
    # The first pair draws first from the generator; the second continues where it stopped.
    alone = cohen_kappa(df, "a", "b", scale=SCALE, ci=boot).iloc[0]
    assert (family.loc[0, "ci_low"], family.loc[0, "ci_high"]) == (
        alone["ci_low"],
        alone["ci_high"],
    )
    rng = np.random.default_rng(5)
    shared = CI("percentile", n_boot=300, seed=rng)
    first = cohen_kappa(df, "a", "b", scale=SCALE, ci=shared).iloc[0]
    second = cohen_kappa(df, "a", "c", scale=SCALE, ci=shared).iloc[0]
    assert first["ci_low"] == alone["ci_low"]
    assert (family.loc[1, "ci_low"], family.loc[1, "ci_high"]) == (
        second["ci_low"],
        second["ci_high"],
    )


def test_an_int_seed_gives_every_call_the_same_draws() -> None:
    df = three_raters(4).assign(question=lambda d: d["item"] // 3)
    boot = CI("bca", n_boot=200, seed=7)
    clustered = Columns(cluster="question")
    once = cohen_kappa(df, "a", "c", scale=SCALE, ci=boot, columns=clustered)
    assert once.equals(cohen_kappa(df, "a", "c", scale=SCALE, ci=boot, columns=clustered))
    assert once["ci_method"].iloc[0] == "bca, cluster bootstrap"
