"""The report notebooks' selection of one variant and run: a missing one is a parameter to fix."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.reporting.combinations import selected
from judgekit.types import UsageError


def test_a_variant_or_run_not_judged_is_one_line_naming_what_was() -> None:
    verdicts = pd.DataFrame({"variant": ["base", "base", "p1"], "run": [1, 2, 1]})
    assert len(selected(verdicts)) == 3 and len(selected(verdicts, "base", 2)) == 1
    with pytest.raises(UsageError) as raised:
        selected(verdicts, "bse", 1)
    message = str(raised.value)
    assert "\n" not in message and "variant='bse'" in message
    assert "base run 1, base run 2, p1 run 1" in message
