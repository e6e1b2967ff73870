"""The format registry: packaged formats, a toy format added from outside, IDs as users write."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.data import DataError, read_table
from judgekit.engine.estimate import estimate_cost
from judgekit.engine.providers import structured_options
from judgekit.formats import FormatSpec, format_names, get_format, parse_reply, register
from judgekit.formats.common import verdict_for_value
from judgekit.formats.reply import ReplyInput
from judgekit.formats.spec import _REGISTRY
from judgekit.rubrics import rubric_from_prompt_file
from judgekit.simulator import SimulatorConfig
from judgekit.simulator.core import Simulator
from judgekit.simulator.formats import fault_applies
from judgekit.types import ChatRequest, Criterion, Item, ItemVerdict, Scale, Status, UsageError

# --- a toy format, written the way a new format module would be ---------------------------

_VERDICT = re.compile(r"VERDICT=(\d+)")


def _toy_parse(reply: ReplyInput) -> tuple[ItemVerdict, ...]:
    (item_id,) = reply.item_ids
    found = [m for line in reply.lines() if (m := _VERDICT.fullmatch(line.strip()))]
    if len(found) != 1:
        return (ItemVerdict.unscored(item_id, Status.UNPARSEABLE, "no single VERDICT=n line"),)
    value = float(found[0].group(1))
    return (verdict_for_value(item_id, value, reply.scale, raw=found[0].group(0), log=reply.log),)


def _toy_schema(scale: Scale, ids: Any, criteria: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"verdict": {"enum": list(scale.allowed)}}}


TEMPLATES = {
    "format_toy_verdict.j2": "## Output format\nEnd with one line: VERDICT=<{{ scale_values }}>\n",
    "reminder_toy_verdict.j2": "Remember: one VERDICT= line.\n",
}


@pytest.fixture
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FormatSpec]:
    folder = tmp_path_factory.mktemp("toy_templates")
    for name, text in TEMPLATES.items():
        (folder / name).write_text(text, encoding="utf-8")
    yield register(
        FormatSpec(
            name="toy_verdict",
            batched=False,
            completion_tokens_per_item=5,
            parse=_toy_parse,
            schema=_toy_schema,
            logprob_anchor="none",
            template_dir=folder,
        )
    )
    _REGISTRY.pop("toy_verdict")  # leave the registry as the package defines it


def test_packaged_formats_are_registered() -> None:
    for name in ("id_score_lines", "rating_json", "direct_scoring_json", "score_line"):
        spec = get_format(name)
        assert spec.name == name
        assert all((Path("judgekit/rubrics") / t).is_file() for t in spec.templates)
    with pytest.raises(UsageError, match="unknown output format 'nope'; choose from"):
        get_format("nope")


def test_a_toy_format_needs_only_its_module_and_templates(toy: FormatSpec, tmp_path: Path) -> None:
    assert "toy_verdict" in format_names()
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Judge whether the answer is right.\n", encoding="utf-8")
    rubric = rubric_from_prompt_file(
        prompt, name="toy", output_format="toy_verdict", scale=Scale((0, 1)),
        input_columns=("Answer",), format_reminder=True,
    )  # fmt: skip
    system, user = rubric.render([Item("a", {"Answer": "42"})], structured=True)
    assert "VERDICT=<0, 1>" in system["content"] and "one VERDICT= line" in user["content"]
    assert rubric.response_schema(["a"])["properties"]["verdict"]["enum"] == [0, 1]
    request = ChatRequest((system, user))
    (ok,) = rubric.parse("Looks right.\nVERDICT=1", ["a"], request=request).verdicts
    assert (ok.status, ok.score) == (Status.OK, 1.0)
    (off,) = rubric.parse("VERDICT=7", ["a"]).verdicts
    assert off.status is Status.OUT_OF_RANGE
    estimate = estimate_cost(
        [(40, 1)], stored=0, output_format=rubric.format, max_tokens=None, prices=None
    )
    assert estimate.completion_tokens == 5


def test_the_simulator_writes_a_registered_format_from_its_schema(
    toy: FormatSpec, tmp_path: Path
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Judge whether the answer is right.\n", encoding="utf-8")
    rubric = rubric_from_prompt_file(
        prompt, name="toy", output_format="toy_verdict", scale=Scale((0, 1)),
        input_columns=("Answer",),
    )  # fmt: skip
    messages = rubric.render([Item("a", {"Answer": "42"})], structured=True)
    body = {"model": "m", "messages": messages}
    body |= structured_options("json_schema", rubric.response_schema(["a"]))
    answer = Simulator(SimulatorConfig(seed=1)).answer_chat(body)
    reply = json.loads(answer.payload["choices"][0]["message"]["content"])
    assert list(reply) == ["verdict"] and reply["verdict"] in (0, 1)
    assert fault_applies("unknown_id", "toy_verdict") is False  # a single-item format


# --- IDs as users write them ----------------------------------------------------------------

UNICODE_IDS = ["kérdés-1", "Ő3", "Q 1", "4/a"]


@pytest.mark.parametrize("separator", [",", ": ", " - ", ";"])
def test_unicode_ids_are_read_from_plain_lines(separator: str) -> None:
    text = "\n".join(f"{i}{separator}{n}" for n, i in enumerate(UNICODE_IDS))
    parsed = parse_reply(
        text, output_format="id_score_lines", scale=Scale((0, 1, 2, 3)), item_ids=UNICODE_IDS
    )
    assert [(v.item_id, v.status, v.score) for v in parsed.verdicts] == [
        (i, Status.OK, float(n)) for n, i in enumerate(UNICODE_IDS)
    ]


def test_an_id_with_an_invisible_character_is_rejected_naming_the_row(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("ID;Answer\nkérdés-1;a\nkérdés\u200b2;b\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        read_table(path, required=("Answer",))
    message = str(error.value)
    assert "\n" not in message and "row 3" in message and "U+200B" in message


def test_criteria_are_required_where_the_format_checks_them() -> None:
    with pytest.raises(ValueError, match="criteria"):
        parse_reply("{}", output_format="direct_scoring_json", scale=Scale((1, 2)), item_ids=["a"])
    assert get_format("direct_scoring_json").needs_criteria
    assert Criterion("c", 1.0, "d").max_score == 5


def test_the_parsing_rules_page_names_every_tolerance() -> None:
    from judgekit.formats import TOLERANCE_DESCRIPTIONS

    page = (Path(__file__).parents[1] / "docs" / "parsing.md").read_text(encoding="utf-8")
    assert [name for name in TOLERANCE_DESCRIPTIONS if f"| `{name}` |" not in page] == []
