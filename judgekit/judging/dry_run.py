"""``judgekit judge --dry-run``: the first request as it would be sent and each judge's estimate.

Nothing is sent to be judged and nothing is stored. Unless ``--offline``, each remote judge's
endpoint is asked once for its models listing (:func:`endpoint_down`, a short timeout, no key
sent): any HTTP answer means it is up; a judge whose URL does not answer is named in one line.
The estimate of a remote judge is its size and cost, and a wall time only where the user told
a request or token budget (a floor: the endpoint's own speed is unknown without a call). The
local judge costs nothing to ask, so its wall time is measured: a probe of
:data:`PROBE_REQUESTS` requests (the run's first request, twice) times prompt processing and
generation, and the run's tokens are priced at those rates (:class:`Probe`).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from judgekit.engine import get_provider, preview, resolve_base_url
from judgekit.engine.estimate import CostEstimate
from judgekit.engine.tokens import estimate_message_tokens
from judgekit.judging.batch import at_batch_rates, batch_client
from judgekit.judging.clients import EndpointOptions, local_judge_client, planning_client
from judgekit.judging.command import Prepared
from judgekit.judging.pairs import first_of_each_order
from judgekit.judging.panel import JudgeSpec
from judgekit.local.server import LocalJudgeServer, LocalServerConfig
from judgekit.study.own_prompt import prompt_notice
from judgekit.types import ChatReply, ChatRequest, UsageError

#: Requests a probe of the local judge sends: the run's first request, twice.
PROBE_REQUESTS = 2
#: Seconds the dry run waits for a judge's models listing.
LISTING_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Probe:
    """What a probe of the local judge measured, and the wall time it gives a run.

    The run's first request is sent twice. The server keeps the prompt it has read (llama.cpp
    reuses the common prefix), so the second latency is generation alone: over its generated
    tokens, the time per generated token. The first latency, less its generation at that rate,
    over its prompt tokens is the time per prompt token. (Were the prompt not kept, the second
    rate would hold both and the first would be near zero: the first request's time is
    reproduced either way.) A run's wall time is its prompt tokens (the estimate's, scaled by
    the server's count over the estimate's for the probed request) at the prompt rate plus, per
    request still to send, the probe's generated tokens at the generation rate: one request at
    a time, as the local server answers them.

    Attributes:
        prompt_s: Seconds per prompt token.
        generated_s: Seconds per generated token.
        generated: Tokens the request generated.
        prompt_scale: The server's prompt tokens over the estimate's, for the probed request.
        probe_s: Wall time of the probe's requests.
    """

    prompt_s: float
    generated_s: float
    generated: int
    prompt_scale: float
    probe_s: float

    @classmethod
    def from_replies(cls, request: ChatRequest, first: ChatReply, second: ChatReply) -> Probe:
        """The rates from the two replies to ``request`` (their usage and latency)."""
        generated_s = second.latency_s / max(second.usage.completion_tokens, 1)
        generating = first.usage.completion_tokens * generated_s
        prompt = max(first.usage.prompt_tokens, 1)
        return cls(
            prompt_s=max(first.latency_s - generating, 0.0) / prompt,
            generated_s=generated_s,
            generated=first.usage.completion_tokens,
            prompt_scale=prompt / max(estimate_message_tokens(request.messages), 1),
            probe_s=first.latency_s + second.latency_s,
        )

    def wall_s(self, estimate: CostEstimate) -> float:
        """Estimated seconds to send the requests the store does not answer."""
        to_send = estimate.requests - estimate.stored
        prompt = estimate.prompt_tokens * self.prompt_scale * self.prompt_s
        return prompt + to_send * self.generated * self.generated_s

    def describe(self, estimate: CostEstimate) -> str:
        """One line saying the wall time is an estimate, and what it was measured from."""
        to_send = estimate.requests - estimate.stored
        return (
            f"Estimated wall time (from a probe of {PROBE_REQUESTS} requests to the local judge, "
            f"{self.probe_s:.1f} s: {self.prompt_s * 1000:.2f} ms per prompt token, "
            f"{self.generated_s * 1000:.1f} ms per generated token, {self.generated} tokens "
            f"generated per request; one request at a time, re-asks not included, and as fast "
            f"as the machine is now): ~{clock(self.wall_s(estimate))} for {to_send} requests."
        )


def clock(seconds: float) -> str:
    """``1 h 05 min``, ``12 min 30 s`` or ``40 s``: a duration for reading."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def budget_floor(estimate: CostEstimate, endpoint: EndpointOptions) -> str:
    """A remote judge's wall time: a floor from the told budgets, or why there is none."""
    to_send = estimate.requests - estimate.stored
    floors = []
    if endpoint.requests_per_minute:
        floors.append(60.0 * to_send / endpoint.requests_per_minute)
    if endpoint.tokens_per_minute:
        tokens = estimate.prompt_tokens + estimate.completion_tokens
        floors.append(60.0 * tokens / endpoint.tokens_per_minute)
    if not floors:
        return (
            "No wall-time estimate for a remote endpoint: its speed is unknown without a call "
            "(--rpm or --tpm give a floor)."
        )
    return (
        f"Wall time at least ~{clock(max(floors))} at the --rpm/--tpm budget given (the "
        "endpoint's own speed is not measured in a dry run)."
    )


