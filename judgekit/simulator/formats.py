"""How the simulated judge reads and writes each output format, from the formats registry.

The JSON side needs no table: a registered format's own schema (``FormatSpec.schema``, built
on probe IDs and a probe scale) shows which properties a reply has, where the item ID and the
score go, and in which order; :func:`schema_scale` and :func:`json_reply` read and write by
that shape. What a schema cannot say sits in :data:`PROSE`, keyed by format name: how a prompt
without a schema announces the format, the scale to assume, and the plain-text form (with the
item lines an echoing judge is fooled by). A format registered without an entry there is
simulated in its JSON form, recognised only by its schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from judgekit.formats import FormatSpec, format_names, get_format
from judgekit.formats.markers import DEFAULT_MARKER, ScoreMarker
from judgekit.types import Criterion, Scale

#: Probe values no real scale or batch uses: where they land in a schema marks the slot.
PROBE_SCALE = Scale(allowed=(90001, 90002))
PROBE_IDS = ("probe-id-1", "probe-id-2")
PROBE_CRITERIA = (Criterion(name="probe", weight=1.0, description="probe"),)
Path = tuple[str, ...]
#: Scale assumed for a format the simulator has no prose entry for.
FALLBACK_SCALE = (0, 1, 2, 3, 4, 5)
#: One written entry: (item ID, value as text).
Entry = tuple[str, str]


@dataclass(frozen=True)
class Prose:
    """What the simulator knows of a format beyond its schema.

    Attributes:
        markers: Text that, outside the items, says a prompt without a schema asks for it.
        default_scale: The scale assumed when neither schema, prompt nor config names one.
        plain: Writes the plain-text reply from entries, an explanation and the prompt's score
            marker; ``None``: the JSON form is the reply.
        echo: A line inside an item that a fooled judge repeats as a score (group 1 the ID,
            group 2 the score; a single group is the score of the item it sits in).
    """

    markers: tuple[str, ...]
    default_scale: tuple[int, ...]
    plain: Callable[[Sequence[Entry], str, ScoreMarker | None], str] | None = None
    echo: re.Pattern[str] | None = None


def _id_lines(entries: Sequence[Entry], _reason: str, _marker: ScoreMarker | None) -> str:
    return "\n".join(f"{item_id},{value}" for item_id, value in entries)


def _score_lines(entries: Sequence[Entry], _reason: str, marker: ScoreMarker | None) -> str:
    """The explanation, then one line per entry in the prompt's marker (``SCORE: N`` if none).

    A JSON marker (``{"score": N}``) is the whole reply, the explanation a member beside it.
    """
    explanation = "The simulator assigns this score from its oracle or a hash, without reading."
    shown = marker or DEFAULT_MARKER
    if shown.json_key is not None:
        key = shown.json_key
        return "\n".join(
            json.dumps({"explanation": explanation, key: json.loads(value)}) for _, value in entries
        )
    return "\n".join([explanation, *(shown.shown(value) for _, value in entries)])


#: Per format name, tried in this order on a prompt without a schema; the last is the fallback.
PROSE: Mapping[str, Prose] = {
    "direct_scoring_json": Prose(("overallScore",), (1, 2, 3, 4, 5)),
    "rating_json": Prose(('"rating"',), tuple(range(11))),
    "score_line": Prose(
        ("SCORE:", '"explanation"'),
        (1, 2, 3, 4),
        plain=_score_lines,
        echo=re.compile(r"^\s*SCORE:\s*(-?\d+)\s*$", re.MULTILINE),
    ),
    "id_score_lines": Prose(
        (),
        (0, 1, 2, 3, 4, 5),
        plain=_id_lines,
        echo=re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*$", re.MULTILINE),
    ),
}


@dataclass(frozen=True)
class Shape:
    """Where a format's schema puts things: every property path, the ID and score slots."""

    spec: FormatSpec
    schema: dict[str, Any]
    paths: frozenset[Path]
    id_path: Path | None
    score_path: Path | None


