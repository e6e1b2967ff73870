"""judgekit side by side with a hand-written loop and with inspect_ai, on one simulated endpoint.

Run from the repository root: ``python3 -m benchmarks.bench_peers``. The inspect_ai column
needs ``pip install inspect-ai`` (``python3 -m judgekit.cli.bench`` installs it when missing).

Every contender judges the same 600 riddle rows with the same accuracy prompt (the
riddle_accuracy rubric's text) against a fresh simulator with the same settings: 300 ms per
answer and a provider-style limit of 500 requests and 500,000 tokens per minute. What each does:

* ``judgekit``: ``judge()`` with its defaults: 60-row batches sent concurrently, the client's
  retries and adaptive throttle, ID-level checking and re-asks, a response store.
* ``judgekit, 1 item/call``: the same with ``batch_size=1``, to separate batching from the rest.
* ``sequential loop``: what the study's author did by hand: the ``openai`` client (its default
  two retries), one 60-row batch at a time, a fixed 1 s sleep after each call, ``ID,score`` lines
  read with a regex; a batch whose call fails is lost.
* ``inspect_ai``: a Task whose solver hands inspect the answer under judgment and whose scorer is
  ``model_graded_qa`` with the same prompt as its template (one item per call, as it works) and a
  grade pattern reading the ``ID,score`` line (inspect sends it as one user message, so the
  literal ``<item id="...">`` in the instructions is unquoted to keep the simulator reading only
  the real item); inspect's OpenAI provider pointed at the simulator
  with ``base_url``, its default concurrency and retries.

Rows scored right = rows whose score equals the simulator's oracle score.
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import openai

from benchmarks._common import (
    LATENCY_S,
    Stopwatch,
    begin_benchmark,
    markdown_table,
    scored_items,
    write_metrics,
)
from judgekit.data import make_batches
from judgekit.engine import OpenAIJudge, judge
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.types import Item

RPM = 500
TPM = 500_000
LOOP_SLEEP_S = 1.0
LINE = re.compile(r"^\s*([^,\s]+)\s*,\s*(-?\d+)\s*$", re.MULTILINE)


def sim_config(oracle: dict[str, float]) -> SimulatorConfig:
    """The one endpoint every contender talks to (a fresh server per contender)."""
    return SimulatorConfig(
        oracle=oracle, latency_s=LATENCY_S, rate_limit_rpm=RPM, rate_limit_tpm=TPM
    )


def run_judgekit(items: Sequence[Item], rubric: Any, base_url: str, batch: int) -> dict[str, float]:
    """judge() with default client settings; returns scores of ok rows."""
    client = OpenAIJudge("sim-judge", base_url=base_url, provider="simulator")
    table = judge(items, rubric, client, batch_size=batch, structured=False, progress=False)
    ok = table[table["status"] == "ok"]
    return dict(zip(ok["item_id"], ok["score"], strict=True))


def run_sequential_loop(items: Sequence[Item], rubric: Any, base_url: str) -> dict[str, float]:
    """One batch at a time with the plain openai client and a fixed sleep between calls."""
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    scores: dict[str, float] = {}
    for batch in make_batches(items, rubric.default_batch_size):
        messages = rubric.render(batch.items, batch_label=batch.label)
        try:
            response = client.chat.completions.create(
                model="sim-judge", messages=messages, temperature=0
            )
        except openai.APIError:
            continue  # the batch is lost; the author re-ran such batches by hand
        text = response.choices[0].message.content or ""
        wanted = set(batch.ids)
        for item_id, score in LINE.findall(text):
            if item_id in wanted:
                scores[item_id] = float(score)
        time.sleep(LOOP_SLEEP_S)
    client.close()
    return scores


def inspect_template(rubric: Any) -> str:
    """The rubric's one-item prompt as an inspect template ({question}, {answer}, ...)."""
    marks = {"Question": "QQQMARK", "Answer": "AAAMARK", "Ref_Answer": "RRRMARK"}
    probe = Item("IIIMARK", {column: marks[column] for column in rubric.input_columns})
    system, user = (m["content"] for m in rubric.render([probe], batch_label="rows 1-1"))
    # inspect sends one user message; unquote the example tag in the instructions so the
    # simulator (which reads <item id="..."> blocks of the user message) sees only the item.
    system = system.replace('<item id="...">', "<item id=...>")
    text = f"{system}\n\n{user}".replace("{", "{{").replace("}", "}}")
    for placeholder, mark in (
        ("{question}", "QQQMARK"),
        ("{answer}", "AAAMARK"),
        ("{criterion}", "RRRMARK"),
        ("{item_id}", "IIIMARK"),
    ):
        text = text.replace(mark, placeholder)
    return text


