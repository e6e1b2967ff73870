"""A rough token and cost estimate, printed before a run starts (it is never a measurement)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgekit.engine.tokens import estimate_message_tokens
from judgekit.formats import get_format
from judgekit.types import ChatRequest, OutputFormat


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
    requests: Sequence[tuple[ChatRequest, int]],
    *,
    unsent: Sequence[bool],
    output_format: OutputFormat,
    max_tokens: int | None,
    model: str,
    prices: Mapping[str, float] | None,
) -> CostEstimate:
    """Estimate tokens and cost of the requests still to send.

    Args:
        requests: Each first-attempt request with its number of items.
        unsent: Per request, whether it still has to be sent.
        output_format: The rubric's output format (sets the output guess).
        max_tokens: The output cap, used as the output guess when set.
        model: Model name (for tiktoken, when installed).
        prices: USD per 1M tokens: ``"input"`` and ``"output"``.

    Raises:
        ValueError: If ``prices`` lacks ``input`` or ``output``.
    """
    prompt = completion = 0
    per_item = get_format(output_format).completion_tokens_per_item
    for (request, n_items), to_send in zip(requests, unsent, strict=True):
        if not to_send:
            continue
        prompt += estimate_message_tokens(request.messages, model)
        completion += max_tokens if max_tokens is not None else per_item * n_items
    cost = None
    if prices is not None:
        missing = {"input", "output"} - set(prices)
        if missing:
            raise ValueError(f"prices needs USD per 1M tokens for {sorted(missing)}")
        cost = (prompt * prices["input"] + completion * prices["output"]) / 1_000_000
    stored = sum(1 for to_send in unsent if not to_send)
    return CostEstimate(len(requests), stored, prompt, completion, cost)
