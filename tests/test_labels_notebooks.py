"""Notebook 08 headless, then notebook 02 with two labellers and the calibration record.

The judge is judgekit's simulator behind the real ``openai`` client. The first labeller's
scores are the demo dataset's human labels; the second labeller is made up for the test (the
first one's labels with three items changed), which is all notebook 02 needs to show the
inter-human kappa with its interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from judgekit import config
from judgekit.data import read_table
from judgekit.labels import read_labels_table, write_labels_table
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.workflows.paper import run_parameter_set

pytestmark = pytest.mark.notebooks


def _write(folder: Path, runs: dict[str, dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, values in runs.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(values), encoding="utf-8")
    return folder


def _printed(notebook: Path) -> str:
    cells = nbformat.read(notebook, as_version=4).cells
    return "".join(
        output.get("text", "")
        for cell in cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("name") == "stdout"
    )


def test_labels_flow_from_notebook_08_to_notebook_02(tmp_path: Path) -> None:
    frame = read_table(config.DATA_DIR / "demo/riddles_demo.csv").frame
    oracle = {str(i): float(v) for i, v in zip(frame["ID"], frame["Human_Accuracy"], strict=True)}
    run_dir = tmp_path / "run"
    with run_simulator(SimulatorConfig(oracle=oracle, noise_rate=0.1, seed=3)) as sim:
        judging = {
            "dataset_path": "{data_dir}/demo/riddles_demo.csv",
            "judge_model": "sim-judge",
            "base_url": sim.base_url,
            "provider": "simulator",
            "rubrics": ["riddle_accuracy"],
            "store_path": "responses.sqlite",
            "output_dir": "judging",
        }
        labelling = {
            "judgments_path": "judging/judgments.parquet",
            "n_labels": 18,
            "n_boot": 200,
            "n_subsamples": 20,
            "endpoint": sim.base_url,
            "output_dir": "tables/labels",
        }
        params = _write(tmp_path / "p1", {"01_run_judging": judging, "08_human_labels": labelling})
        run_parameter_set(params, run_dir, log=False)
    labels_file = run_dir / "judging/labels.csv"
    first = read_labels_table(labels_file)
    assert len(first) == 18 and set(first["labeller"]) == {"dataset"}
    record = json.loads((run_dir / "judging/calibration.json").read_text())
    assert record["judge_model"] == "sim-judge" and record["label_count"] == 18
    assert "judge and human agree at kappa 0.80" in _printed(run_dir / "08_human_labels.ipynb")

    second = first.copy()
    second["labeller"] = "bela"
    changed = second.index[:3]
    second.loc[changed, "score"] = second.loc[changed, "score"].map({0: 3, 3: 5, 5: 3})
    write_labels_table(pd.concat([first, second], ignore_index=True), labels_file)
    agreement = {
        "judgments_path": "judging/judgments.parquet",
        "n_boot": 200,
        "output_dir": "tables/human_agreement",
    }
    run_parameter_set(
        _write(tmp_path / "p2", {"02_human_agreement": agreement}), run_dir, log=False
    )
    between = read_table(run_dir / "tables/human_agreement/inter_human_riddle_accuracy.csv").frame
    kappa = between[between["statistic"] == "kappa (quadratic)"].iloc[0]
    assert float(kappa["ci_low"]) < float(kappa["estimate"]) < 1.0
    assert int(kappa["n"]) == 18
    printed = _printed(run_dir / "02_human_agreement.ipynb")
    assert "calibration recorded" in printed and "warning" not in printed

    record["prompt_hash"] = "0" * 16  # as if the prompt had changed since calibration
    (run_dir / "judging/calibration.json").write_text(json.dumps(record))
    run_parameter_set(
        _write(tmp_path / "p3", {"02_human_agreement": agreement}), run_dir, log=False
    )
    assert "warning (sim-judge): prompt_hash changed" in _printed(
        run_dir / "02_human_agreement.ipynb"
    )
