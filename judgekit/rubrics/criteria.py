"""Weighted criteria for direct scoring (seed 003): validation and the common scale."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.types import Criterion, Scale

CriterionLike = Criterion | Mapping[str, Any]


def criterion_from_mapping(data: Mapping[str, Any], where: str) -> Criterion:
    """Build a :class:`Criterion` from a mapping (YAML/JSON) with a clear error on bad keys.

    Accepted keys: ``name``, ``weight``, ``description``, ``min_score``, ``max_score`` and
    ``levels`` (a list of ``{score, description}`` mappings or ``[score, description]`` pairs).
    """
    known = {"name", "weight", "description", "min_score", "max_score", "levels"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown criterion key(s) {unknown}; allowed: {sorted(known)}")
    missing = sorted({"name", "weight", "description"} - set(data))
    if missing:
        raise ValueError(f"{where}: criterion is missing {missing}")
    levels: list[tuple[int, str]] = []
    for level in data.get("levels") or ():
        if isinstance(level, Mapping):
            levels.append((int(level["score"]), str(level["description"])))
        else:
            score, text = level
            levels.append((int(score), str(text)))
    return Criterion(
        name=str(data["name"]),
        weight=float(data["weight"]),
        description=str(data["description"]),
        min_score=int(data.get("min_score", 1)),
        max_score=int(data.get("max_score", 5)),
        levels=tuple(levels),
    )


def validate_criteria(criteria: Sequence[CriterionLike], where: str) -> tuple[Criterion, ...]:
    """Check and normalise criteria; raise ``ValueError`` naming the offending criterion.

    Names must be unique, single-line and free of ``|`` (they are echoed in the
    ``### Criterion: name | weight w | scale a-b`` line); weights must be positive; every
    criterion must share one integer scale; level scores must lie on that scale.
    """
    if not criteria:
        raise ValueError(f"{where}: direct scoring needs at least one criterion")
    result = tuple(
        item if isinstance(item, Criterion) else criterion_from_mapping(item, f"{where}[{i}]")
        for i, item in enumerate(criteria)
    )
    seen: set[str] = set()
    for criterion in result:
        label = f"{where}: criterion {criterion.name!r}"
        if not criterion.name.strip() or "|" in criterion.name or "\n" in criterion.name:
            raise ValueError(f"{label}: a name must be one non-empty line without '|'")
        if criterion.name in seen:
            raise ValueError(f"{label}: the name is used twice")
        seen.add(criterion.name)
        if not criterion.weight > 0:
            raise ValueError(f"{label}: the weight must be positive, got {criterion.weight}")
        if criterion.min_score >= criterion.max_score:
            raise ValueError(f"{label}: min_score must be below max_score")
        for score, _ in criterion.levels:
            if not criterion.min_score <= score <= criterion.max_score:
                raise ValueError(f"{label}: level {score} is outside its scale")
    ranges = {(c.min_score, c.max_score) for c in result}
    if len(ranges) > 1:
        raise ValueError(
            f"{where}: all criteria must share one scale so the weighted overall score lies "
            f"on it; got {sorted(ranges)}"
        )
    return result


def common_scale(criteria: Sequence[Criterion]) -> Scale:
    """The integer range every (validated) criterion shares."""
    first = criteria[0]
    return Scale(allowed=tuple(range(first.min_score, first.max_score + 1)))
