"""Real judge replies from public repositories: the clear ones read, and no score invented.

Run from the repository root: ``python3 -m benchmarks.bench_real_replies [--metrics FILE]``.

Single-answer grading replies that public repositories committed with the score their own
extractor recorded (MT-Bench-style `[[N]]` judgments of GPT-4, GPT-3.5-turbo, GPT-4o and a
locally served judge, in English, Japanese, Korean, Chinese, German, French, Indonesian,
Polish, Russian and Vietnamese; shaberi's GPT-5.1 judgments in Japanese with `FINAL SCORE: N`),
listed with commits, paths, licences and the recorded extraction in
`tests/replies/real/sources.yaml`. Nothing from them is committed; they are read from local
mirrors. Each reply goes through `judgekit.formats.parse_reply` with the score marker its
prompt asked for and the prompt's scale; the request text is given so that echoes count.
"Unambiguous", "read" and "invented" are defined in `benchmarks/_real_replies.py`: in short,
a reply is unambiguous when the source's own patterns find exactly the one value the source
recorded, and a score is invented when it differs from that value, when the patterns find two
different values, or when the source recorded nothing and the reply is not in the hand-checked
list. "Refused" replies are unambiguous ones judgekit left unscored; "flagged" are the others
it left unscored (no score recorded, or two values).

Before this reader (issue 22: the reader of commit 64dab50, run by this script on the same
replies on 2026-12-01): GPT-4 39 of 2,544 (1.5 %), GPT-3.5-turbo 0 of 956, GPT-4o 1,378 of
1,380 (99.9 %), GPT-5.1 3,725 of 3,728 (99.9 %) and the local judge 26 of 35 (74.3 %) of
unambiguous replies read, with 1 invented score (the local judge's `Rating: [[8]]` followed by
"resulting in a rating of [[9]] or [[10]]", read as 8).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks._common import markdown_table, write_metrics
from benchmarks._real_replies import MIRRORS, TARGET, available, measure, unambiguous


def main() -> None:
    """Measure, print the table per judge family, write metrics when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, help="write the measured figures as JSON here")
    args = parser.parse_args()
    if not available():
        print(f"Not measured: the source repositories are not mirrored under {MIRRORS}.")
        write_metrics(args.metrics, {"available": False})
        return
    measured = measure()
    rows, families = [], {}
    for family, seen in measured.counts.items():
        clear = unambiguous(seen)
        refused = sum(n for k, n in seen.items() if k.startswith("refused"))
        share = seen["read"] / clear if clear else 1.0
        families[family] = {"unambiguous": clear, "read_share": share}
        rows.append(
            [
                family, ", ".join(sorted(measured.repos[family])), seen.total(), clear,
                f"{seen['read']} ({share:.1%})", refused, seen["other_flagged"],
                seen["hand_checked"], sum(n for k, n in seen.items() if k.startswith("invented")),
            ]
        )  # fmt: skip
    header = [
        "judge family", "sources", "replies", "unambiguous", "read", "refused", "flagged",
        "read, checked by hand", "invented",
    ]  # fmt: skip
    print(markdown_table(header, rows))
    large = [f for f, m in families.items() if m["unambiguous"] >= 100]
    print(
        f"\nTarget: 0 invented and at least {TARGET:.0%} of unambiguous replies read for every "
        f"family with 100+ ({len(large)} families)."
    )
    write_metrics(
        args.metrics,
        {
            "available": True,
            "invented": len(measured.invented),
            "families": families,
            "min_share_100": min((families[f]["read_share"] for f in large), default=1.0),
            "replies": sum(seen.total() for seen in measured.counts.values()),
        },
    )


if __name__ == "__main__":
    main()
