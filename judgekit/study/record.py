"""What a study records about how it was judged, and a client that only replays it.

``judgekit judge --study`` writes :func:`judging_record` into ``study.json`` for every judge:
the engine options and the facts of the client that shape each request (model, endpoint,
structured-output mode, seed and logprob support, the output-cap option's name). From that
record :func:`offline_replay` rebuilds the judgments from the response store alone, through the
same engine, with a :class:`ReplayOnlyClient` that refuses to call anything: a request whose
reply is not stored (because an item or a prompt changed) ends the rebuild with
:class:`~judgekit.engine.session.OfflineStoreMissError`, which names it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from judgekit.engine import JudgeOptions, judge
from judgekit.engine.store import ResponseStore
from judgekit.types import ChatReply, ChatRequest, Item, JudgeClient, Rubric, StructuredMode

#: Engine options that decide which requests are sent and how their replies are read.
RECORDED_OPTIONS = (
    "runs",
    "variants",
    "batch_size",
    "max_reasks",
    "temperature",
    "seed",
    "seed_per_run",
    "max_tokens",
    "structured",
    "logprobs",
    "top_logprobs",
    "mode",
    "context_tokens",
    "shuffle_seed",
)


#: Where a study keeps copies of the researchers' own rubrics (prompt files, rubric folders).
KEPT_RUBRICS = "rubrics"


def keep_rubric(spec: str, study: Path) -> str:
    """The rubric as the study keeps it: a packaged name as is, a user's rubric copied in.

    A prompt file (with its ``.yaml``/``.yml`` sidecar and its variants beside it,
    ``<stem>.<variant><suffix>``) or a rubric folder is copied to
    ``rubrics/<name>-<sha256 of its files, 8 hex>/``, so every judged combination names the
    exact prompt it was judged with, and the study (and its bundle) carries it.

    Returns:
        The packaged name, or the copy's path relative to the study folder.
    """
    from judgekit.rubrics import list_rubrics

    if spec in (*list_rubrics(), *list_rubrics("pairwise")):
        return spec
    source = Path(spec)
    if source.is_dir():
        files = sorted(p for p in source.rglob("*") if p.is_file())
    else:  # the prompt, its settings and variants; not e.g. the items file beside it
        ends = (source.suffix or "\0", ".yaml", ".yml")
        beside = (
            p
            for p in source.parent.iterdir()
            if p.name.startswith(f"{source.stem}.") and p.name.endswith(ends) and p != source
        )
        files = [source, *sorted(p for p in beside if p.is_file())]
    digest = hashlib.sha256()
    base = source if source.is_dir() else source.parent
    for path in files:
        digest.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes())
    kept = Path(KEPT_RUBRICS) / f"{source.stem}-{digest.hexdigest()[:8]}"
    for path in files:
        target = study / kept / path.relative_to(base)
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return (kept if source.is_dir() else kept / source.name).as_posix()


def kept_rubric_hashes(source: str, study: Path) -> dict[str, str]:
    """The SHA-256 of every file of a kept rubric copy, by its path in the study (packaged: none).

    ``source`` is what :func:`keep_rubric` returned; the study refuses a copy whose files no
    longer have these hashes (:func:`judgekit.study.folder.study_rubric`).
    """
    copy = study / source
    if not copy.exists() or Path(source).parts[:1] != (KEPT_RUBRICS,):
        return {}
    folder = copy if copy.is_dir() else copy.parent
    return {
        path.relative_to(study).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def judging_record(
    options: JudgeOptions, client: JudgeClient, rubric: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """How one judge judged: the engine options and the client facts in every request key.

    Args:
        options: The engine options of its latest command.
        client: Its client.
        rubric: The rubric's ``source`` (:func:`keep_rubric`), ``column_map`` and
            ``format_reminder``, as the command gave them.
    """
    recorded = {name: getattr(options, name) for name in RECORDED_OPTIONS}
    recorded["variants"] = list(recorded["variants"])
    return {
        "rubric": dict(rubric or {}),
        "options": recorded,
        "client": {
            "model": client.model,
            "endpoint": client.endpoint,
            "structured_mode": client.structured_mode,
            "supports_seed": client.supports_seed,
            "supports_logprobs": client.supports_logprobs,
            "max_tokens_param": client.max_tokens_param,
        },
    }


class ReplayCallError(RuntimeError):
    """A replay tried to reach an endpoint (it must answer from the store alone)."""


@dataclass(frozen=True)
class ReplayOnlyClient:
    """A :class:`~judgekit.types.JudgeClient` with a recorded judge's facts that never calls.

    Attributes:
        model: The judge model's name, as recorded.
        endpoint: The endpoint the replies came from, as recorded.
        structured_mode: How the endpoint enforced the schema.
        supports_seed: Whether the seed option was sent.
        supports_logprobs: Whether logprobs could be asked for.
        max_tokens_param: The output-cap option's name.
        max_concurrency: Requests replayed at once.
    """

    model: str
    endpoint: str
    structured_mode: StructuredMode
    supports_seed: bool
    supports_logprobs: bool
    max_tokens_param: str
    max_concurrency: int = 8

    async def complete(self, request: ChatRequest) -> ChatReply:
        """Refuse: a replay answers from the store only."""
        raise ReplayCallError(f"{self.model}: a replay tried to call {self.endpoint}")

    async def aclose(self) -> None:
        """Nothing to release."""


def replay_client(record: Mapping[str, Any]) -> ReplayOnlyClient:
    """The never-calling client of a :func:`judging_record`."""
    facts = dict(record["client"])
    facts["structured_mode"] = cast(StructuredMode, facts["structured_mode"])
    return ReplayOnlyClient(**facts)


def offline_replay(
    items: Sequence[Item], rubric: Rubric, record: Mapping[str, Any], store: str | Path
) -> pd.DataFrame:
    """Rebuild one judge's judgments from the store alone (0 calls, by construction).

    Raises:
        OfflineStoreMissError: When a request it renders is not in the store.
    """
    recorded = dict(record["options"])
    recorded["variants"] = tuple(recorded["variants"])
    known = {field.name for field in dataclasses.fields(JudgeOptions)}
    options = JudgeOptions(
        **{k: v for k, v in recorded.items() if k in known},
        store=ResponseStore.open_readonly(store),
        offline=True,
        progress=False,
    )
    return judge(list(items), rubric, replay_client(record), options)