def _walk(node: Any, path: Path = ()) -> list[tuple[Path, dict[str, Any]]]:
    """Every property of a schema with its path (``"*"`` stands for an array's items)."""
    if not isinstance(node, Mapping):
        return []
    found: list[tuple[Path, dict[str, Any]]] = []
    for key, child in (node.get("properties") or {}).items():
        found += [((*path, key), dict(child)), *_walk(child, (*path, key))]
    items = node.get("items")
    if not isinstance(items, Mapping) and node.get("prefixItems"):
        items = node["prefixItems"][0]  # llama.cpp's one-slot-per-ID form of a batch schema
    if isinstance(items, Mapping):
        found += _walk(items, (*path, "*"))
    return found


def _slot(properties: list[tuple[Path, dict[str, Any]]], values: Sequence[Any]) -> Path | None:
    wanted = sorted(values)
    return next((p for p, s in properties if sorted(s.get("enum") or ()) == wanted), None)


def shape(name: str) -> Shape:
    """The schema shape of the registered format ``name``."""
    return _shape_of(get_format(name))


@cache
def _shape_of(spec: FormatSpec) -> Shape:
    ids = PROBE_IDS if spec.batched else PROBE_IDS[:1]
    criteria = PROBE_CRITERIA if spec.needs_criteria else ()
    schema = spec.schema(PROBE_SCALE, ids, criteria)
    properties = _walk(schema)
    return Shape(
        spec=spec,
        schema=schema,
        paths=frozenset(p for p, _ in properties),
        id_path=_slot(properties, ids) if spec.batched else None,
        score_path=_slot(properties, PROBE_SCALE.allowed),
    )


def format_from_schema(schema: Mapping[str, Any]) -> str | None:
    """The registered format whose schema has exactly the properties of ``schema``."""
    paths = frozenset(p for p, _ in _walk(schema))
    return next((name for name in format_names() if shape(name).paths == paths), None)


def schema_scale(name: str, schema: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The scale a request's schema allows in the format's score slot (enum or range)."""
    where = shape(name).score_path
    spec = dict(_walk(schema)).get(where) if where else None
    if not spec:
        return None
    if "enum" in spec:
        return tuple(sorted(int(v) for v in spec["enum"]))
    if "minimum" in spec and "maximum" in spec:
        return tuple(range(int(spec["minimum"]), int(spec["maximum"]) + 1))
    return None


def format_from_prompt(instructions: str) -> str:
    """The format a prompt without a schema asks for, by the markers in :data:`PROSE`."""
    *marked, fallback = PROSE
    found = (name for name in marked if any(m in instructions for m in PROSE[name].markers))
    return next(found, fallback)


def fault_applies(kind: str, name: str) -> bool:
    """Whether a malformation kind makes sense for a format.

    A foreign ID needs a batched format; an echoed score line needs a plain-text form.
    """
    if kind == "unknown_id":
        return get_format(name).batched
    if kind == "echo_injection":
        found = PROSE.get(name)
        return found is not None and found.echo is not None
    return True


def json_reply(name: str, entries: Sequence[Entry], reason: str) -> str:
    """The reply in the format's JSON form, properties in the schema's order.

    A batched format gets one record per entry in its array; a single-item format writes its
    score member once per entry (a repeated key, as a confused judge would) and every text
    member as ``reason``.
    """
    found = shape(name)
    properties = (found.schema.get("properties") or {}).items()
    if found.id_path is not None and found.score_path is not None:
        array, id_key, score_key = found.id_path[0], found.id_path[-1], found.score_path[-1]
        records = [{id_key: i, score_key: json.loads(v)} for i, v in entries]
        return json.dumps({array: records}, ensure_ascii=False)
    score_member = found.score_path[-1] if found.score_path else None
    members: list[str] = []
    for key, _ in properties:
        if key == score_member:
            members += [f'"{key}": {value}' for _, value in entries]
        else:
            members.append(f'"{key}": {json.dumps(reason)}')
    return "{" + ", ".join(members) + "}"


def default_scale(name: str) -> tuple[int, ...]:
    """The scale assumed for a format when nothing in the request names one."""
    found = PROSE.get(name)
    return found.default_scale if found else FALLBACK_SCALE
