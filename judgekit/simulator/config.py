"""Every knob of the simulator, in one frozen dataclass, plus a YAML/mapping loader."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from judgekit.types import UsageError

#: Malformed-reply kinds the simulator can inject, each with its own rate.
MALFORMATION_KINDS: tuple[str, ...] = (
    "fence",  # wrap the reply in a markdown code fence
    "header",  # put a header line ("ID,Score" / "Evaluation:") before the reply
    "prose",  # chatty preamble and sign-off around the reply
    "crlf",  # Windows line endings
    "missing_rows",  # leave out one item (or the score of a single-item reply)
    "duplicate_id",  # score one item twice with conflicting values
    "unknown_id",  # add a row for an ID that was not in the batch (batched formats)
    "out_of_range",  # one score just above the scale's maximum
    "truncated",  # cut the reply mid-way; finish_reason "length"
    "echo_injection",  # copy "ID,score"-looking lines found inside item texts into the reply
    "reasoning_block",  # a <think> block holding a conflicting draft before the answer
    "reasoning_field",  # a conflicting draft in a separate reasoning_content field
    "refusal",  # content null, the refusal text in the message's refusal field
)


@dataclass(frozen=True)
class SimulatorConfig:
    """How the simulated judge scores and how it misbehaves.

    The simulator never reads the items for meaning: a score comes from ``oracle`` (item ID ->
    score) or, for IDs the oracle lacks, from a hash of the item's text onto the scale. Every
    random-looking decision is a hash of (request body, how many times that body was seen
    before, ``seed``), so the same sequence of requests gets the same answers.

    Attributes:
        seed: Seed mixed into every hash (scores, faults, noise).
        oracle: Item ID -> the score the judge should give (for direct scoring: the overall score
            the criterion scores are chosen to reproduce as closely as the scales allow).
        scale: Forces the allowed scores; otherwise they come from the request's JSON schema
            enums, then from the prompt text, then from the output format's default.
        abstain_value: The value written for an abstention (``abstain_ids``).
        abstain_ids: Item IDs the judge abstains on.
        noise_rate: Chance (per item and request) that the score moves one step up or down.
        position_drift: Added to each score times its 0-based position in the batch, then
            clipped and snapped to the scale (for probing batch-position bias).
        model: Model name listed by ``GET /v1/models``; replies echo the requested model.
        latency_s: Base delay before every answer.
        latency_jitter_s: Extra delay, uniform in ``[0, latency_jitter_s)``, hashed per request.
        rate_limit_rpm: Requests allowed per ``rate_window_s`` (None = unlimited); beyond it the
            server answers 429 with ``Retry-After``. Every reply carries OpenAI's
            ``x-ratelimit-limit/remaining/reset-requests`` (and ``-tokens``) headers.
        rate_limit_tpm: Tokens (estimated prompt tokens + ``max_tokens``) allowed per window.
        rate_window_s: Length of the sliding rate-limit window (60 s like the real API).
        error_500_rate: Chance of an HTTP 500 answer.
        timeout_rate: Chance the server sleeps ``timeout_sleep_s`` before answering.
        timeout_sleep_s: How long a "timeout" request sleeps (set above the client's timeout).
        drop_rate: Chance the connection is closed without any reply.
        malformed: Kind (see ``MALFORMATION_KINDS``) -> chance of applying it to a reply.
        logprob_confidence: Probability given to the emitted score token in ``top_logprobs``.
        batch_delay_s: Seconds after creation at which a Batch API job counts as completed.
        batch_polls_to_complete: If set, a batch completes at this many retrieve calls instead.
        port: TCP port on 127.0.0.1 (0 = any free port).
        api_key: When set, every request must carry ``Authorization: Bearer <api_key>``; any
            other (or none) is answered 401 and counted as ``rejected_keys`` (never recorded),
            so a test can check at the server which key each endpoint received.
        keep_log: Keep every request in the log (False: the counts only, for a long benchmark
            whose log of request bodies would outgrow the memory and slow the server down).
        position_bias: A pairwise request's logit in favour of the answer shown first
            (:mod:`judgekit.simulator.pairwise`; 0 = none).
        length_bias: Its logit per ``tanh`` of the length difference / 100 characters.
        self_preference: Its logit for an answer holding ``self_marker`` (the judge's own).
        self_marker: Text that marks an answer as the judge's own (``None``: none is).
        tie_rate: Chance of a tie verdict where the format has one.
    """

    seed: int = 0
    oracle: Mapping[str, float] | None = None
    scale: tuple[int, ...] | None = None
    abstain_value: int = -1
    abstain_ids: frozenset[str] = frozenset()
    noise_rate: float = 0.0
    position_drift: float = 0.0
    model: str = "sim-judge"
    latency_s: float = 0.0
    latency_jitter_s: float = 0.0
    rate_limit_rpm: int | None = None
    rate_limit_tpm: int | None = None
    rate_window_s: float = 60.0
    error_500_rate: float = 0.0
    timeout_rate: float = 0.0
    timeout_sleep_s: float = 5.0
    drop_rate: float = 0.0
    malformed: Mapping[str, float] = field(default_factory=dict)
    logprob_confidence: float = 0.8
    batch_delay_s: float = 0.5
    batch_polls_to_complete: int | None = None
    port: int = 0
    api_key: str | None = None
    keep_log: bool = True
    position_bias: float = 0.0
    length_bias: float = 0.0
    self_preference: float = 0.0
    self_marker: str | None = None
    tie_rate: float = 0.0

    def __post_init__(self) -> None:
        rates = {
            "noise_rate": self.noise_rate,
            "error_500_rate": self.error_500_rate,
            "timeout_rate": self.timeout_rate,
            "drop_rate": self.drop_rate,
            "tie_rate": self.tie_rate,
            **{f"malformed.{kind}": rate for kind, rate in self.malformed.items()},
        }
        for name, rate in rates.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"SimulatorConfig.{name} must be within [0, 1], got {rate}")
        unknown = sorted(set(self.malformed) - set(MALFORMATION_KINDS))
        if unknown:
            raise ValueError(
                f"SimulatorConfig.malformed: unknown kind(s) {unknown}; known: {MALFORMATION_KINDS}"
            )
        if not 0.0 < self.logprob_confidence < 1.0:
            raise ValueError("SimulatorConfig.logprob_confidence must be strictly between 0 and 1")
        if self.scale is not None and list(self.scale) != sorted(set(self.scale)):
            raise ValueError(f"SimulatorConfig.scale must be strictly increasing: {self.scale}")
        for name in ("latency_s", "latency_jitter_s", "timeout_sleep_s", "batch_delay_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"SimulatorConfig.{name} must not be negative")
        if self.rate_window_s <= 0:
            raise ValueError("SimulatorConfig.rate_window_s must be positive")

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], *, base_dir: Path | None = None
    ) -> SimulatorConfig:
        """Build a config from plain data (e.g. parsed YAML).

        Besides the field names, the key ``oracle_csv`` names a CSV file (relative to
        ``base_dir``) with columns ``ID`` and ``score`` that is merged into ``oracle``.

        Args:
            values: Field name -> value.
            base_dir: Directory that relative file names are resolved against.

        Returns:
            The validated config.

        Raises:
            ValueError: On an unknown key or a bad value.
        """
        known = {f.name for f in fields(cls)}
        data = dict(values)
        oracle: dict[str, float] = {
            str(k): float(v) for k, v in (data.pop("oracle", None) or {}).items()
        }
        oracle_csv = data.pop("oracle_csv", None)
        if oracle_csv is not None:
            oracle.update(read_oracle_csv((base_dir or Path.cwd()) / str(oracle_csv)))
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown simulator setting(s): {', '.join(unknown)}")
        if "scale" in data and data["scale"] is not None:
            data["scale"] = tuple(int(v) for v in data["scale"])
        if "abstain_ids" in data:
            data["abstain_ids"] = frozenset(str(v) for v in data["abstain_ids"] or ())
        return cls(oracle=oracle or None, **data)


def read_oracle_csv(path: Path) -> dict[str, float]:
    """Read an ``ID,score`` CSV (with that header) into an oracle mapping.

    Raises:
        ValueError: Naming the file and row of a missing column or a non-numeric score.
    """
    oracle: dict[str, float] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"ID", "score"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
        for row_number, row in enumerate(reader, start=2):
            try:
                oracle[row["ID"]] = float(row["score"])
            except ValueError:
                raise ValueError(
                    f"{path}: row {row_number}, column 'score': not a number: {row['score']!r}"
                ) from None
    return oracle


def load_config(path: Path) -> SimulatorConfig:
    """Load a YAML config file (a mapping of setting -> value); an empty file means defaults."""
    try:  # plain YAML only: a tag such as !!python/object is refused, never constructed
        values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        problem = " ".join(str(getattr(error, "problem", None) or error).split())
        raise UsageError(f"{path}: not a plain YAML settings file ({problem})") from None
    if not isinstance(values, Mapping):
        raise UsageError(f"{path}: expected a mapping of simulator settings")
    try:
        return SimulatorConfig.from_mapping(values, base_dir=path.parent)
    except (TypeError, ValueError) as error:
        raise UsageError(f"{path}: {error}") from None
