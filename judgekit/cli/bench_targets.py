"""The benchmarks' stated goals, each read from its script's ``--metrics`` JSON.

A check returns ``(met, what was measured)``, or ``None`` when its metric was not measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    """A stated goal and how to read it from the metrics (None = not measured)."""

    benchmark: str
    text: str
    check: Callable[[Mapping[str, Any]], tuple[bool, str] | None]


def _throughput(key: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str]:
        value, lost = m[key], m["lost_rows"]
        return value >= 0.95 and lost == 0, f"{value:.3f} × limit, {lost} lost rows"

    return check


def _request_limit(
    key: str, floor: float
) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str] | None:
        if key not in m:
            return None
        value, errors = m[key], m["request_limit_error_rows"]
        return value >= floor and errors == 0, f"{value:.3f} × limit, {errors} error rows"

    return check


def _faster(key: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str] | None:
        if m.get(key) is None:
            return None
        ratio = m[key] / m["judgekit_s"]
        return ratio > 1.0, f"{m['judgekit_s']:.1f} s vs {m[key]:.1f} s ({ratio:.1f}× faster)"

    return check


def _tokens(rubric: str) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str]:
        ratio = m["token_ratio"][rubric]
        return ratio >= 20.0, f"{ratio:.1f}× fewer"

    return check


def _scale_kinds(
    m: Mapping[str, Any], contenders: tuple[str, ...], sizes: tuple[int, ...]
) -> list[Mapping[str, Any]]:
    """The scale benchmark's medians for these contenders at these sizes, in the order run."""
    kinds = m.get("kinds", {}).values()
    return [k for k in kinds if k["contender"] in contenders and k["items"] in sizes]


def _kind(k: Mapping[str, Any]) -> str:
    return f"{k['contender']} {k['output']} {k['items']:,}"


def _scale_cpu(m: Mapping[str, Any]) -> tuple[bool, str] | None:
    kinds = _scale_kinds(m, ("CLI",), (10_000, 100_000))
    if not kinds:
        return None
    shown = ", ".join(f"{_kind(k)}: {k['cpu_ratio']:.2f}×" for k in kinds)
    return all(k["cpu_ratio"] <= 1.10 for k in kinds), shown


def _scale_quarters(m: Mapping[str, Any]) -> tuple[bool, str] | None:
    kinds = _scale_kinds(m, ("CLI", "judge()"), (10_000, 100_000))
    if not kinds:
        return None
    shown = ", ".join(
        f"{_kind(k)}: {_percent(k['worst_quarter'])} (own {_percent(k['own_worst_quarter'])}, "
        f"its loop's {_percent(k['loop_worst_quarter'])})"
        for k in kinds
    )
    flat = all(k["worst_quarter"] is not None and k["worst_quarter"] <= 0.10 for k in kinds)
    return flat, f"worst quarter vs first: {shown}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _scale_memory(key: str, most: float) -> Callable[[Mapping[str, Any]], tuple[bool, str] | None]:
    def check(m: Mapping[str, Any]) -> tuple[bool, str] | None:
        kinds = _scale_kinds(m, ("CLI", "judge()"), (100_000,))
        if not kinds:
            return None
        shown = ", ".join(f"{_kind(k)}: {k[key]:.2f}×" for k in kinds)
        return all(k[key] <= most for k in kinds), f"{shown} the items file"

    return check


def _real_replies(m: Mapping[str, Any]) -> tuple[bool, str] | None:
    if not m.get("available"):
        return None
    return (
        m["invented"] == 0 and m["min_share_100"] >= 0.99,
        f"{m['invented']} invented; lowest share read {m['min_share_100']:.1%} "
        f"({m['replies']} replies, {len(m['families'])} families)",
    )


def _coverage(m: Mapping[str, Any]) -> tuple[bool, str]:
    cluster = m["coverage_cluster"]
    naive = max(m["coverage_item_bootstrap"], m["coverage_analytic"])
    return (
        0.92 <= cluster <= 0.97 and naive < 0.90,
        f"cluster bootstrap {cluster:.3f}; naive {m['coverage_item_bootstrap']:.3f} (item "
        f"bootstrap), {m['coverage_analytic']:.3f} (analytic); {m['studies']} studies",
    )