def run_inspect(items: Sequence[Item], rubric: Any, base_url: str) -> dict[str, float]:
    """inspect_ai's model_graded_qa scorer, one item per grader call."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import model_graded_qa
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def given_answer() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            answer = state.metadata["answer_text"]
            state.output = ModelOutput.from_content(model="under-judgment", content=answer)
            return state

        return solve

    grader = get_model("openai/sim-judge", base_url=base_url, api_key="unused", responses_api=False)
    samples = [
        Sample(
            id=item.id,
            input=item.fields["Question"],
            target=item.fields["Ref_Answer"],
            metadata={"item_id": item.id, "answer_text": item.fields["Answer"]},
        )
        for item in items
    ]
    task = Task(
        dataset=samples,
        solver=[given_answer()],
        scorer=model_graded_qa(
            template=inspect_template(rubric),
            grade_pattern=r"(?m)^\s*[^,\s]+\s*,\s*(-?\d+)\s*$",
            model=grader,
        ),
    )
    with tempfile.TemporaryDirectory() as log_dir:
        logs = inspect_eval(task, model=grader, log_dir=log_dir, display="none")
        samples_done = logs[0].samples or []
    scores: dict[str, float] = {}
    for sample in samples_done:
        for score in (sample.scores or {}).values():
            if score.value is not None and str(score.value).lstrip("-").isdigit():
                scores[str(sample.id)] = float(score.value)
    return scores


def main() -> None:
    args, source = begin_benchmark(__doc__ or "")
    rubric, items, oracle = scored_items("riddle_accuracy")
    contenders = {
        "judgekit": lambda url: run_judgekit(items, rubric, url, rubric.default_batch_size),
        "judgekit, 1 item/call": lambda url: run_judgekit(items, rubric, url, 1),
        "sequential loop (sleep 1 s)": lambda url: run_sequential_loop(items, rubric, url),
    }
    have_inspect = importlib.util.find_spec("inspect_ai") is not None
    if have_inspect:
        contenders["inspect_ai model_graded_qa"] = lambda url: run_inspect(items, rubric, url)
    results = []
    for name, run in contenders.items():
        with run_simulator(sim_config(oracle)) as sim, Stopwatch() as clock:
            scores = run(sim.base_url)
        log = sim.requests.snapshot()
        right = sum(1 for item_id, score in scores.items() if oracle.get(item_id) == score)
        results.append(
            {
                "name": name,
                "seconds": clock.seconds,
                "requests": sum(1 for entry in log if entry.status_code == 200),
                "http_429": sum(1 for entry in log if entry.status_code == 429),
                "prompt_tokens": sum(entry.prompt_tokens for entry in log),
                "right": right,
                "unscored": len(items) - len(scores),
            }
        )
    base = results[0]["seconds"]
    print(
        f"Items: {source}; rubric riddle_accuracy. Simulator: {LATENCY_S * 1000:.0f} ms latency, "
        f"limit {RPM} requests and {TPM:,} tokens per minute.\n"
    )
    header = [
        "contender",
        "wall s",
        "× judgekit time",
        "requests",
        "429s",
        "prompt tokens",
        "rows scored right",
        "rows unscored",
    ]
    rows = [
        [
            r["name"],
            f"{r['seconds']:.1f}",
            f"{r['seconds'] / base:.1f}",
            r["requests"],
            r["http_429"],
            f"{r['prompt_tokens']:,}",
            f"{r['right']}/{len(items)}",
            r["unscored"],
        ]
        for r in results
    ]
    print(markdown_table(header, rows))
    if not have_inspect:
        print("\ninspect_ai is not installed: `python3 -m pip install inspect-ai` to add it.")
    by_name = {r["name"]: r for r in results}
    write_metrics(
        args.metrics,
        {
            "judgekit_s": base,
            "sequential_s": by_name["sequential loop (sleep 1 s)"]["seconds"],
            "inspect_s": by_name.get("inspect_ai model_graded_qa", {}).get("seconds"),
            "judgekit_right": results[0]["right"],
            "items": len(items),
        },
    )


if __name__ == "__main__":
    main()
