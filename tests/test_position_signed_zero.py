"""A slope that is zero in exact arithmetic prints alike whatever sign its round-off has."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgekit.stats import position
from judgekit.stats.examples import batch_judgments


@pytest.mark.parametrize("noise", [-1e-17, 1e-17, -0.0])
def test_round_off_slope_prints_as_zero(monkeypatch: pytest.MonkeyPatch, noise: float) -> None:
    real_fit = position.clustered_ols

    def noisy_fit(*args: object, **kwargs: object) -> pd.DataFrame:
        fit = real_fit(*args, **kwargs)  # type: ignore[arg-type]
        fit.loc[fit["term"] == "batch_index", "estimate"] = noise
        return fit

    monkeypatch.setattr(position, "clustered_ols", noisy_fit)
    judgments, human = batch_judgments()
    effects = position.position_effects(judgments, human, adjust="difference")
    row = effects.set_index("term").loc["batch_index"]
    assert row["estimate"] == 0.0 and not np.signbit(row["estimate"])
    drift = position.leniency_drift_verdict(effects, tolerance=1.0).set_index("term")["drift"]
    assert f"{drift['batch_index']:.3f}" == "0.000"
    assert f"{effects.set_index('term').loc['position', 'estimate']:.3f}" == "0.143"
