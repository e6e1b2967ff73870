"""Real judge replies held outside this project, and what judgekit's reader makes of them.

``tests/replies/real/sources.yaml`` lists public repositories that committed single-answer
grading replies with the score their own extractor recorded. Their files are never committed
to judgekit: they are read from local mirrors of those repositories (``/work/.mirror/<owner>+
<name>/repo``, the layout of the project's fetch tool, or ``$JUDGEKIT_REAL_REPLIES``).

Definitions (per reply, for the judge family that wrote it):

* **unambiguous**: the source recorded a score on the prompt's scale, and the source's own
  patterns find exactly that one value in the reply (or the whole reply is that number). A
  reply whose patterns find two different values is **ambiguous**.
* **read**: judgekit's ``score_line`` reader, given the marker the source's prompt asked for,
  returns ``ok`` with the recorded score.
* **invented**: an ``ok`` score that differs from the recorded one on an unambiguous reply, any
  ``ok`` score on an ambiguous reply, or an ``ok`` score where the source recorded none that
  is not in the source's ``hand_checked`` list (replies read by hand, with their score).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judgekit.formats import parse_reply
from judgekit.types import ChatRequest, Scale, Status

SOURCES = Path(__file__).parents[1] / "tests" / "replies" / "real" / "sources.yaml"
MIRRORS = Path(os.environ.get("JUDGEKIT_REAL_REPLIES", "/work/.mirror"))
TARGET = 0.99
_BARE = re.compile(r"\s*\[*\s*(\d+(?:\.\d+)?)\s*\]*\s*")


@dataclass(frozen=True)
class RealReply:
    """One judge reply with what its source recorded."""

    family: str
    repo: str
    where: tuple[str, int]  # path, 1-based line
    reply: str
    recorded: float | None
    request_text: str
    scale: Scale
    marker: str
    found: frozenset[float]  # the values the source's own patterns find


def _git_dir(repo: str) -> Path:
    return MIRRORS / repo.replace("/", "+") / "repo"


def _git(repo: str, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(_git_dir(repo)), *args], capture_output=True, check=True
    )
    return done.stdout.decode("utf-8")


def _paths(source: dict[str, Any]) -> list[str]:
    if "paths" in source:
        return list(source["paths"])
    listed = _git(
        source["repo"], "ls-tree", "-r", "--name-only", source["commit"], source["prefix"]
    )
    return [p for p in listed.split("\n") if p and p.endswith(source.get("suffix", ""))]


def _found(text: str, extractor: dict[str, Any]) -> frozenset[float]:
    for pattern in extractor["patterns"]:
        values = {float(v.rstrip(".")) for v in re.findall(pattern, text) if v.rstrip(".")}
        if values:
            return frozenset(values)
    bare = _BARE.fullmatch(text)
    return frozenset({float(bare.group(1))}) if bare else frozenset()


def _records(source: dict[str, Any], path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    text = _git(source["repo"], "show", f"{source['commit']}:{path}")
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 in text
        if line.strip():
            yield number, json.loads(line)


def _fields(kind: str, record: dict[str, Any], path: str) -> tuple[str, Any, str, str, str]:
    """(family, recorded, reply, request text, prompt name) of one record."""
    if kind == "fastchat":
        judge, prompt = record["judge"]
        return judge, record["score"], record["judgment"], record["user_prompt"], prompt
    recorded = record.get("score")
    reply = record.get("judge_output") or ""
    if isinstance(recorded, dict):  # a few records nest the judge's output with its score
        reply = reply or recorded.get("judge_output") or ""
        recorded = recorded.get("score")
    dataset = path.split("/")[3]
    request = f"{record.get('Question', '')}\n{record.get('ModelAnswer', '')}"
    return path.split("/")[2].removeprefix("judge_"), recorded, reply, request, dataset


def real_replies() -> Iterator[RealReply]:
    """Every reply of every source, deduplicated (forks commit the same files)."""
    config = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    seen: set[int] = set()
    for source in config["sources"]:
        extractor = config["extractors"][source["extractor"]]
        for path in _paths(source):
            for number, record in _records(source, path):
                family, recorded, reply, request, prompt = _fields(source["kind"], record, path)
                if hash((reply, request)) in seen or not reply.strip():
                    continue
                seen.add(hash((reply, request)))
                low, high = source["scales"].get(prompt, source["scales"]["default"])
                none = recorded is None or recorded == extractor["none"]
                yield RealReply(
                    source.get("family", family), source["repo"], (path, number), reply,
                    None if none else float(recorded), request,
                    Scale(tuple(range(low, high + 1))), source["marker"],
                    _found(reply, extractor),
                )  # fmt: skip


def _hand_checked() -> dict[tuple[str, int], float]:
    config = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    return {
        (c["path"], c["line"]): float(c["score"])
        for source in config["sources"]
        for c in source.get("hand_checked", [])
    }


def _outcome(real: RealReply, hand_checked: dict[tuple[str, int], float]) -> str:
    """What judgekit did with one reply, in the terms of the module docstring."""
    request = ChatRequest(
        ({"role": "user", "content": f'<item id="1">{html.escape(real.request_text)}</item>'},)
    )
    (verdict,) = parse_reply(
        real.reply, output_format="score_line", scale=real.scale, item_ids=["1"],
        request=request, score_marker=real.marker,
    ).verdicts  # fmt: skip
    ok = verdict.status is Status.OK
    clear = (
        real.recorded is not None
        and real.found == {real.recorded}
        and real.scale.minimum <= real.recorded <= real.scale.maximum
    )
    if clear:
        if not ok:
            return f"refused:{verdict.status.value}"
        return "read" if verdict.score == real.recorded else "invented"
    if not ok:
        return "other_flagged"
    if len(real.found) > 1:
        return "invented:ambiguous"
    return (
        "hand_checked" if hand_checked.get(real.where) == verdict.score else "invented:unrecorded"
    )


def available() -> bool:
    config = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    return all(_git_dir(s["repo"]).is_dir() for s in config["sources"])


@dataclass(frozen=True)
class Measurement:
    """Outcome counts and source repositories per judge family; one line per invented score."""

    counts: dict[str, Counter[str]]
    repos: dict[str, set[str]]
    invented: list[str]


def measure() -> Measurement:
    """Read every real reply and classify what judgekit made of it."""
    hand_checked = _hand_checked()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    repos: dict[str, set[str]] = defaultdict(set)
    invented: list[str] = []
    for real in real_replies():
        outcome = _outcome(real, hand_checked)
        counts[real.family][outcome] += 1
        repos[real.family].add(real.repo)
        if outcome.startswith("invented"):
            invented.append(f"{real.family} {real.where}: {real.reply[-160:]!r}")
    return Measurement(dict(sorted(counts.items())), dict(repos), invented)


def unambiguous(seen: Counter[str]) -> int:
    """How many of a family's replies were unambiguous (read, refused or given another score)."""
    return (
        seen["read"] + seen["invented"] + sum(n for k, n in seen.items() if k.startswith("refused"))
    )
