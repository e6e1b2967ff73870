"""The end of a panel run: each judge's rows by status, calls, tokens and cost, and verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

import pandas as pd

from judgekit.data.tidy import final_verdicts
from judgekit.judging.panel import JudgeSpec
from judgekit.judging.panel_run import JudgeOutcome
from judgekit.types import Status

#: Statuses that leave an item without a score because the reply could not be used.
UNSCORED_STATUSES = frozenset(
    {
        Status.MISSING.value,
        Status.DUPLICATE.value,
        Status.OUT_OF_RANGE.value,
        Status.UNPARSEABLE.value,
        Status.INCONSISTENT.value,
    }
)


def _tokens_and_cost(judgments: pd.DataFrame, prices: Mapping[str, float] | None) -> str:
    requests = judgments.drop_duplicates("request_hash")
    prompt, output = int(requests["prompt_tokens"].sum()), int(requests["completion_tokens"].sum())
    text = f"tokens {prompt:,} prompt + {output:,} output"
    if prices:
        cost = (prompt * prices["input"] + output * prices["output"]) / 1_000_000
        text += f", cost ${cost:,.4f}"
    return text + " (every request behind the rows, paid now or before)"


def summarise_judge(
    spec: JudgeSpec, outcome: JudgeOutcome, max_unscored: int, err: TextIO
) -> list[str]:
    """Print one judge's rows by status, calls, tokens and cost; return what failed, if any.

    A judge fails the run when it failed for good, when any of its rows ended ``error`` (the
    call failed for good), or when more than ``max_unscored`` rows have no score because the
    reply could not be used (abstentions are answers and never count).
    """
    print(f"judge {spec.label}", file=err)
    if outcome.judgments is None:
        print(f"failed, nothing judged: {outcome.failure}", file=err)
        return []  # reported with the judges that failed
    judgments = outcome.judgments
    verdicts = final_verdicts(judgments)
    print("status      rows", file=err)
    for status, count in verdicts["status"].value_counts().items():
        print(f"{status:<11} {count:>4}", file=err)
    attrs = judgments.attrs
    print(
        f"calls made {attrs.get('api_calls', 0)}, replayed {attrs.get('replayed', 0)}, "
        f"failed {attrs.get('failed_calls', 0)}; {_tokens_and_cost(judgments, spec.prices)}",
        file=err,
    )
    prefix = f"judge {spec.label}: "
    errors = verdicts[verdicts["status"] == Status.ERROR.value]
    if len(errors):
        reason = str(errors["reason"].iloc[0]).splitlines()[0][:200]
        return [f"{prefix}{len(errors)} of {len(verdicts)} rows ended 'error' (first: {reason})"]
    unscored = verdicts[verdicts["status"].isin(UNSCORED_STATUSES)]
    if len(unscored) > max_unscored:
        # the reason says what the reply looked like and what the rubric expected
        first = " ".join(str(unscored["reason"].iloc[0]).split())[:300]
        return [
            f"{prefix}{len(unscored)} of {len(verdicts)} rows have no score (unusable replies), "
            f"more than --max-unscored {max_unscored}; the first: {first}"
        ]
    return []
