"""The scale benchmark's processes: the items file, the clients and the counting simulator.

Each runs as its own process (``python -m benchmarks._scale_clients WHAT ...``) so that its CPU
time and peak memory are its own:

* ``loop ITEMS URL OUTPUT``: the minimal loop a user would write (8 workers on one
  ``openai.AsyncOpenAI``, the items read with the ``csv`` module, nothing stored or parsed);
* ``judge ITEMS URL OUTPUT``: ``judge()`` on the items read with judgekit's reader, a store;
* ``sim CONFIG``: judgekit's simulator (the server ``python -m judgekit.simulator`` runs),
  printing its URL, then the requests it has answered every :data:`TICK_S` so the
  benchmark can follow a client it cannot instrument (the CLI) from outside.

``OUTPUT`` is ``plain`` (no schema) or ``json_schema`` (the rubric's schema as a
``response_format``, as the simulator's preset sends it).
"""

from __future__ import annotations

import asyncio
import csv
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

RUBRIC = "riddle_accuracy"
MODEL = "sim-judge"
CONCURRENCY = 8
OUTPUTS = ("plain", "json_schema")
COLUMNS = ("Question", "Answer", "Ref_Answer")
TICK_S = 0.02


def scale_rows(count: int) -> Iterator[tuple[str, str, str, str]]:
    """``count`` rows (ID and the rubric's columns): a riddle question, a 1-2 KB answer."""
    sentence = "A válasz indoklása egy mondatban, ahogy egy modell írná a talány megoldásához. "
    for i in range(count):
        answer = f"Válasz {i}: " + sentence * (12 + i % 12)  # 1.0-2.0 KB in UTF-8
        question = f"Melyik magyar találmány forog hat színes oldalon? ({i})"
        yield f"S{i:06d}", question, answer, "Rubik-kocka"


def write_items(path: Path, count: int) -> Path:
    """The items CSV every client reads (UTF-8, a header row)."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(("ID", *COLUMNS))
        writer.writerows(scale_rows(count))
    return path


def run_loop(items: Path, base_url: str, output: str) -> None:
    """The bare loop: the messages (and schema, for ``json_schema``) judgekit sends."""
    import openai

    from judgekit.engine.providers import structured_options
    from judgekit.rubrics import load_rubric
    from judgekit.types import Item

    rubric = load_rubric(RUBRIC)
    structured = output == "json_schema"

    async def main() -> None:
        client = openai.AsyncOpenAI(api_key="not-needed", base_url=base_url, max_retries=0)
        with items.open(newline="", encoding="utf-8") as source:
            pending = enumerate(csv.DictReader(source), start=1)

            async def worker() -> None:
                for number, row in pending:
                    item = Item(row["ID"], {c: row[c] for c in COLUMNS})
                    extra = {}
                    if structured:
                        schema = rubric.response_schema([item.id])
                        name = f"{rubric.name}_reply"
                        extra = structured_options("json_schema", schema, name)
                    await client.chat.completions.create(
                        model=MODEL,
                        messages=rubric.render(  # type: ignore[arg-type]
                            [item], structured=structured, batch_label=f"rows {number}-{number}"
                        ),
                        temperature=0.0,
                        seed=0,
                        **extra,
                    )

            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        await client.close()

    asyncio.run(main())


def run_judge(items: Path, base_url: str, output: str) -> None:
    """``judge()`` with a response store, one item per request."""
    from judgekit.data import items_from_frame, read_frame
    from judgekit.engine import OpenAIJudge, judge
    from judgekit.rubrics import load_rubric

    rubric = load_rubric(RUBRIC)
    client = OpenAIJudge(
        MODEL, base_url=base_url, provider="simulator", max_concurrency=CONCURRENCY
    )
    judged = items_from_frame(read_frame(items), rubric.input_columns)
    with tempfile.TemporaryDirectory() as folder:
        table = judge(
            judged,
            rubric,
            client,
            batch_size=1,
            structured=output == "json_schema",
            store=Path(folder) / "responses.sqlite",
            progress=False,
        )
    errors = int((table["status"] == "error").sum())
    if len(table) != len(judged) or errors:
        raise SystemExit(f"judge(): {len(table)} rows for {len(judged)} items, {errors} errors")


def cli_command(items: Path, base_url: str, output: str, study: Path) -> list[str]:
    """``judgekit judge --study`` as a researcher runs it (the generic preset sends no schema)."""
    provider = "simulator" if output == "json_schema" else "generic"
    return [
        *(sys.executable, "-m", "judgekit", "judge", str(items), "--rubric", RUBRIC),
        *("--study", str(study), "--base-url", base_url, "--provider", provider),
        *("--model", MODEL, "--batch-size", "1", "--max-concurrency", str(CONCURRENCY)),
        "--no-labels",
    ]


def serve_counting(config: Path) -> None:
    """Serve the simulator; print its URL, then its answered requests every tick."""
    from judgekit.simulator import load_config, run_simulator

    with run_simulator(load_config(config)) as handle:
        print(f"simulator at {handle.base_url}", flush=True)
        while True:
            time.sleep(TICK_S)
            print(handle.stats()["requests"], flush=True)


def main(argv: list[str]) -> None:
    what, *args = argv
    if what == "sim":
        serve_counting(Path(args[0]))
    elif what in ("loop", "judge"):
        items, base_url, output = args
        (run_loop if what == "loop" else run_judge)(Path(items), base_url, output)
    else:
        raise SystemExit(f"unknown process {what!r}: loop, judge or sim")


if __name__ == "__main__":
    main(sys.argv[1:])