def measure_local(request: ChatRequest, endpoint: EndpointOptions, err: TextIO) -> Probe:
    """Start the local judge, send it the probe's requests, stop it (nothing is stored).

    Raises:
        LocalJudgeUnavailable: When the ``local`` extra or the model is missing.
        LocalServerError: When the server does not start.
    """
    print(
        f"timing the local judge: the first request, {PROBE_REQUESTS} times (nothing is stored)",
        file=err,
        flush=True,
    )
    with LocalJudgeServer(LocalServerConfig()) as server:
        return asyncio.run(probe(local_judge_client(server, endpoint), request))


async def probe(client: Any, request: ChatRequest) -> Probe:
    """Send ``request`` :data:`PROBE_REQUESTS` times and time it (:class:`Probe`)."""
    try:
        first = await client.complete(request)
        second = await client.complete(request)
    finally:
        await client.aclose()
    return Probe.from_replies(request, first, second)


def previews(prepared: Prepared) -> Iterator[tuple[JudgeSpec, Any, Any, CostEstimate]]:
    """Each judge's planning client, first request and estimate: the checks, run once each.

    Raises:
        UsageError: For inconsistent options (naming the judge of a panel), or a store file
            that cannot be opened.
    """
    for spec in prepared.judges:
        client = planning_client(spec.endpoint)
        try:
            request, estimate = preview(
                prepared.items, prepared.rubric, client, prepared.options(spec)
            )
        except sqlite3.DatabaseError as error:
            raise UsageError(
                f"--store {prepared.store}: cannot open it ({error}); move it away or pass another"
            ) from None
        except UsageError as error:
            if len(prepared.judges) == 1:
                raise
            raise UsageError(f"judge {spec.label}: {error}") from None
        yield spec, client, request, estimate


def dry_run(prepared: Prepared, out: TextIO, err: TextIO | None = None) -> None:
    """Print the first request as it would be sent, then each judge's options and estimate.

    The previews are the run's checks (:func:`previews`): each is done once per judge.
    """
    err = err or sys.stderr
    shown = False
    for spec, client, request, estimate in list(previews(prepared)):
        if not shown:
            print(prompt_notice(prepared.rubric, client, prepared.options(spec)), file=out)
        if prepared.command.batch_api:
            estimate = at_batch_rates(estimate, batch_client(client))
        print(f"judge {spec.label}: {client.model} at {getattr(client, 'base_url', '?')}", file=out)
        if request is not None and not shown:  # the prompt is the same for every judge
            for message in request.messages:
                print(f"--- {message['role']} ---\n{message['content']}", file=out)
            shown = True
            for item in first_of_each_order(prepared.items, prepared.pairs)[1:]:
                other, _ = preview([item], prepared.rubric, client, prepared.options(spec))
                print(f"--- the first request shown in the other order ({item.id}) ---", file=out)
                for message in other.messages if other is not None else ():
                    print(f"--- {message['role']} ---\n{message['content']}", file=out)
        if request is not None:
            print(f"--- options ---\n{json.dumps(request.options, indent=1)}", file=out)
        print(estimate.describe(), file=out)
        print(wall_time(spec.endpoint, request, estimate, err), file=out)
        down = None if prepared.command.judging.offline else endpoint_down(spec.endpoint)
        if down is not None:
            print(f"judge {spec.label}: {down}{replay_hint(estimate)}", file=out)
    print("dry run: nothing was sent to a paid endpoint, nothing was stored.", file=out)


def endpoint_down(endpoint: EndpointOptions) -> str | None:
    """Why a remote judge's endpoint does not answer its models listing (``None``: it answers).

    Any HTTP status (401 without a key, 404 on a server without the route) is an answer; only
    a refused or failed connection, or no answer within :data:`LISTING_TIMEOUT_S`, is down.
    """
    if not endpoint.remote:
        return None
    url = resolve_base_url(get_provider(endpoint.provider), endpoint.base_url)
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=LISTING_TIMEOUT_S):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        why = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return f"its endpoint {url} does not answer ({why}); the run would fail at its first call"


def replay_hint(estimate: CostEstimate) -> str:
    """What to add when the endpoint is down: ``--offline`` when the store answers every request."""
    if estimate.requests and estimate.requests == estimate.stored:
        return "; every request is in the store, so --offline replays it without the endpoint"
    return ""


def replay_refusal(prepared: Prepared, error: UsageError) -> UsageError:
    """``error`` (an endpoint that cannot be reached), saying ``--offline`` when it replays all.

    A run whose every request the store answers needs no endpoint: ``--offline`` replays it.
    """
    try:
        complete = all(replay_hint(estimate) for *_, estimate in previews(prepared))
    except UsageError:
        complete = False
    if not complete:
        return error
    return UsageError(f"{error}; every request is in the store: --offline replays it from there")


def wall_time(
    endpoint: EndpointOptions, request: ChatRequest | None, estimate: CostEstimate, err: TextIO
) -> str:
    """The judge's wall-time line: measured for the local judge, a budget floor for a remote."""
    if estimate.requests == estimate.stored or request is None:
        return "Wall time: every request is answered in the store (a replay, no call)."
    if endpoint.remote:
        return budget_floor(estimate, endpoint)
    return measure_local(request, endpoint, err).describe(estimate)
