"""Silent drops made loud: a mistyped placeholder, a lowercase model column, a renamed column,
an endpoint that is down (dry run and replay), and a run whose replies could not be read."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgekit.cli.main import main
from judgekit.rubrics.placeholders import PromptTemplate, PromptTemplateError
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.simulator.server import SimulatorHandle

PROMPT = "Question: {question}\nAnswer: {answer}\nRate it from 1 to 5 and end with Rating: [[N]]."
SETTINGS = "output_format: score_line\nscale: {range: [1, 5]}\nscore_marker: 'Rating: [[N]]'\n"


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorHandle]:
    with run_simulator(SimulatorConfig(seed=5)) as handle:
        yield handle


def _closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def _files(folder: Path, prompt: str = PROMPT, header: str = "Model") -> tuple[Path, Path]:
    items = folder / "items.csv"
    items.write_text(
        f"ID,Question,Answer,{header}\n1,Capital of France?,Paris,alpha\n2,2+2?,5,beta\n",
        encoding="utf-8",
    )
    (folder / "mine.txt").write_text(prompt, encoding="utf-8")
    (folder / "mine.yaml").write_text(SETTINGS, encoding="utf-8")
    return items, folder / "mine.txt"


def _judge(items: Path, rubric: Path | str, url: str, out: Path, *extra: str) -> list[str]:
    return [
        "judge", str(items), "--rubric", str(rubric), "--provider", "simulator", "--base-url",
        url, "--model", "sim", "--output", str(out), "--no-labels", *extra,
    ]  # fmt: skip


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


def test_a_placeholder_without_its_brace_is_refused_before_any_call(
    sim: SimulatorHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, prompt = _files(tmp_path, "Question: {question\nAnswer: {answer}\nRating: [[N]]")
    assert main(_judge(items, prompt, sim.base_url, tmp_path / "o.csv")) != 0
    line = _one_line(capsys)
    assert f"{prompt}, line 1: placeholder 'question' is not closed" in line
    assert "write {question}" in line
    assert not list(sim.requests)


@pytest.mark.parametrize(
    ("header", "mapped"),
    [("model", False), ("MODEL", False), ("answer_model", False), ("model", True),
     ("Generator", True)],
)  # fmt: skip
def test_the_answering_model_column_is_found_under_its_aliases(
    sim: SimulatorHandle,
    header: str,
    mapped: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    items, prompt = _files(tmp_path, header=header)
    mapping = ["--column-map", f"{header}=Model"] if mapped else []
    out = tmp_path / "o.csv"
    assert main([*_judge(items, prompt, sim.base_url, out), *mapping]) == 0
    table = pd.read_csv(out)
    assert dict(zip(table["item_id"], table["answer_model"], strict=True)) == {
        1: "alpha",
        2: "beta",
    }
    assert set(table["status"]) == {"ok"}


def test_a_renamed_required_column_suggests_the_column_map(
    sim: SimulatorHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    items.write_text("ID,Prompt text,Answer\n1,Q?,A\n", encoding="utf-8")
    args = _judge(items, "factual_accuracy", sim.base_url, tmp_path / "o.csv")
    assert main(args) != 0
    line = _one_line(capsys)
    assert "required column 'Question' is missing" in line
    assert "pass --column-map HEADER=Question" in line


def test_the_dry_run_names_the_judge_whose_url_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, prompt = _files(tmp_path)
    url = _closed_url()
    assert main([*_judge(items, prompt, url, tmp_path / "o.csv"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    (down,) = [line for line in out.splitlines() if "does not answer" in line]
    assert down.startswith(f"judge simulator:sim: its endpoint {url} does not answer (")
    assert "--offline" not in down  # nothing is stored: a replay is no way out


def test_the_dry_run_of_an_answering_endpoint_says_nothing_of_it(
    sim: SimulatorHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, prompt = _files(tmp_path)
    before = len(sim.requests)
    assert main([*_judge(items, prompt, sim.base_url, tmp_path / "o.csv"), "--dry-run"]) == 0
    assert "does not answer" not in capsys.readouterr().out
    assert len(sim.requests) == before  # the models listing is not a judged request


def test_a_replay_whose_endpoint_is_down_says_offline_replays_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    items, prompt = _files(tmp_path)
    store = ["--store", str(tmp_path / "s.sqlite")]
    with run_simulator(SimulatorConfig()) as handle:  # stopped after the first run
        url = handle.base_url
        assert main([*_judge(items, prompt, url, tmp_path / "a.csv"), *store]) == 0
    capsys.readouterr()
    down = _judge(items, prompt, url, tmp_path / "b.csv")
    assert main([*down, *store]) != 0
    line = _one_line(capsys)
    assert line.startswith("error: cannot reach the judge at ")
    assert line.endswith("every request is in the store: --offline replays it from there")
    assert main([*down, *store, "--dry-run"]) == 0
    assert "so --offline replays it without the endpoint" in capsys.readouterr().out
    assert main([*down, *store, "--offline"]) == 0
    replayed, first = pd.read_csv(tmp_path / "b.csv"), pd.read_csv(tmp_path / "a.csv")
    assert replayed["score"].tolist() == first["score"].tolist()


def test_unreadable_replies_are_summed_up_with_what_they_looked_like(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    # the prompt shows no marker and asks for a JSON rating: the simulator answers in JSON,
    # which the score_line rubric with its [[N]] marker cannot read
    items, prompt = _files(tmp_path, 'Q: {question}\nA: {answer}\nReply {{"rating": 3}}.')
    with run_simulator(SimulatorConfig()) as handle:
        assert main(_judge(items, prompt, handle.base_url, tmp_path / "o.csv")) != 0
    line = _one_line(capsys)
    assert "2 of 2 rows have no score" in line and "see the status column" not in line
    assert "the first: no rating (Rating: [[N]] or a score line) found in the reply" in line
    assert '(it begins: \'{"rating"' in line


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Q: {question\nA: {answer}", "write {question}"),
        ("Q: {{ question\nA: {{answer}}", "write {{question}}"),
        ("Q: {question and A: {answer}", "write {question}"),
        ("No other placeholder {question", "write {question}"),
    ],
)
def test_an_unclosed_placeholder_names_its_line(text: str, written: str) -> None:
    with pytest.raises(PromptTemplateError, match=rf"^f\.txt, line 1: .*{re.escape(written)}$"):
        PromptTemplate(text, "f.txt")


@pytest.mark.parametrize(
    "text",
    [
        'Q: {question}\nReply {"score": 5} or {score: 5}.',
        'Q: {question}\nLiteral braces: {{"score": 5}} and {{ brace here.',
        "Handlebars {{question}} with a JSON {score: 1}",
    ],
)
def test_braces_that_are_no_placeholder_are_sent_as_written(text: str) -> None:
    assert PromptTemplate(text, "f.txt").names == ("question",)
