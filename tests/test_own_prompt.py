"""A researcher's own prompt from the CLI: sent as written, its dry run, its errors, its re-asks.

The endpoint is a real HTTP server behind the real ``openai`` client; it keeps the bytes of
every request, so the tests compare what arrived with the prompt file (filled by Python's own
``str.format``, not by judgekit), and replies with the texts each test queues.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from json_endpoint import JsonEndpoint

from judgekit import config
from judgekit.cli.main import main
from judgekit.engine import JudgeOptions, OpenAIJudge, judge
from judgekit.rubrics import load_rubric
from judgekit.types import Item

EXAMPLE = Path(__file__).parent / "fixtures" / "own_prompt"
PROMPT = EXAMPLE / "mt_bench_single.txt"


class _Recorder(JsonEndpoint):
    """Keeps each request's bytes and answers with the next queued reply text."""

    def answer(self) -> tuple[int, dict[str, Any]]:
        server: Any = self.server
        server.bodies.append(self.body)
        if server.by_content:  # concurrent requests: the reply depends on what was asked
            text = next(reply for key, reply in server.by_content.items() if key in self.body)
        else:
            text = server.replies.pop(0) if server.replies else "Fine.\nRating: [[5]]"
        message = {"role": "assistant", "content": text}
        return 200, {
            "id": f"chatcmpl-{len(server.bodies)}",
            "object": "chat.completion",
            "created": 0,
            "model": "judge-m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


@pytest.fixture
def endpoint() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.bodies, server.replies, server.by_content = [], [], {}
    server.url = f"http://127.0.0.1:{server.server_port}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _judge_args(endpoint: Any, out: Path, *extra: str) -> list[str]:
    return [
        "judge", str(EXAMPLE / "items.csv"), "--rubric", str(PROMPT), "--provider", "generic",
        "--base-url", endpoint.url, "--model", "judge-m", "--output", str(out), *extra,
    ]  # fmt: skip


def test_the_published_prompt_reaches_the_endpoint_exactly_as_written(
    endpoint: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint.by_content = {
        b"Saturn": "Wrong planet.\n\nRating: [[2]]",
        b"": "Right.\nRating: [[9]]",
    }
    out = tmp_path / "judgments.csv"
    assert main(_judge_args(endpoint, out, "--labels-column", "Human")) == 0
    items = pd.read_csv(EXAMPLE / "items.csv", dtype=str)
    template = PROMPT.read_text(encoding="utf-8").removesuffix("\n")
    assert len(endpoint.bodies) == 2
    arrived = {json.loads(body)["messages"][1]["content"]: body for body in endpoint.bodies}
    for row in items.itertuples():  # requests go concurrently: matched by content, not order
        expected = template.format(question=row.Question, answer=row.Answer)
        body = arrived[expected]
        sent = json.loads(body)
        assert sent["messages"] == [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": expected},
        ]
        assert not {"response_format", "extra_body", "guided_json", "tools"} & set(sent)
        # the exact characters are in the bytes on the wire, JSON-escaped as the client writes
        assert (
            json.dumps(expected).encode() in body
            or json.dumps(expected, ensure_ascii=False).encode() in body
        )
    table = pd.read_csv(out, dtype={"item_id": str})
    assert table["score"].tolist() == [9.0, 2.0]
    first_line = capsys.readouterr().err.splitlines()[0]
    assert first_line == f"prompt: {PROMPT} sent as written; judgekit adds nothing"


def test_the_dry_run_says_what_judgekit_adds_and_sends_nothing(
    endpoint: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judgments.csv"
    assert main([*_judge_args(endpoint, out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == f"prompt: {PROMPT} sent as written; judgekit adds nothing"
    assert "[Question]\nWhat is the boiling point of water at sea level in Celsius?\n" in printed
    assert endpoint.bodies == [] and not out.exists()
    # a preset with structured output keeps the researcher's prompt plain, and says so
    assert main([*_judge_args(endpoint, out), "--dry-run", "--provider", "vllm"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.endswith(
        "judgekit adds nothing; preset vllm's structured output (extra_body.guided_json) is "
        "not used: plain text"
    )
    assert main([*_judge_args(endpoint, out), "--dry-run", "--format-reminder"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert "judgekit adds the reminder of score_line's format closing the user message" in line


def test_rubrics_show_prints_a_prompt_file_and_what_is_added(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rubrics", "show", str(PROMPT)]) == 0
    shown = capsys.readouterr().out
    assert "judgekit adds: nothing (sent as written)" in shown
    assert "--- system ---\nYou are a helpful assistant.\n--- user ---\n[Instruction]" in shown
    assert "[Question]\n<Question of the item>\n" in shown


def test_an_unfilled_placeholder_is_one_line_before_any_call(
    endpoint: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "judge.txt"
    prompt.write_text("Rate it.\n\n{{ original_prompt }}\n\n{{ response }}\n", encoding="utf-8")
    prompt.with_suffix(".yaml").write_text(
        "output_format: score_line\nscale: {range: [1, 5]}\n", encoding="utf-8"
    )
    args = [*_judge_args(endpoint, tmp_path / "o.csv")]
    args[args.index(str(PROMPT))] = str(prompt)
    assert main(args) == 2
    error = capsys.readouterr().err.strip()
    assert error == (
        f"error: {prompt}, line 3: placeholder 'original_prompt' needs a column "
        "'original_prompt', which items.csv does not have (it has ID, Question, Answer, Human); "
        "map it with --column-map original_prompt=COLUMN"
    )
    assert main([*args, "--column-map", "original_prompt=Question", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert (
        "Rate it.\n\nWhat is the boiling point of water at sea level in Celsius?\n\n100 " in printed
    )
    assert endpoint.bodies == []


def test_a_prompt_file_without_settings_names_what_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "mine.txt"
    prompt.write_text("Rate {answer} from 1 to 5.\n", encoding="utf-8")
    assert main(["rubrics", "show", str(prompt)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: rubric: {prompt}: say output_format and scale in a file ")
    assert "\n" not in error


def test_handlebars_blocks_fill_as_seed_003_writes_them(tmp_path: Path) -> None:
    prompt = tmp_path / "direct.txt"
    prompt.write_text(
        "<task>\n{{original_prompt}}\n</task>\n\n{{#if context}}\n<context>\n{{context}}\n"
        "</context>\n{{/if}}\n\n<response>\n{{response}}\n</response>\n",
        encoding="utf-8",
    )
    prompt.with_suffix(".yaml").write_text(
        "output_format: score_line\nscale: {range: [1, 5]}\n"
        "columns: {original_prompt: Question, context: Context}\n",
        encoding="utf-8",
    )
    rubric = load_rubric(prompt)
    assert rubric.required_columns == ("Question", "Answer")
    assert rubric.optional_columns == ("Context",)
    with_context = Item("1", {"Question": "Q", "Context": "C", "Answer": "A"})
    without = Item("2", {"Question": "Q", "Answer": "A"})
    assert rubric.render([with_context])[0]["content"] == (
        "<task>\nQ\n</task>\n\n<context>\nC\n</context>\n\n<response>\nA\n</response>"
    )
    assert rubric.render([without])[0]["content"] == (
        "<task>\nQ\n</task>\n\n\n<response>\nA\n</response>"
    )


def test_a_rubric_folder_like_the_packaged_ones_runs(
    endpoint: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my_rubric"
    (folder / "variants").mkdir(parents=True)
    (folder / "config.yaml").write_text(
        "name: my_rubric\noutput_format: score_line\nscale: {allowed: [1, 2, 3]}\n"
        "input_columns: [Question, Answer]\nvariants: [base]\n",
        encoding="utf-8",
    )
    (folder / "variants" / "base.j2").write_text(
        '{% extends "common/system.j2" %}\n{% block role %}\nYou grade answers 1-3.\n'
        "{% endblock %}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.csv"
    args = _judge_args(endpoint, out)
    args[args.index(str(PROMPT))] = str(folder)
    endpoint.by_content = {b"Saturn": "Bad.\nSCORE: 1", b"": "Good.\nSCORE: 3"}
    assert main(args) == 0
    system = json.loads(endpoint.bodies[0])["messages"][0]["content"]
    assert system.startswith("You grade answers 1-3.") and "SCORE: [1/2/3]" in system
    assert pd.read_csv(out)["score"].tolist() == [3.0, 1.0]
    notice = capsys.readouterr().err.splitlines()[0]
    assert notice == (
        f"prompt: rubric folder {folder} as its templates render; judgekit adds a user message "
        "holding the items (a header line, one <item> block each); common/format_score_line.j2 "
        "(the format of score_line), which the template includes by extending common/system.j2"
    )
    user = json.loads(endpoint.bodies[0])["messages"][1]["content"]
    assert "one-sentence explanation" not in user  # no reminder unless format_reminder: true


def _reasks(endpoint: Any, rubric: Any, store: Path) -> tuple[list[list[dict[str, str]]], Any]:
    client = OpenAIJudge("judge-m", base_url=endpoint.url, provider="generic", max_retries=0)
    items = [Item("7", {"Question": "Capital of France?", "Answer": "Paris"})]
    table = judge(items, rubric, client, JudgeOptions(store=store, progress=False))
    return [json.loads(body)["messages"] for body in endpoint.bodies], table


def test_a_packaged_rubric_re_asks_with_what_was_wrong_and_the_store_records_it(
    endpoint: Any, tmp_path: Path
) -> None:
    endpoint.replies = ["Paris is right, I would say a 4.", "Correct.\nSCORE: 4"]
    store = tmp_path / "store.sqlite"
    sent, table = _reasks(endpoint, load_rubric("factual_accuracy"), store)
    first, second = sent
    assert second[:-1] == first[:-1]
    body, hint = second[-1]["content"].rsplit("\n\n", 1)
    assert body == first[-1]["content"].replace("rows 1-1", "rows 1-1, re-ask 1")
    assert hint.startswith("Your previous reply could not be used: ")
    assert "\n" not in hint
    assert table["status"].tolist() == ["ok"] and table["attempt"].tolist() == [2]
    with sqlite3.connect(store) as db:
        recorded = db.execute(
            "SELECT attempt, reask_hint FROM requests ORDER BY attempt"
        ).fetchall()
    assert recorded == [(1, ""), (2, hint)]


def test_a_verbatim_prompt_re_asks_unchanged_unless_asked(endpoint: Any, tmp_path: Path) -> None:
    endpoint.replies = ["I like it.", "Still no rating.", "No."]
    rubric = load_rubric(PROMPT)
    sent, table = _reasks(endpoint, rubric, tmp_path / "a.sqlite")
    assert len(sent) == 3 and sent[0] == sent[1] == sent[2]
    assert table["status"].tolist() == ["unparseable"]
    endpoint.bodies.clear()
    endpoint.replies = ["I like it.", "Good.\nRating: [[8]]"]
    reminded = load_rubric(PROMPT, format_reminder=True)
    sent, table = _reasks(endpoint, reminded, tmp_path / "b.sqlite")
    assert sent[1][-1]["content"].startswith(sent[0][-1]["content"])
    assert "Your previous reply could not be read: " in sent[1][-1]["content"]
    assert table["score"].tolist() == [8.0]


def _readme_section() -> str:
    page = (config.ROOT / "docs" / "own-prompt.md").read_text(encoding="utf-8")
    return page.split("## The worked example\n", 1)[1].split("\n## ", 1)[0]


def test_the_docs_walkthrough_runs_as_written(
    endpoint: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _readme_section()
    yaml_block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert yaml_block is not None and yaml_block.group(1) == PROMPT.with_suffix(".yaml").read_text()
    bash = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert bash is not None
    commands = [shlex.split(line) for line in bash.group(1).splitlines() if line.strip()]
    assert len(commands) == 3 and all(command[0] == "judgekit" for command in commands)
    monkeypatch.chdir(config.ROOT)  # the paths are the checkout's
    out = tmp_path / "mt_bench.csv"
    endpoint.by_content = {b"Saturn": "Saturn is wrong.\n\nRating: [[1]]", b"": "Right.\n[[9]]"}
    for command in commands:
        args = [
            endpoint.url
            if arg == "http://localhost:8000/v1"
            else str(out)
            if arg == "runs/mt_bench.csv"
            else arg
            for arg in command[1:]
        ]
        assert main(args) == 0, command
    assert len(endpoint.bodies) == 2  # the dry run sent nothing
    assert pd.read_csv(out)["score"].tolist() == [9.0, 1.0]


def test_a_folder_config_can_point_at_a_prompt_with_fixed_values(tmp_path: Path) -> None:
    folder = tmp_path / "graded"
    folder.mkdir()
    (folder / "judge.md").write_text(
        "Grade for {{audience}}.\n{{#unless context}}No context.\n{{else}}Context: {{context}}\n"
        "{{/unless}}Q: {{question}}\nA: {{answer}}\nEnd with {{marker}}.\n",
        encoding="utf-8",
    )
    (folder / "config.yaml").write_text(
        "prompt: judge.md\noutput_format: score_line\nscale: {range: [1, 5]}\n"
        'score_marker: "Rating: [[N]]"\nvalues: {audience: pupils, marker: "Rating: [[N]]"}\n'
        "columns: {context: Ref_Answer}\nlabel_column: Teacher\n",
        encoding="utf-8",
    )
    rubric = load_rubric(folder)
    assert (rubric.required_columns, rubric.optional_columns) == (
        ("Question", "Answer"),
        ("Ref_Answer",),
    )
    assert rubric.label_column == "Teacher" and rubric.additions(structured=False) == ()
    (bare,) = rubric.render([Item("1", {"Question": "Q?", "Answer": "A."})])
    assert bare["content"] == (
        "Grade for pupils.\nNo context.\nQ: Q?\nA: A.\nEnd with Rating: [[N]]."
    )
    (given,) = rubric.render([Item("1", {"Question": "Q?", "Answer": "A.", "Ref_Answer": "R"})])
    assert given["content"].splitlines()[1] == "Context: R"
    (verdict,) = rubric.parse("Clear and right.\nRating: [[4]]", ["1"]).verdicts
    assert verdict.score == 4.0
    with pytest.raises(ValueError, match="no placeholder nope to map"):
        load_rubric(folder, column_map={"nope": "Answer"})
