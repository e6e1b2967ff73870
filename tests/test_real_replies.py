"""Real judge replies held outside this project: 0 invented, >= 99 % of the clear ones read.

The replies, the sources and the definitions of *unambiguous*, *read* and *invented* are in
``benchmarks/_real_replies.py`` (sources: ``tests/replies/real/sources.yaml``; their files are
never committed here). The test prints, per judge family, the replies, the unambiguous ones,
the share read and what the rest became, and fails on any invented score or a family with
100+ unambiguous replies read below 99 %. Without the mirrors it is skipped, saying so.
"""

from __future__ import annotations

import pytest

from benchmarks._real_replies import MIRRORS, SOURCES, TARGET, available, measure, unambiguous


@pytest.mark.real_replies
@pytest.mark.skipif(
    not available(),
    reason=f"the real judge replies are not here: mirror the repositories of {SOURCES.name} "
    f"under {MIRRORS} (or set JUDGEKIT_REAL_REPLIES)",
)
def test_real_judge_replies_are_read_and_never_invented() -> None:
    measured = measure()
    short: list[str] = []
    print("\nfamily: replies, unambiguous, read, other outcomes")
    for family, seen in measured.counts.items():
        clear = unambiguous(seen)
        share = seen["read"] / clear if clear else 1.0
        rest = {k: n for k, n in seen.items() if k != "read"}
        print(f"  {family}: {seen.total()}, {clear}, {share:.1%} {rest}")
        if clear >= 100 and share < TARGET:
            short.append(f"{family}: {share:.1%} of {clear}")
    assert measured.invented == [], "\n".join(measured.invented)
    assert short == [], short
