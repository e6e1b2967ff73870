"""The judgekit contract: items, scales, verdicts, chat requests and replies, the judge interface.

Everything else in the package speaks these types. They are deliberately small and frozen:

* an :class:`Item` is what is judged (rubric-facing text plus metadata the judge never sees);
* a :class:`Rubric` turns items into chat messages and a judge's reply into :class:`ItemVerdict` s;
* a :class:`JudgeClient` sends one :class:`ChatRequest` and returns one :class:`ChatReply`;
* a verdict whose status is not :attr:`Status.OK` never carries a score (a parse failure is data).

Rendering convention shared by the rubrics, the parsers and the simulator: every rendered user
message wraps each item in ``<item id="ID"> ... </item>`` with the item's text XML-escaped, so
that nothing inside an answer (a ``;``, a newline, a fake ``17,5`` line, a ``</item>``) can leave
its item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

#: The canonical item columns (seeds 000/001); rubrics use a subset, tables may carry more.
CANONICAL_COLUMNS: tuple[str, ...] = (
    "ID",
    "Question",
    "Answer",
    "Ref_Answer",
    "Reasoning",
    "Ref_Reasoning",
)

#: How a rubric asks the judge to answer: the name of a format registered in
#: :mod:`judgekit.formats` (packaged: ``id_score_lines``, ``rating_json``,
#: ``direct_scoring_json``, ``score_line``; ``docs/parsing.md`` describes each).
OutputFormat = str

#: Where a logprob-weighted score is located: after ``"rating":``, after ``SCORE:`` /
#: ``"score":``, after each ``ID,`` (batched), or nowhere (the score is computed).
LogprobAnchor = Literal["rating", "score", "id", "none"]


class UsageError(ValueError):
    """A mistake the user can fix (an option, a file, a parameter); the message is one line.

    Command-line entry points and notebook parameter checks show only the message, never a
    traceback, and exit non-zero. The message names the option or file and what to do.
    """


class Status(StrEnum):
    """The fate of one item in one judging attempt. Only ``OK`` carries a score."""

    OK = "ok"
    ABSTAIN = "abstain"  # the judge used the rubric's abstain value (e.g. -1)
    MISSING = "missing"  # the reply has no line/record for this expected ID
    DUPLICATE = "duplicate"  # the reply gives this ID more than once
    UNKNOWN_ID = "unknown_id"  # the reply scores an ID that was not in the batch
    OUT_OF_RANGE = "out_of_range"  # a number that is not on the rubric's scale
    UNPARSEABLE = "unparseable"  # nothing usable could be read
    INCONSISTENT = "inconsistent"  # the reply's own readings disagree (criteria vs overall,
    # or several different SCORE lines); every value is kept in details
    REFUSED = "refused"  # the provider returned a refusal instead of content (reason = its text)
    ERROR = "error"  # the call failed after all retries


@dataclass(frozen=True)
class Item:
    """One thing to judge.

    Attributes:
        id: Stable identifier, unique within a table (kept as text: "017" and "17" differ).
        fields: Rubric-facing text by canonical column name (``Question``, ``Answer``, ...).
        meta: Everything the judge must not see: model, topic, human labels, source row.
    """

    id: str
    fields: Mapping[str, str]
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scale:
    """The values a rubric allows, in order, plus the values that mean "I abstain".

    ``step`` widens the whole ``allowed`` values to a range: ``None`` allows only them; a
    positive step also allows every ``minimum + k * step`` up to the maximum (``0.5``: half
    points); ``0`` allows any number from the minimum to the maximum (a continuous scale).
    """

    allowed: tuple[int, ...]
    abstain: tuple[int, ...] = ()
    step: float | None = None

    def __post_init__(self) -> None:
        if list(self.allowed) != sorted(set(self.allowed)):
            raise ValueError(f"scale values must be strictly increasing, got {self.allowed}")
        if set(self.allowed) & set(self.abstain):
            raise ValueError("a value cannot be both a score and an abstention")
        if self.step is not None and not 0 <= self.step <= 1:
            raise ValueError(f"a scale's step is 0 (continuous) or at most 1, not {self.step}")

    def accepts(self, value: float) -> bool:
        """Whether ``value`` is a score on this scale (abstain values are not scores)."""
        if value.is_integer() and int(value) in self.allowed:
            return True
        if self.step is None or not self.minimum <= value <= self.maximum:
            return False
        if self.step == 0:
            return True
        steps = (value - self.minimum) / self.step
        return abs(steps - round(steps)) < 1e-9

    def describe(self) -> str:
        """The scale in words: ``1, 2, 3, 4``, ``1-10 in steps of 0.5``, ``any number 0-1``."""
        if self.step == 0:
            text = f"any number from {self.minimum} to {self.maximum}"
        elif self.step is not None and self.step != 1:
            text = f"{self.minimum}-{self.maximum} in steps of {self.step:g}"
        else:
            text = ", ".join(str(v) for v in self.allowed)
        if self.abstain:
            text += f"; abstain {', '.join(str(v) for v in self.abstain)}"
        return text

    @property
    def minimum(self) -> int:
        """Lowest allowed score."""
        return self.allowed[0]

    @property
    def maximum(self) -> int:
        """Highest allowed score."""
        return self.allowed[-1]


@dataclass(frozen=True)
class Criterion:
    """One weighted criterion of a direct-scoring rubric (seed 003); passed in as data.

    Attributes:
        name: Criterion name, as the judge must echo it.
        weight: Relative weight; the overall score is the weight-normalised mean of the criteria.
        description: What the criterion measures.
        min_score: Lowest score on this criterion's scale.
        max_score: Highest score on this criterion's scale.
        levels: Optional anchors as (score, description) pairs.
    """

    name: str
    weight: float
    description: str
    min_score: int = 1
    max_score: int = 5
    levels: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class ItemVerdict:
    """What one reply says about one item.

    Attributes:
        item_id: The item's ID as the batch declared it (or as the judge wrote it, for UNKNOWN_ID).
        status: See :class:`Status`.
        score: The score; present if and only if ``status`` is OK.
        reason: The judge's own reason when it gave one; otherwise why the item is unscored.
        raw: The fragment of the reply this verdict was read from ("" when there is none).
        details: Extra structured content: per-criterion scores, the abstain value, the
            rejected number of an out-of-range reply, ...
    """

    item_id: str
    status: Status
    score: float | None = None
    reason: str = ""
    raw: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.status is Status.OK) != (self.score is not None):
            raise ValueError(f"item {self.item_id}: only an OK verdict carries a score")

    @classmethod
    def unscored(
        cls, item_id: str, status: Status, reason: str, raw: str = "", **details: Any
    ) -> ItemVerdict:
        """Build a verdict without a score (any status but OK)."""
        return cls(item_id=item_id, status=status, reason=reason, raw=raw, details=details)


@dataclass(frozen=True)
class ParsedReply:
    """A whole reply read against the IDs a batch expected.

    ``verdicts`` has exactly one entry per expected ID, in the batch's order, followed by one
    UNKNOWN_ID entry per foreign ID. ``tolerances`` names every leniency the parser needed
    (e.g. ``"markdown_fence"``, ``"header_line"``, ``"crlf"``, ``"prose"``, ``"id_prefix"``).
    """

    verdicts: tuple[ItemVerdict, ...]
    tolerances: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChatRequest:
    """Exactly what is sent: the messages and every generation option (model excluded).

    ``shown`` travels with the request to the reader and is never sent or hashed: each item's
    text as the judge was shown it (see :meth:`Rubric.shown_texts`), so a reply line copied
    from an item is recognised without reading the rendered messages back.
    """

    messages: tuple[Mapping[str, str], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    shown: tuple[str, ...] = ()


@dataclass(frozen=True)
class Usage:
    """Token counts the endpoint reported (0 where it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


#: Per generated token, the alternatives the endpoint returned as (token, logprob).
TopLogprobs = tuple[tuple[tuple[str, float], ...], ...]


@dataclass(frozen=True)
class ChatReply:
    """Exactly what came back for one request."""

    text: str
    model: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    finish_reason: str | None = None
    request_id: str | None = None
    top_logprobs: TopLogprobs | None = None
    http_attempts: int = 1
    reasoning: str | None = None  # a separate reasoning field (reasoning_content / reasoning)
    refusal: str | None = None  # the provider's refusal text when content is null


#: How a client can force the reply's shape; chosen per provider.
StructuredMode = Literal["json_schema", "guided_json", "json_object_schema", "none"]


@runtime_checkable
class JudgeClient(Protocol):
    """Anything that can answer one chat request. The engine is given one; it never builds one."""

    @property
    def model(self) -> str:
        """The judge model's name as recorded next to every score."""
        ...

    @property
    def structured_mode(self) -> StructuredMode:
        """How this endpoint enforces a JSON schema ("none" = plain prompting + parsing)."""
        ...

    @property
    def endpoint(self) -> str:
        """Where the replies come from (a normalised base URL); part of every request's key."""
        ...

    @property
    def supports_seed(self) -> bool:
        """Whether the endpoint honours the ``seed`` option (it is sent only then)."""
        ...

    @property
    def supports_logprobs(self) -> bool:
        """Whether the endpoint returns ``top_logprobs`` on chat completions."""
        ...

    @property
    def max_tokens_param(self) -> str:
        """Name of the output-length option the endpoint expects (``max_tokens``, ...)."""
        ...

    @property
    def max_concurrency(self) -> int:
        """Requests the client sends at once (the engine keeps about twice that many ready)."""
        ...

    async def complete(self, request: ChatRequest) -> ChatReply:
        """Send one request (with the client's own bounded retries) and return the reply."""
        ...

    async def aclose(self) -> None:
        """Release the connections of the running event loop (reopened on the next call)."""
        ...


class FormatFacts(Protocol):
    """What the engine reads of a rubric's output format (``formats.FormatSpec`` has it all).

    A rubric holds its format's spec, found once when the rubric loads, so nothing on the
    request path looks a format up by name.
    """

    @property
    def name(self) -> OutputFormat:
        """The format's registered name (``output_format`` in a rubric's config)."""
        ...

    @property
    def batched(self) -> bool:
        """Whether one reply scores several items."""
        ...

    @property
    def completion_tokens_per_item(self) -> int:
        """Guessed output tokens per item, for the cost estimate."""
        ...

    @property
    def logprob_anchor(self) -> LogprobAnchor:
        """Where the score token sits, for logprob-weighted scores."""
        ...


@runtime_checkable
class Rubric(Protocol):
    """A scoring instrument: prompt templates, a scale, an output format and its parser."""

    name: str
    scale: Scale
    default_batch_size: int
    input_columns: tuple[str, ...]
    required_columns: tuple[str, ...]  # input columns every item must carry
    optional_columns: tuple[str, ...]  # input columns shown only when an item has them
    label_column: str  # default name of the human label column in an items table
    variants: tuple[str, ...]
    verbatim: bool  # a researcher's own prompt, sent as written: plain text unless asked

    @property
    def format(self) -> FormatFacts:
        """The output format's spec, found once when the rubric loaded (batched or not, ...)."""
        ...

    def render(
        self,
        items: Sequence[Item],
        *,
        variant: str = "base",
        structured: bool = False,
        batch_label: str = "",
    ) -> list[dict[str, str]]:
        """The chat messages for one batch (one item if not batched): system (if any), user."""
        ...

    def additions(self, structured: bool) -> tuple[str, ...]:
        """What judgekit adds to a verbatim prompt, in words (empty: sent as written)."""
        ...

    def reask_hint(self, failed: Mapping[str, str]) -> str | None:
        """A re-ask's closing line naming what was wrong (reasons by item ID), or ``None``."""
        ...

    def shown_texts(self, items: Sequence[Item]) -> tuple[str, ...]:
        """Per item, the text :meth:`render` shows the judge (its columns, one per line)."""
        ...

    def response_schema(self, item_ids: Sequence[str]) -> dict[str, Any]:
        """JSON schema of a valid reply for these IDs (IDs and scores as enums)."""
        ...

    def parse(
        self,
        text: str,
        item_ids: Sequence[str],
        *,
        request: ChatRequest | None = None,
        reply: ChatReply | None = None,
    ) -> ParsedReply:
        """Read a reply against the expected IDs.

        ``request`` (what was sent) lets the reader reject lines copied from the items;
        ``reply`` carries the provider's refusal and finish reason.
        """
        ...


#: Columns of the tidy judgments table returned by the engine, in order.
JUDGMENT_COLUMNS: tuple[str, ...] = (
    "item_id",
    "rubric",
    "variant",
    "model",
    "run",
    "attempt",  # 1 = first ask; 2.. = re-asks of failed rows
    "status",
    "score",  # float, NaN unless status == "ok"
    "expected_score",  # logprob-weighted score where available, else NaN
    "reason",
    "batch_index",
    "position",  # 0-based position of the item within its batch
    "request_hash",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "tolerances",  # ";"-joined parser leniencies
    "raw_reply",
)

__all__ = [
    "CANONICAL_COLUMNS",
    "JUDGMENT_COLUMNS",
    "ChatReply",
    "ChatRequest",
    "Criterion",
    "FormatFacts",
    "Item",
    "ItemVerdict",
    "JudgeClient",
    "LogprobAnchor",
    "OutputFormat",
    "ParsedReply",
    "Rubric",
    "Scale",
    "Status",
    "StructuredMode",
    "TopLogprobs",
    "Usage",
    "UsageError",
]
