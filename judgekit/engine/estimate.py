"""A rough token and cost estimate, printed before a run starts (it is never a measurement)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from judgekit.types import FormatFacts


@dataclass(frozen=True)
class CostEstimate:
    """Estimated size of a run's first asks (re-asks and retries come on top).

    Attributes:
        requests: First-attempt requests the run needs.
        stored: How many of them the store already answers.
        prompt_tokens: Estimated prompt tokens of the requests still to send.
        completion_tokens: Estimated output tokens of the requests still to send.
        cost_usd: Estimated price, or ``None`` without prices.
        price_factor: Share of the online price charged (0.5 at a Batch API's rates).
    """

    requests: int
    stored: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    price_factor: float = 1.0

    def at_rate(self, factor: float) -> CostEstimate:
        """The same estimate priced at ``factor`` times the online price (e.g. a Batch API)."""
        cost = None if self.cost_usd is None else self.cost_usd / self.price_factor * factor
        return dataclasses.replace(self, cost_usd=cost, price_factor=factor)

    def describe(self) -> str:
        """One paragraph for the user, saying plainly that it is an estimate."""
        text = (
            f"Estimate (rough; re-asks and retries not included): {self.requests} requests, "
            f"{self.stored} already stored, {self.requests - self.stored} to send, "
            f"~{self.prompt_tokens:,} prompt tokens and ~{self.completion_tokens:,} output tokens."
        )
        rate = f" at Batch API rates ({self.price_factor:.0%} of online)"
        rate = "" if self.price_factor == 1.0 else rate
        if self.cost_usd is None:
            return text + f" No prices given, so no cost estimate{rate}."
        return text + f" Estimated cost{rate}: ${self.cost_usd:,.4f}."


def estimate_cost(
    first_asks: Iterable[tuple[int, int]],
    *,
    stored: int,
    output_format: FormatFacts,
    max_tokens: int | None,
    prices: Mapping[str, float] | None,
) -> CostEstimate:
    """Estimate tokens and cost of the requests still to send.

    Args:
        first_asks: Each first-attempt request's estimated prompt tokens and number of items.
        stored: How many of them the store answers already; the rest are to send, and are
            taken to be of the requests' average size.
        output_format: The rubric's output format (its tokens per item set the output guess).
        max_tokens: The output cap, used as the output guess when set.
        prices: USD per 1M tokens: ``"input"`` and ``"output"``.

    Raises:
        ValueError: If ``prices`` lacks ``input`` or ``output``.
    """
    requests = prompt = completion = 0
    per_item = output_format.completion_tokens_per_item
    for tokens, n_items in first_asks:
        requests += 1
        prompt += tokens
        completion += max_tokens if max_tokens is not None else per_item * n_items
    stored = min(stored, requests)
    share = (requests - stored) / requests if requests else 0.0
    prompt, completion = round(prompt * share), round(completion * share)
    cost = None
    if prices is not None:
        missing = {"input", "output"} - set(prices)
        if missing:
            raise ValueError(f"prices needs USD per 1M tokens for {sorted(missing)}")
        cost = (prompt * prices["input"] + completion * prices["output"]) / 1_000_000
    return CostEstimate(requests, stored, prompt, completion, cost)
