"""Run the simulator standalone: ``python -m judgekit.simulator --port 8089 --config sim.yaml``.

With ``--run-batch requests.jsonl --output results.jsonl`` it answers a batch input file
offline instead, in the format ``vllm run-batch`` writes (for testing ``judgekit ingest``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.config import stop_on_signals
from judgekit.simulator.batches import run_batch_file
from judgekit.simulator.config import SimulatorConfig, load_config
from judgekit.simulator.core import Simulator
from judgekit.simulator.server import run_simulator


def serve(
    config_path: Path | None = None,
    port: int | None = None,
    *,
    stop: threading.Event | None = None,
    knobs: Mapping[str, Any] | None = None,
) -> None:
    """Serve until interrupted (or until ``stop`` is set), printing the base URL first.

    Args:
        config_path: YAML file of :class:`SimulatorConfig` settings (None = defaults).
        port: Port to listen on; overrides the file (None = the file's, else a free port).
        stop: Event that ends the server (for embedding); Ctrl-C also ends it.
        knobs: Settings that override the file's (e.g. ``position_bias``).
    """
    config = _configured(config_path, knobs)
    if port is not None:
        config = dataclasses.replace(config, port=port)
    stop = stop or threading.Event()
    with stop_on_signals(), run_simulator(config) as handle:
        try:  # a Ctrl-C right after the address is printed must stop cleanly too
            print(
                "judgekit simulator (not a judge: scores come from an oracle or a hash) at "
                f"{handle.base_url}",
                flush=True,
            )
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        print(f"stopped; stats: {handle.stats()}", flush=True)


def _configured(config_path: Path | None, knobs: Mapping[str, Any] | None) -> SimulatorConfig:
    config = load_config(config_path) if config_path else SimulatorConfig()
    return dataclasses.replace(config, **dict(knobs or {}))


def run_batch(
    source: Path,
    target: Path,
    config_path: Path | None = None,
    *,
    knobs: Mapping[str, Any] | None = None,
) -> tuple[int, int]:
    """Answer a batch input file into a results file offline, as ``vllm run-batch`` does.

    The same answers as the Batch API of a server with this configuration (faults included,
    with ``source="batch"``). Returns (lines answered, lines failed).
    """
    config = _configured(config_path, knobs)
    simulator = Simulator(config)
    return run_batch_file(
        lambda body: simulator.answer_chat(body, source="batch"), source, target, seed=config.seed
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m judgekit.simulator", description=__doc__)
    parser.add_argument(
        "--port", type=int, default=None, help="port on 127.0.0.1 (default: free port)"
    )
    parser.add_argument(
        "--config", type=Path, default=None, help="YAML file of SimulatorConfig settings"
    )
    parser.add_argument(
        "--run-batch", type=Path, default=None, help="answer this batch input file and exit"
    )
    parser.add_argument("--output", type=Path, default=None, help="results file of --run-batch")
    args = parser.parse_args(argv)
    try:
        if args.run_batch is not None:
            if args.output is None:
                parser.error("--run-batch needs --output RESULTS.jsonl")
            answered, failed = run_batch(args.run_batch, args.output, args.config)
            print(f"{answered} lines answered, {failed} failed: {args.output}")
            return 0
        serve(args.config, args.port)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
