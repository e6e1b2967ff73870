"""Round trip through ``judgekit simulate``: every packaged rubric and own prompt parses ``ok``.

One ``judgekit simulate`` process serves the module; each case runs ``judgekit judge`` against
it and reads the judgments it wrote. The simulator sees only the requests (no side channel),
so an own prompt's score marker reaches it only as the prompt shows it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgekit import config
from judgekit.cli.main import main
from judgekit.rubrics import list_rubrics, load_rubric

TEXT = {
    "Question": "Which river is the longest in Hungary?",
    "Answer": "The Danube & the <Tisza>.",
    "Ref_Answer": "The Danube",
    "Reasoning": "It is longer.",
    "Ref_Reasoning": "The Danube is 2850 km long.",
    "Context": "Geography.",
}
#: Own prompts (placeholder style) as researchers write them, and the marker each names.
MARKED = {
    "mt_bench": (
        'Rate the response on a scale of 1 to 10 by strictly following this format: "[[rating]]", '
        'for example: "Rating: [[5]]".',
        "[[N]]",
    ),
    "rating_brackets": ("Rate from 1 to 10. End with the line Rating: [[N]]", "Rating: [[N]]"),
    "prometheus": (
        'The output format should look as follows: "Feedback: (write a feedback for criteria) '
        '[RESULT] (an integer number between 1 and 5)"',
        "[RESULT] N",
    ),
    "json_key": ('Give a short reason, then {"score": <1-5>} on its own line.', '{"score": N}'),
    "score_line": ("Explain briefly, then write SCORE: N with N from 1 to 5.", "SCORE: N"),
    "final_rating": ("Rate it on a 1-5 scale. Close with Final rating: <1-5>", "Final rating: N"),
}
SCALES = {"mt_bench": (1, 10), "rating_brackets": (1, 10)}


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    """``judgekit simulate`` in a subprocess; yields its base URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env["PYTHONPATH"] = str(config.ROOT)
    server = subprocess.Popen(
        [sys.executable, "-m", "judgekit", "simulate", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        yield line.split(" at ")[-1].strip()
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=20)


def _items(folder: Path, columns: list[str], count: int = 3) -> Path:
    rows = {"ID": [f"it{i:03d}" for i in range(count)]}
    rows |= {c: [f"{TEXT.get(c, 'text')} #{i}" for i in range(count)] for c in columns}
    path = folder / "items.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _judge(url: str, items: Path, rubric: str, out: Path, *extra: str) -> pd.DataFrame:
    args = [
        "judge", str(items), "--rubric", rubric, "--provider", "simulator", "--base-url", url,
        "--model", "sim-judge", "--output", str(out), "--store", str(out.with_suffix(".sqlite")),
        "--no-labels", *extra,
    ]  # fmt: skip
    assert main(args) == 0
    return pd.read_csv(out, keep_default_na=False)


def _assert_clean(table: pd.DataFrame, low: float, high: float) -> None:
    assert set(table["status"]) == {"ok"}, table[["status", "reason", "raw_reply"]].to_dict()
    assert set(table["tolerances"]) == {""}, table[["tolerances", "raw_reply"]].to_dict()
    assert table["score"].astype(float).between(low, high).all()


@pytest.mark.parametrize("name", list_rubrics())
def test_every_packaged_rubric_round_trips(
    simulator: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    rubric = load_rubric(name)
    items = _items(tmp_path, list(rubric.input_columns))
    table = _judge(simulator, items, name, tmp_path / "out.csv")
    _assert_clean(table, min(rubric.scale.allowed), max(rubric.scale.allowed))


def _own_prompt(folder: Path, text: str, settings: str) -> Path:
    prompt = folder / "own.txt"
    prompt.write_text(text, encoding="utf-8")
    (folder / "own.yaml").write_text(settings, encoding="utf-8")
    return prompt


@pytest.mark.parametrize("placeholders", [True, False], ids=["placeholders", "items_message"])
@pytest.mark.parametrize("case", sorted(MARKED))
def test_an_own_prompt_with_each_marker_round_trips(
    simulator: str, case: str, placeholders: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    instruction, marker = MARKED[case]
    low, high = SCALES.get(case, (1, 5))
    body = "[Question]\n{question}\n\n[Answer]\n{answer}\n\n" if placeholders else ""
    columns = "" if placeholders else "columns: [Question, Answer]\n"
    prompt = _own_prompt(
        tmp_path,
        f"You judge answers.\n\n{body}{instruction}\n",
        f"output_format: score_line\nscale: {{range: [{low}, {high}]}}\n"
        f"score_marker: '{marker}'\n{columns}",
    )
    items = _items(tmp_path, ["Question", "Answer"])
    _assert_clean(_judge(simulator, items, str(prompt), tmp_path / "out.csv"), low, high)


def test_a_marker_only_the_reminder_shows_round_trips(
    simulator: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    prompt = _own_prompt(
        tmp_path,
        "Judge the answer to {question}:\n{answer}\nUse a scale of 0 to 3.",
        "output_format: score_line\nscale: {range: [0, 3]}\nscore_marker: 'Helpfulness: N'\n"
        "format_reminder: true\n",
    )
    items = _items(tmp_path, ["Question", "Answer"])
    _assert_clean(_judge(simulator, items, str(prompt), tmp_path / "out.csv"), 0, 3)


def test_a_batched_own_prompt_gets_id_lines(
    simulator: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    prompt = _own_prompt(
        tmp_path,
        "Grade each answer from 0 to 4. Write one line per item: ID,score.",
        "output_format: id_score_lines\nscale: {range: [0, 4]}\ncolumns: [Question, Answer]\n",
    )
    items = _items(tmp_path, ["Question", "Answer"], count=5)
    table = _judge(simulator, items, str(prompt), tmp_path / "out.csv")
    _assert_clean(table, 0, 4)
    assert table["request_hash"].nunique() == 1  # five items, one request
