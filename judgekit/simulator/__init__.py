"""An OpenAI-compatible HTTP simulator of an LLM judge, for tests and benchmarks.

It is NOT a judge. It never reads the items it is sent for meaning: each score comes from an
oracle mapping (item ID -> score) given in the config, or from a hash of the item's text onto
the scale. What it does simulate faithfully is the *transport and format* behaviour of a real
endpoint: the chat-completions, files and batches wire formats the official ``openai`` client
expects, token usage and cached tokens, ``top_logprobs``, rate limits with ``Retry-After``,
server errors, timeouts, dropped connections, and every kind of malformed reply a batched
judge produces. All of its choices are deterministic functions of (request body, how many
times that body was seen, seed), so a rerun of the same requests reproduces every outcome.

Typical use::

    with run_simulator(SimulatorConfig(oracle={"17": 5})) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="unused")
        ...
        sim.stats(), sim.requests
"""

from judgekit.simulator.config import MALFORMATION_KINDS, SimulatorConfig, load_config
from judgekit.simulator.core import LoggedRequest, RequestLog
from judgekit.simulator.server import SimulatorHandle, run_simulator

__all__ = [
    "MALFORMATION_KINDS",
    "LoggedRequest",
    "RequestLog",
    "SimulatorConfig",
    "SimulatorHandle",
    "load_config",
    "run_simulator",
]
