"""The reliability suite as numbers: fault injection, kill -9 and resume, the bad-input corpus.

Run from the repository root: ``python3 -m benchmarks.bench_faults``.

1. Fault injection: the 600 riddle rows x 3 runs (accuracy rubric, 20-row batches, 300 ms
   latency) against a simulator where about 0/10/30/50 % of calls fail or come back malformed,
   in equal shares of eight kinds: HTTP 500, dropped connection, timeout, markdown fence,
   missing rows, duplicated ID, out-of-range score, truncated reply. Rows are ``ok``, flagged
   (any other explicit status) or lost (no final row: must be 0); ``ok`` scores are compared with
   the simulator's oracle. Retries are HTTP requests beyond one per logical call; re-asks are
   logical calls beyond the first ask of each batch.
2. Kill -9: a judging subprocess is killed after N stored replies (10 seeded random N), then
   resumed from its store; the final table is compared with an uninterrupted run and every
   request the simulator received twice is counted.
3. Bad inputs: every file of ``tests/bad_inputs`` that must be rejected, with the message it is
   rejected with (the exact texts are asserted in ``tests/test_data_bad_inputs.py``).
"""

from __future__ import annotations

import math
import random
from typing import Any

import yaml

from benchmarks._common import (
    LATENCY_S,
    Stopwatch,
    begin_benchmark,
    markdown_table,
    rubric_items,
    scored_items,
    write_metrics,
)
from benchmarks._reliability import judge_under_faults, kill_and_resume
from judgekit import config
from judgekit.data import DataError, read_table

RATES = (0.0, 0.1, 0.3, 0.5)
RUNS = 3
FAULT_BATCH = 20
KILL_ITEMS = 60
KILL_BATCH = 4
KILL_POINTS = 10
CORPUS = config.ROOT / "tests" / "bad_inputs"


def fault_rows() -> tuple[list[list[Any]], dict[str, int]]:
    """One table row per fault rate, and the worst counts over all rates."""
    rubric, items, oracle = scored_items("riddle_accuracy")
    rows, worst = [], {"lost": 0, "wrong": 0, "unexplained": 0}
    for rate in RATES:
        with Stopwatch() as clock:
            run = judge_under_faults(
                items, rubric, oracle, rate, runs=RUNS, batch_size=FAULT_BATCH, latency_s=LATENCY_S
            )
        counts = run.counts()
        final = run.final_rows
        ok = final[final["status"] == "ok"]
        wrong = int((ok["score"] != ok["item_id"].map(oracle)).sum())
        flagged = final[final["status"] != "ok"]
        # a flagged row must carry no score, a reason, and the reply it was read from (an empty
        # reply counts: finish_reason shows one arrived) or the error that ended the call
        received = (flagged["finish_reason"] != "") | (flagged["error"] != "")
        unexplained = int((flagged["score"].notna() | (flagged["reason"] == "") | ~received).sum())
        statuses = flagged["status"].value_counts()
        worst = {
            "lost": max(worst["lost"], counts["lost"]),
            "wrong": max(worst["wrong"], wrong),
            "unexplained": max(worst["unexplained"], unexplained),
        }
        rows.append(
            [
                f"{rate:.0%}",
                f"{run.faulty_share:.1%}",
                run.expected_rows,
                counts["ok"],
                counts["flagged"],
                ", ".join(f"{s} {n}" for s, n in statuses.items()) or "-",
                counts["lost"],
                wrong,
                run.retries,
                run.reasks,
                f"{clock.seconds:.1f}",
            ]
        )
    return rows, worst


def kill_rows() -> tuple[list[list[Any]], dict[str, int]]:
    """One table row per kill point."""
    _, items, _ = rubric_items("riddle_accuracy", KILL_ITEMS)
    requests = math.ceil(len(items) / KILL_BATCH)
    points = sorted(random.Random(7).sample(range(1, requests), KILL_POINTS))
    results = kill_and_resume(items, points, batch_size=KILL_BATCH, latency_s=0.2)
    rows = [
        [
            r.kill_after,
            r.stored_at_kill,
            r.pending_at_kill,
            r.in_flight_repeats,
            r.stored_rerequested,
            "yes" if r.identical else "NO",
        ]
        for r in results
    ]
    summary = {
        "points": len(results),
        "not_identical": sum(not r.identical for r in results),
        "stored_rerequested": sum(r.stored_rerequested for r in results),
        "in_flight_repeats": sum(r.in_flight_repeats for r in results),
    }
    return rows, summary


def bad_input_rows() -> tuple[list[list[Any]], int, int]:
    """Each must-fail corpus file with its rejection message; and how many were rejected."""
    cases = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
    rows, rejected_as_expected = [], 0
    must_fail = [case for case in cases if "error" in case]
    for case in must_fail:
        path = CORPUS / case["file"]
        args = {"required": ["Question", "Answer", "Ref_Answer"], **case.get("args", {})}
        try:
            read_table(path, **args)
            message, verdict = "(loaded: NOT rejected)", "no"
        except DataError as error:
            message = str(error).replace(str(CORPUS) + "/", "")
            same = str(error) == case["error"].replace("{path}", str(path))
            verdict = "yes" if same else "different message"
            rejected_as_expected += same
        rows.append([case["file"], message.replace("|", "\\|"), verdict])
    return rows, rejected_as_expected, len(must_fail)


def main() -> None:
    args, source = begin_benchmark(__doc__ or "")
    rows, worst = fault_rows()
    print(f"Fault injection. Items: {source}; {RUNS} runs, {FAULT_BATCH}-row batches.\n")
    print(
        markdown_table(
            [
                "target faulty calls",
                "measured",
                "rows",
                "ok",
                "flagged",
                "flagged as",
                "lost",
                "ok but wrong",
                "retries",
                "re-asks",
                "wall s",
            ],
            rows,
        )
    )
    kills, kill_summary = kill_rows()
    print(
        f"\nKill -9 then resume ({KILL_ITEMS} rows, {KILL_BATCH}-row batches, 2 requests in "
        f"flight, 200 ms latency; {KILL_POINTS} seeded kill points):\n"
    )
    print(
        markdown_table(
            [
                "killed after N stored replies",
                "replies stored at kill",
                "requests pending at kill",
                "in-flight requests paid again",
                "stored replies requested again",
                "final table identical",
            ],
            kills,
        )
    )
    bad, rejected, total = bad_input_rows()
    print(
        f"\nBad-input corpus: {rejected} of {total} must-fail files rejected with the exact "
        "expected one-line message:\n"
    )
    print(markdown_table(["file", "message", "as expected"], bad))
    write_metrics(
        args.metrics,
        {
            **{f"faults_{k}": v for k, v in worst.items()},
            **{f"kill_{k}": v for k, v in kill_summary.items()},
            "bad_rejected": rejected,
            "bad_total": total,
        },
    )


if __name__ == "__main__":
    main()
