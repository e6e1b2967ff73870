"""The calibration record: agreement figures bound to the judge, endpoint, rubric and prompt.

``calibration.json`` sits next to the study. A report notebook reads it, prints it, and warns
when the judge model, the endpoint, the rubric version or the rendered prompt it is about to
report on differ from the ones the figures were measured with.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.atomic import atomic_write_text
from judgekit.labels.table import now_utc, rubric_version
from judgekit.rubrics.base import JinjaRubric
from judgekit.types import UsageError

#: The fields that must match for the agreement figures to still apply.
BOUND_FIELDS: tuple[str, ...] = (
    "judge_model",
    "endpoint",
    "rubric",
    "rubric_version",
    "variant",
    "prompt_hash",
)


def prompt_hash(rubric: JinjaRubric, variant: str = "base") -> str:
    """SHA-256 (first 16 hex digits) of the rendered instructions the judge receives."""
    text = rubric.system_prompt(variant)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def calibration_record(
    *,
    judge_model: str,
    endpoint: str,
    rubric: JinjaRubric,
    variant: str,
    labels: pd.DataFrame,
    agreement: pd.DataFrame,
) -> dict[str, Any]:
    """Build the record (a plain mapping ready for JSON).

    Args:
        judge_model: The judge model's name as recorded in the judgments.
        endpoint: The base URL the judge was called at (never a key).
        rubric: The rubric the judge and the labellers used.
        variant: The prompt variant the figures are about.
        labels: The labels table the figures were computed from.
        agreement: Tidy agreement rows (``statistic`` or ``method``, ``estimate``,
            ``ci_low``, ``ci_high``, ``n``).
    """
    scored = labels[labels["status"] == "ok"]
    name_column = "statistic" if "statistic" in agreement.columns else "method"
    figures = [
        {
            "statistic": str(row[name_column]),
            "rater_a": str(row.get("rater_a", "")),
            "rater_b": str(row.get("rater_b", "")),
            "estimate": float(row["estimate"]),
            "ci_low": float(row["ci_low"]),
            "ci_high": float(row["ci_high"]),
            "n": int(row["n"]),
        }
        for _, row in agreement.iterrows()
    ]
    return {
        "judge_model": judge_model,
        "endpoint": endpoint,
        "rubric": rubric.name,
        "rubric_version": rubric_version(rubric),
        "variant": variant,
        "prompt_hash": prompt_hash(rubric, variant),
        "labellers": sorted(scored["labeller"].astype(str).unique()),
        "labelled_items": sorted(scored["item_id"].astype(str).unique()),
        "label_count": len(scored),
        "agreement": figures,
        "recorded_at": now_utc(),
    }


def write_calibration(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write the record as indented JSON, atomically."""
    return atomic_write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def read_calibration(path: str | Path) -> dict[str, Any] | None:
    """Read a record; ``None`` when the study has none yet.

    Raises:
        UsageError: If the file is not a JSON object with the bound fields.
    """
    source = Path(path)
    if not source.exists():
        return None
    try:
        record = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UsageError(f"{source}: not valid JSON ({error.msg} at line {error.lineno})") from None
    missing = [f for f in BOUND_FIELDS if not isinstance(record, dict) or f not in record]
    if missing:
        raise UsageError(f"{source}: calibration record lacks {missing}")
    return dict(record)


def calibration_changes(record: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What changed since the record was made: one line per bound field that differs.

    Args:
        record: A calibration record.
        current: The same fields for the judging being reported (only those present are
            compared, so a report that does not know the endpoint does not warn about it).
    """
    return [
        f"{field} changed since calibration: {record[field]!r} -> {current[field]!r}"
        for field in BOUND_FIELDS
        if field in current and current[field] != record[field]
    ]


def describe_calibration(record: Mapping[str, Any], fields: Sequence[str] = BOUND_FIELDS) -> str:
    """A few printable lines: what was calibrated, on how many labels, with which figures."""
    lines = [f"calibration recorded {record.get('recorded_at', '?')}"]
    lines += [f"  {field}: {record[field]}" for field in fields]
    lines.append(
        f"  labels: {record.get('label_count', 0)} from {', '.join(record.get('labellers', []))}"
    )
    for figure in record.get("agreement", []):
        pair = " vs ".join(x for x in (figure["rater_a"], figure["rater_b"]) if x)
        lines.append(
            f"  {figure['statistic']} {pair}: {figure['estimate']:.3f} "
            f"[{figure['ci_low']:.3f}, {figure['ci_high']:.3f}] n={figure['n']}"
        )
    return "\n".join(lines)
