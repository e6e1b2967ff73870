"""Choose the score the simulated judge writes for each item (oracle or hash, then noise/drift)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from judgekit.formats import get_format
from judgekit.simulator.config import SimulatorConfig
from judgekit.simulator.faults import Draw, unit
from judgekit.simulator.reading import CriterionSpec, JudgeTask, SimItem


@dataclass(frozen=True)
class ItemScore:
    """What the judge says about one item.

    Attributes:
        item: The item.
        value: The score written (the abstain value when ``abstain``); for direct scoring the
            overall score, equal to the weighted mean of ``criteria``.
        abstain: Whether the judge abstains.
        source: ``"oracle"`` or ``"hash"``.
        criteria: Direct scoring only: (criterion, score) pairs.
    """

    item: SimItem
    value: float
    abstain: bool
    source: str
    criteria: tuple[tuple[CriterionSpec, int], ...] = ()


def snap(value: float, allowed: tuple[int, ...]) -> int:
    """The allowed value nearest to ``value`` (the lower one on a tie)."""
    return min(allowed, key=lambda a: (abs(a - value), a))


def number(value: float) -> int | float:
    """An integral float as int (so "5", not "5.0", is written)."""
    return int(value) if float(value).is_integer() else value


def _hashed(seed: int, text: str, allowed: tuple[int, ...], *extra: object) -> int:
    return allowed[int(unit(seed, "score", text, *extra) * len(allowed))]


def _adjust(
    value: float, item: SimItem, allowed: tuple[int, ...], config: SimulatorConfig, draw: Draw
) -> float:
    """Apply seeded noise (one step on the scale) and position drift (clipped, snapped)."""
    if draw.chance("noise", config.noise_rate, item.id):
        index = allowed.index(snap(value, allowed))
        step = 1 if draw.fraction("noise_direction", item.id) < 0.5 else -1
        if not 0 <= index + step < len(allowed):
            step = -step
        if 0 <= index + step < len(allowed):
            value = allowed[index + step]
    if config.position_drift:
        shifted = value + config.position_drift * item.position
        value = snap(min(max(shifted, allowed[0]), allowed[-1]), allowed)
    return value


def weighted_overall(scores: tuple[tuple[CriterionSpec, int], ...]) -> float:
    """Weight-normalised mean of criterion scores, rounded to 2 decimals."""
    total_weight = sum(spec.weight for spec, _ in scores) or 1.0
    return round(sum(spec.weight * value for spec, value in scores) / total_weight, 2)


def _criteria_for(
    target: float, criteria: tuple[CriterionSpec, ...]
) -> tuple[tuple[CriterionSpec, int], ...]:
    """Integer criterion scores whose weighted mean is as close to ``target`` as possible."""
    chosen = {c.name: min(max(math.floor(target), c.low), c.high) for c in criteria}
    for spec in sorted(criteria, key=lambda c: -c.weight):
        current = tuple((c, chosen[c.name]) for c in criteria)
        if chosen[spec.name] < spec.high:
            chosen[spec.name] += 1
            bumped = tuple((c, chosen[c.name]) for c in criteria)
            if abs(weighted_overall(bumped) - target) >= abs(weighted_overall(current) - target):
                chosen[spec.name] -= 1
    return tuple((c, chosen[c.name]) for c in criteria)


def score_items(task: JudgeTask, config: SimulatorConfig, draw: Draw) -> tuple[ItemScore, ...]:
    """Score every item of the task."""
    oracle = config.oracle or {}
    criteria = task.criteria or (
        CriterionSpec(name="Overall", weight=1.0, low=task.allowed[0], high=task.allowed[-1]),
    )
    results = []
    for item in task.items:
        source = "oracle" if item.id in oracle else "hash"
        if item.id in config.abstain_ids:
            results.append(ItemScore(item, float(config.abstain_value), True, source))
            continue
        if get_format(task.output_format).needs_criteria:
            results.append(_direct_score(item, source, criteria, config, draw))
            continue
        base = (
            float(oracle[item.id])
            if source == "oracle"
            else float(_hashed(config.seed, item.text, task.allowed))
        )
        results.append(
            ItemScore(item, _adjust(base, item, task.allowed, config, draw), False, source)
        )
    return tuple(results)


def _direct_score(
    item: SimItem,
    source: str,
    criteria: tuple[CriterionSpec, ...],
    config: SimulatorConfig,
    draw: Draw,
) -> ItemScore:
    """Criterion scores plus their weighted overall, for one direct-scoring item."""
    oracle = config.oracle or {}
    if source == "hash":
        scores = tuple(
            (c, _hashed(config.seed, item.text, tuple(range(c.low, c.high + 1)), c.name))
            for c in criteria
        )
        target = weighted_overall(scores)
    else:
        target = float(oracle[item.id])
    span = tuple(range(min(c.low for c in criteria), max(c.high for c in criteria) + 1))
    adjusted = _adjust(target, item, span, config, draw)
    if source == "oracle" or adjusted != target:
        scores = _criteria_for(adjusted, criteria)
    return ItemScore(item, weighted_overall(scores), False, source, scores)
