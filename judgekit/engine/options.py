"""How to judge: the one options object the CLI and notebook 01 build and ``judge()`` takes.

``judge(items, rubric, client, JudgeOptions(runs=3))`` and ``judge(items, rubric, client,
runs=3)`` are the same call: keywords are applied to the options with ``dataclasses.replace``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.engine.modes import Mode
from judgekit.engine.session import JudgeSettings
from judgekit.engine.store import ResponseStore
from judgekit.formats.verdicts import PAIRWISE_FORMATS
from judgekit.types import Item, JudgeClient, Rubric, UsageError

#: The most alternatives per token OpenAI's chat API returns (``top_logprobs`` limit).
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class JudgeOptions:
    """Everything about a ``judge()`` call except what is judged, with what and by whom.

    Attributes:
        runs: Independent repeats of every request (distinct store entries, same prompt),
            sent one run after another.
        variants: Prompt variants of the rubric to run.
        batch_size: Items per request (default: the rubric's; 1 for single-item rubrics).
        store: A :class:`ResponseStore` or a path to one; replies are replayed from it.
        max_reasks: Re-asks of missing/unparseable/out-of-range/duplicate rows per batch.
        temperature: Sampling temperature.
        seed: Seed, sent where the endpoint honours seeds (``None`` = never sent).
        seed_per_run: Send ``seed + run - 1`` so runs differ on purpose.
        max_tokens: Output cap (not sent when ``None``).
        structured: Enforce the rubric's JSON schema; ``None`` = when the endpoint can (never
            for a verbatim prompt: it stays plain text unless ``True``).
        logprobs: Ask for top logprobs and record a logprob-weighted ``expected_score`` on ok
            rows (the ``score`` is never replaced; NaN where the score token is not found).
        top_logprobs: Alternatives per token when ``logprobs`` is on.
        mode: ``"independent"`` (each batch its own chat), ``"conversation"`` (one running
            chat per run, see :mod:`judgekit.engine.conversation`), or a registered mode.
        context_tokens: Conversation mode's estimated token budget per request (a new chat
            starts when the next turn would not fit); ``None`` = one chat per run.
        shuffle_seed: Shuffle the items per run with this seed (``None`` = table order).
        progress: Show the estimate and a progress bar on stderr.
        prices: USD per 1M tokens, ``{"input": ..., "output": ...}``, for the estimate.
        offline: Answer only from the store; fail if a reply is missing.
    """

    runs: int = 1
    variants: Sequence[str] = ("base",)
    batch_size: int | None = None
    store: ResponseStore | str | Path | None = None
    max_reasks: int = 2
    temperature: float = 0.0
    seed: int | None = 0
    seed_per_run: bool = False
    max_tokens: int | None = None
    structured: bool | None = None
    logprobs: bool = False
    top_logprobs: int = 20
    mode: str = "independent"
    context_tokens: int | None = None
    shuffle_seed: int | None = None
    progress: bool = True
    prices: Mapping[str, float] | None = None
    offline: bool = False

    def updated(self, **changes: Any) -> JudgeOptions:
        """These options with ``changes`` applied (unknown names are a :class:`UsageError`)."""
        names = {field.name for field in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise UsageError(f"unknown judge option(s) {unknown}; known: {sorted(names)}")
        return dataclasses.replace(self, **changes)

    def batch_size_for(self, rubric: Rubric) -> int:
        """Items per request for ``rubric`` (1 for single-item rubrics)."""
        if not rubric.format.batched:
            return 1
        return rubric.default_batch_size if self.batch_size is None else self.batch_size

    def settings(self, client: JudgeClient, rubric: Rubric) -> JudgeSettings:
        """The per-request settings these options give for ``rubric`` on ``client``.

        ``structured=None`` enforces the schema where the endpoint can, except for a verbatim
        prompt (the researcher's own), which stays plain text unless ``structured=True``.
        """
        structured = self.structured
        if structured is None and rubric.verbatim:
            structured = False
        return JudgeSettings(
            temperature=self.temperature,
            seed=self.seed,
            seed_per_run=self.seed_per_run,
            max_tokens=self.max_tokens,
            structured=client.structured_mode != "none" if structured is None else structured,
            logprobs=self.logprobs,
            top_logprobs=self.top_logprobs,
            max_reasks=self.max_reasks,
            offline=self.offline,
        )

    def check(self, rubric: Rubric, client: JudgeClient, modes: Mapping[str, Mode]) -> None:
        """Refuse inconsistent options before anything is sent.

        Raises:
            UsageError: One line naming the option and what to do.
        """
        for problem in self._problems(rubric, client, modes):
            raise UsageError(problem)

    def _problems(
        self, rubric: Rubric, client: JudgeClient, modes: Mapping[str, Mode]
    ) -> list[str]:
        variants = list(self.variants)
        mode = modes.get(self.mode)
        budgeted = sorted(name for name, known in modes.items() if known.context_tokens)
        unknown = [v for v in variants if v not in rubric.variants]
        repeated = sorted({v for v in variants if variants.count(v) > 1})
        store = self.store
        locked = store if isinstance(store, ResponseStore) and store.readonly else None
        checks = [
            (self.runs < 1, f"runs must be at least 1, got {self.runs}"),
            (self.max_reasks < 0, f"max_reasks must be >= 0, got {self.max_reasks}"),
            (
                bool(unknown) or not variants,
                f"rubric {rubric.name}: unknown variant(s) {unknown}; it has "
                f"{', '.join(rubric.variants)}",
            ),
            (bool(repeated), f"variants must be distinct; repeated: {repeated}"),
            (
                self.batch_size is not None and self.batch_size < 1,
                f"batch_size must be at least 1 (or None for the default), got {self.batch_size}",
            ),
            (
                not 0 <= self.top_logprobs <= MAX_TOP_LOGPROBS,
                f"top_logprobs must be within 0..{MAX_TOP_LOGPROBS}, got {self.top_logprobs}",
            ),
            (
                not rubric.format.batched and self.batch_size not in (None, 1),
                f"rubric {rubric.name} judges one item per request, not {self.batch_size}",
            ),
            (
                bool(self.structured) and client.structured_mode == "none",
                f"{client.model}: this endpoint has no structured mode (structured=True)",
            ),
            (
                self.logprobs and not client.supports_logprobs,
                f"{client.model}: this endpoint is not assumed to return logprobs",
            ),
            (mode is None, f"unknown mode {self.mode!r}; available: {sorted(modes)}"),
            (  # one chat would show the judge its verdict on the other order of the same pair
                rubric.format.name in PAIRWISE_FORMATS
                and mode is not None
                and not mode.requests_alone,
                f"rubric {rubric.name} compares two answers: --mode {self.mode} would let the "
                "judge see one order's verdict while judging the other; use --mode independent",
            ),
            (
                self.context_tokens is not None and mode is not None and not mode.context_tokens,
                f"context_tokens applies to the mode(s) {budgeted} only, not {self.mode!r}",
            ),
            (self.offline and store is None, "offline=True needs a store to answer from"),
            (
                not self.offline and locked is not None,
                f"{locked.path if locked else ''} is open read-only; use offline=True to replay it",
            ),
        ]
        return [message for failed, message in checks if failed]


def check_items(items: Sequence[Item], rubric: Rubric) -> None:
    """Refuse items lacking a column the rubric requires (one line naming item and row).

    Raises:
        UsageError: For the first such item.
    """
    for row, item in enumerate(items, start=1):
        absent = [column for column in rubric.required_columns if column not in item.fields]
        if absent:
            raise UsageError(f"item {item.id!r} (row {row}): missing column(s) {absent}")
