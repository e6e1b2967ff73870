"""Notebook 08 headless, then notebooks 02 and 08 with two raters and the calibration record.

The judge is judgekit's simulator behind the real ``openai`` client. The first rater is the
demo dataset's human label column; the second is a labeller of the labelling tool made up
for the test (the column's labels of the planned items with three changed), which is all the
notebooks need to show the inter-human kappa, the conflicts and the judge against each rater.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from judgekit import config
from judgekit.data import read_frame, read_table
from judgekit.labels import write_labels_table
from judgekit.reporting.notebooks import run_parameter_set
from judgekit.simulator import SimulatorConfig, run_simulator

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
            "dataset_path": "{data_dir}/demo/riddles_demo.csv",
            "n_labels": 18,
            "n_boot": 200,
            "n_subsamples": 20,
            "endpoint": sim.base_url,
            "output_dir": "tables/labels",
        }
        params = _write(tmp_path / "p1", {"01_run_judging": judging, "08_human_labels": labelling})
        run_parameter_set(params, run_dir, log=False)
    plan = read_frame(run_dir / "judging/labelling_plan.csv")
    assert len(plan) == 18 and plan["item_id"].is_unique
    assert not (run_dir / "judging/labels.csv").exists()  # headless writes no labels
    record = json.loads((run_dir / "judging/calibration.json").read_text())
    assert record["judge_model"] == "sim-judge" and record["labellers"] == ["column Human_Accuracy"]
    printed = _printed(run_dir / "08_human_labels.ipynb")
    assert "labels used for PPI: column Human_Accuracy on the 18 planned items" in printed
    assert "one rater only: no inter-human agreement" in printed

    # a person labels the planned items with the tool; three of them differently
    wanted = plan["item_id"].astype(str).tolist()
    first = {str(k): v for k, v in oracle.items() if str(k) in wanted}
    second = pd.DataFrame(
        {
            "item_id": wanted,
            "labeller": "bela",
            "score": [first[i] for i in wanted],
            "status": "ok",
            "note": "",
            "labelled_at": "2026-12-01T10:00:00+00:00",
            "rubric": "riddle_accuracy",
            "rubric_version": "",
        }
    )
    changed = second.index[:3]
    second.loc[changed, "score"] = second.loc[changed, "score"].map({0: 3, 3: 5, 5: 3})
    write_labels_table(second, run_dir / "judging/labels.csv")
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
    assert (kappa["rater_a"], kappa["rater_b"]) == ("bela", "column Human_Accuracy")
    assert float(kappa["ci_low"]) < float(kappa["estimate"]) < 1.0
    assert int(kappa["n"]) == 18
    conflicts = read_frame(run_dir / "tables/human_agreement/label_conflicts_riddle_accuracy.csv")
    assert sorted(conflicts["item_id"].astype(str)) == sorted(wanted[:3])
    family = read_frame(run_dir / "tables/human_agreement/kappa_family.csv")
    assert set(family["human_labels"]) == {"column Human_Accuracy (items file, 24 labels)"}
    printed = _printed(run_dir / "02_human_agreement.ipynb")
    assert "calibration recorded" in printed and "warning" not in printed

    # the report's notebook 08 run again: the judge against both raters, their agreement
    run_parameter_set(
        _write(tmp_path / "p4", {"08_human_labels": {**labelling, "output_dir": "tables/l2"}}),
        run_dir,
        log=False,
    )
    versus = read_frame(run_dir / "tables/l2/judge_vs_human.csv")
    assert sorted(versus["human_labels"]) == ["bela", "column Human_Accuracy"]
    assert "labels used for PPI: bela" in _printed(run_dir / "08_human_labels.ipynb")
    record = json.loads((run_dir / "judging/calibration.json").read_text())
    record["prompt_hash"] = "0" * 16  # as if the prompt had changed since calibration
    (run_dir / "judging/calibration.json").write_text(json.dumps(record))
    run_parameter_set(
        _write(tmp_path / "p3", {"02_human_agreement": agreement}), run_dir, log=False
    )
    assert "warning (simulator:sim-judge): prompt_hash changed" in _printed(
        run_dir / "02_human_agreement.ipynb"
    )
