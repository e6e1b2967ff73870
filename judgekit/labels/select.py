"""Choose what to label: a seeded sample that covers the judge's whole scale, plus disputed items.

Seed 004 asks that the labelled set cover the score distribution, so the sample is stratified by
the judge's score (optionally also by answering model or topic): strata are visited in turn,
one random item each, until ``n`` are chosen, which gives every stratum an equal share as far
as it has items. Before that, a share of the sample goes to items the judge scored differently
across runs or prompt variants, where a human verdict is most informative.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.stats import plan_kappa_halfwidth
from judgekit.types import UsageError


@dataclass(frozen=True)
class LabellingPlan:
    """What to label and how precise the judge-vs-human kappa will be.

    Attributes:
        items: One row per chosen item: ``item_id, judge_score, stratum, reason`` (``reason``
            is ``disagreement`` or ``stratified``), in labelling order.
        precision: :func:`~judgekit.stats.plan_kappa_halfwidth` for a range of
            label counts including the chosen one.
    """

    items: pd.DataFrame
    precision: pd.DataFrame

    def summary(self) -> str:
        """One sentence: n, the predicted half-width and the assumed kappa."""
        n = len(self.items)
        row = self.precision[self.precision["n"] == n].iloc[0]
        return (
            f"{n} items to label; if judge and human agree at kappa {row.expected_kappa:.2f}, "
            f"the {row.weights} kappa's 95% interval will be about ±{row.half_width:.2f} wide"
        )


def _judge_view(judgments: pd.DataFrame, variant: str, run: int) -> tuple[pd.Series, pd.Series]:
    """Per item: the reference score (``variant``, ``run``) and whether the scores disagree."""
    scored = judgments[judgments["status"] == "ok"]
    if scored.empty:
        raise UsageError("the judgments table has no scored verdicts to sample from")
    reference = scored[(scored["variant"] == variant) & (scored["run"] == run)]
    if reference.empty:
        raise UsageError(f"no scored verdicts for variant {variant!r} run {run}; pick another")
    score = reference.groupby("item_id")["score"].first()
    spread = scored.groupby("item_id")["score"].agg(lambda s: s.max() - s.min())
    return score, spread.reindex(score.index).fillna(0.0) > 0


def _fill_balanced(
    chosen: list[str],
    reasons: dict[str, str],
    queues: dict[str, list[str]],
    group: pd.Series,
    n: int,
    rng: np.random.Generator,
) -> None:
    """Add items until ``n``, each to the group with the fewest so far (ties at random).

    Within a group the score strata take turns, so each model's labels cover the scale.
    """
    strata: dict[str, list[str]] = {}
    for name, members in queues.items():
        if members:
            strata.setdefault(str(group[members[0]]), []).append(name)
    rotation = {g: [str(s) for s in rng.permutation(sorted(names))] for g, names in strata.items()}
    counts = {g: sum(str(group[i]) == g for i in chosen) for g in rotation}
    while len(chosen) < n:
        open_groups = [g for g in sorted(rotation) if any(queues[s] for s in rotation[g])]
        if not open_groups:
            return
        fewest = min(counts[g] for g in open_groups)
        for g in rng.permutation([g for g in open_groups if counts[g] == fewest]):
            if len(chosen) == n:
                return
            name = next(s for s in rotation[g] if queues[s])
            rotation[g].remove(name)
            rotation[g].append(name)
            picked = queues[name].pop()
            chosen.append(picked)
            reasons[picked] = "stratified"
            counts[g] += 1


def select_for_labelling(
    judgments: pd.DataFrame,
    n: int,
    *,
    seed: int,
    levels: Sequence[float],
    groups: Mapping[str, str] | None = None,
    disagreement_share: float = 0.25,
    variant: str = "base",
    run: int = 1,
    expected_kappa: float = 0.8,
    balance_groups: bool = False,
) -> LabellingPlan:
    """Pick ``n`` items for humans to label from one judge's final verdicts on one rubric.

    Args:
        judgments: Final verdicts of one judge model and rubric (engine columns).
        n: How many items to label.
        seed: Random seed (same seed, same sample).
        levels: The rubric's scale (for the precision planner).
        groups: Optional item ID -> answering model (or topic) to stratify by as well.
        disagreement_share: At most this share of ``n`` goes to items whose scores differ
            across runs or variants.
        variant: The prompt variant whose score defines the strata.
        run: The run whose score defines the strata.
        expected_kappa: Agreement assumed by the precision planner.
        balance_groups: Give every group (answering model) an equal share first, then cover
            the scale within each group, so that each model gets enough labels for its own
            corrected mean; otherwise every (score, group) stratum gets an equal share.

    Raises:
        UsageError: If ``n`` is not between 2 and the number of scored items.
    """
    score, disputed = _judge_view(judgments, variant, run)
    if not 2 <= n <= len(score):
        raise UsageError(f"n must be between 2 and {len(score)} (the scored items), got {n}")
    group = pd.Series(score.index.map(lambda i: (groups or {}).get(str(i), "")), score.index)
    stratum = score.map(lambda s: f"{s:g}") + np.where(group != "", " · " + group, "")
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    pool = list(disputed[disputed].index)
    take = min(len(pool), round(disagreement_share * n))
    chosen += [str(i) for i in rng.permutation(np.array(pool, dtype=object))[:take]]
    reasons = dict.fromkeys(chosen, "disagreement")
    queues = {
        name: [str(i) for i in rng.permutation(members.index.to_numpy()) if str(i) not in reasons]
        for name, members in stratum.groupby(stratum)
    }
    if balance_groups:
        _fill_balanced(chosen, reasons, queues, group, n, rng)
    while len(chosen) < n:
        for name in rng.permutation(sorted(queues)):
            if queues[name] and len(chosen) < n:
                picked = queues[name].pop()
                chosen.append(picked)
                reasons[picked] = "stratified"
    index = pd.Index(chosen)
    items = pd.DataFrame(
        {
            "item_id": chosen,
            "judge_score": score.reindex(index).to_numpy(),
            "stratum": stratum.reindex(index).to_numpy(),
            "reason": [reasons[i] for i in chosen],
        }
    )
    counts = sorted({10, 20, 30, 50, 100, n})
    precision = plan_kappa_halfwidth(
        score.to_numpy(), levels, counts, expected_kappa=expected_kappa, seed=seed
    )
    return LabellingPlan(items=items, precision=precision)


#: Fewest labels an answering model needs for its corrected mean to have an interval.
MIN_LABELS_PER_GROUP = 5


def default_label_count(
    judge_scores: Sequence[float] | np.ndarray,
    levels: Sequence[float],
    n_groups: int,
    *,
    target_half_width: float = 0.2,
    expected_kappa: float = 0.8,
    seed: int = 0,
) -> tuple[int, str]:
    """How many items to label by default, and one line saying why.

    The planner's smallest count (in steps of 5) whose predicted kappa half-width is at most
    ``target_half_width``, raised to :data:`MIN_LABELS_PER_GROUP` per answering model, and
    capped at the scored items.
    """
    available = len(judge_scores)
    counts = list(range(10, max(available, 10) + 1, 5))
    precision = plan_kappa_halfwidth(
        np.asarray(judge_scores, float), levels, counts, expected_kappa=expected_kappa, seed=seed
    )
    good = precision[precision["half_width"] <= target_half_width]
    planned = int(good["n"].min()) if not good.empty else available
    per_model = MIN_LABELS_PER_GROUP * max(n_groups, 1)
    n = min(available, max(planned, per_model))
    reason = (
        f"the planner's {planned} for a kappa interval of about ±{target_half_width:g}"
        if not good.empty
        else f"the kappa interval stays wider than ±{target_half_width:g} with every item"
    )
    if n_groups > 1:
        reason += f", at least {MIN_LABELS_PER_GROUP} for each of {n_groups} answering models"
    if n == available and not good.empty:
        reason += f" (all {available} scored items)"
    why = f"{n} labels: {reason}"
    return max(n, min(2, available)), why