TARGETS: tuple[Target, ...] = (
    Target(
        "throughput",
        "Throughput ≥ 0.95 × the limit's maximum, 0 lost rows (default client)",
        _throughput("efficiency_default"),
    ),
    Target(
        "throughput",
        "Throughput ≥ 0.95 × the limit's maximum, 0 lost rows (client given the limits)",
        _throughput("efficiency_told"),
    ),
    Target(
        "throughput",
        "30 requests / window, no latency, not told the limit: ≥ 0.9 × limit, 0 error rows",
        _request_limit("request_limit_default", 0.9),
    ),
    Target(
        "throughput",
        "30 requests / window, no latency, told the limit: ≥ 0.95 × limit, 0 error rows",
        _request_limit("request_limit_told", 0.95),
    ),
    Target(
        "throughput_full",
        "30 requests / 10 s, 10,000 items, not told the limit: ≥ 0.9 × limit, 0 error rows",
        _request_limit("request_limit_default", 0.9),
    ),
    Target(
        "throughput_full",
        "30 requests / 10 s, 10,000 items, told the limit: ≥ 0.95 × limit, 0 error rows",
        _request_limit("request_limit_told", 0.95),
    ),
    Target(
        "scale",
        "`judgekit judge --study` CPU per request ≤ 1.10× a bare AsyncOpenAI loop run at the "
        "same time, 10^4 and 10^5 single-item requests, plain and json_schema",
        _scale_cpu,
    ),
    Target(
        "scale",
        "CPU per request vs the loop in every quarter of their run together within 10 % of "
        "the first quarter's (CLI and judge(), 10^4 and 10^5 items)",
        _scale_quarters,
    ),
    Target(
        "scale",
        "Peak RSS ≤ 2.5× the items file at 10^5 items (CLI and judge())",
        _scale_memory("peak_vs_file", 2.5),
    ),
    Target(
        "scale",
        "Peak RSS before the first reply ≤ 1.5× the items file at 10^5 items (CLI and judge())",
        _scale_memory("first_reply_vs_file", 1.5),
    ),
    Target("peers", "judgekit faster than the sequential loop", _faster("sequential_s")),
    Target("peers", "judgekit faster than inspect_ai", _faster("inspect_s")),
    Target(
        "tokens_cache",
        "≥ 20× fewer prompt tokens per row with 60-row batches (accuracy)",
        _tokens("riddle_accuracy"),
    ),
    Target(
        "tokens_cache",
        "≥ 20× fewer prompt tokens per row with 60-row batches (reasoning)",
        _tokens("riddle_reasoning"),
    ),
    Target(
        "tokens_cache",
        "0 API calls when a finished study is re-run",
        lambda m: (
            m["rerun_http"] == 0 and m["rerun_api_calls"] == 0,
            f"{m['rerun_http']} HTTP requests, {m['rerun_fraction']:.3f} × first-run time",
        ),
    ),
    Target(
        "stats",
        "Quadratic kappa, 2,000-replicate cluster bootstrap, 100,000 pairs in 10,000 clusters "
        "< 1 s",
        lambda m: (
            m["cluster_kappa_s"] < 1.0,
            f"{m['cluster_kappa_s']:.2f} s (item bootstrap {m['item_kappa_s']:.3f} s)",
        ),
    ),
    Target(
        "coverage",
        "95 % cluster-bootstrap kappa intervals cover 92-97 % under a strong cluster effect; "
        "naive ones < 90 %",
        _coverage,
    ),
    Target(
        "faults",
        "No row lost and no score invented at up to 50 % faulty calls",
        lambda m: (
            m["faults_lost"] == 0 and m["faults_wrong"] == 0 and m["faults_unexplained"] == 0,
            f"{m['faults_lost']} lost, {m['faults_wrong']} wrong ok scores, "
            f"{m['faults_unexplained']} flagged rows with a score or no reason, reply or error",
        ),
    ),
    Target(
        "faults",
        "Kill -9 and resume: identical table, no stored reply requested again",
        lambda m: (
            m["kill_not_identical"] == 0 and m["kill_stored_rerequested"] == 0,
            f"{m['kill_points']} kill points: {m['kill_not_identical']} tables differ, "
            f"{m['kill_stored_rerequested']} stored replies re-requested, "
            f"{m['kill_in_flight_repeats']} in-flight requests paid twice",
        ),
    ),
    Target(
        "real_replies",
        "Real judge replies (public repositories): 0 invented, ≥ 99 % of unambiguous ones read "
        "for every judge family with 100+",
        _real_replies,
    ),
)
