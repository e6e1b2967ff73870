"""docs/simulator.md, run as written: the simulator as an endpoint for a whole study."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from judgekit import config

DOC = config.ROOT / "docs" / "simulator.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_simulator_serves_a_study_as_documented(tmp_path: Path) -> None:
    settings = yaml.safe_load(_blocks("yaml")[0])
    (tmp_path / "sim.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    items = pd.DataFrame(
        {
            "ID": [f"q{i}" for i in range(6)],
            "Question": [f"Question {i}?" for i in range(6)],
            "Answer": [f"Answer {i}" for i in range(6)],
        }
    )
    items.to_csv(tmp_path / "my_items.csv", index=False)
    oracle = pd.DataFrame({"ID": items["ID"], "score": [1, 2, 3, 4, 4, 1]})
    oracle.to_csv(tmp_path / settings["oracle_csv"], index=False)
    serve, judge = (shlex.split(line) for line in _blocks("bash")[0].splitlines() if line.strip())
    port = str(_free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGEKIT_"))}
    env |= {"PYTHONPATH": str(config.ROOT), "TQDM_DISABLE": "1"}

    def run(command: list[str]) -> list[str]:
        return [sys.executable, "-m", "judgekit", *(a.replace("8089", port) for a in command[1:])]

    server = subprocess.Popen(
        run(serve), cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert server.stdout is not None
        assert f"127.0.0.1:{port}" in server.stdout.readline()  # the base URL, once serving
        done = subprocess.run(run(judge), cwd=tmp_path, env=env, capture_output=True, text=True)
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=20)
    assert done.returncode == 0, done.stderr
    judgments = pd.read_parquet(tmp_path / "sim_study" / "judgments.parquet")
    assert set(judgments["status"]) == {"ok"} and len(judgments) == 12  # two runs of six
    assert set(judgments["score"]) <= {1.0, 2.0, 3.0, 4.0}
