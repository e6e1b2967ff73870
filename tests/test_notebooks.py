"""The notebooks: committed clean, parameterised, and executable end to end on the simulator.

The pipeline test runs every notebook with papermill against judgekit's own OpenAI-compatible
simulator (an oracle built from the demo's human labels, with noise so that runs and prompt
variants disagree a little), through the real ``openai`` client, in a temporary folder. A
canary API key sits in the environment the whole time and must not appear in any output.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import jupytext
import jupytext.config
import jupytext.paired_paths
import nbformat
import pandas as pd
import papermill
import pytest
import yaml

from judgekit import config
from judgekit.data import read_table
from judgekit.reporting.notebooks import load_parameter_set, run_paper, run_parameter_set
from judgekit.simulator import SimulatorConfig, run_simulator

NOTEBOOKS = sorted(config.NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
CANARY = "canary-key-7f3a9c0e5b1d4e2f8a6c"
BATCH_SIZES = (1, 10, 60)  # notebook 07's rows per request (as in params/paper)
EXPECTED_FIGURES = {
    "agreement_kappa_forest",
    "agreement_confusion",
    "consistency_flip_rates",
    "paraphrase_kappa_riddle_accuracy_simulator_sim-judge",
    "paraphrase_kappa_riddle_reasoning_simulator_sim-judge",
    "distributions_riddle_accuracy",
    "distributions_riddle_reasoning",
    "self_preference",
    "riddles_kappa_forest",
    "riddles_accuracy_distributions",
    "riddles_accuracy_confusion",
    "riddles_self_evaluation_bias",
    "riddles_composite",
    "riddles_hallucination",
    "riddles_topic_difficulty",
    "position_effect_riddle_accuracy",
    "batch_size_riddle_accuracy",
    "labels_planner",
    "labels_ppi_riddles",
}


def test_there_are_ten_notebooks() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == [f"{n:02d}" for n in range(1, 11)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_is_clean_and_parameterised(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a code cell has outputs"
            assert cell.execution_count is None
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} parameters cells"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    parameters = papermill.inspect_notebook(str(path))
    source_lines = [line for line in tagged[0].source.splitlines() if line.strip()]
    # Every line of the parameters cell is one flat, typed, commented parameter.
    assert len(parameters) == len(source_lines)
    for name, spec in parameters.items():
        assert spec["inferred_type_name"] in {"str", "int", "float", "bool", "list", "dict"}, name
        assert spec["help"], f"{path.name}: parameter {name} has no comment"
        # A literal, not derived from another value or from code.
        ast.literal_eval(spec["default"])


def _cells(notebook: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in notebook.cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_paired_with_its_source_and_in_sync(path: Path) -> None:
    source = config.NOTEBOOKS_DIR / "src" / f"{path.stem}.py"
    # jupytext itself pairs the two (notebooks/jupytext.toml), so JupyterLab edits reach src/.
    found = jupytext.config.find_jupytext_configuration_file(str(path.parent))
    settings = jupytext.config.load_jupytext_configuration_file(found)
    formats = settings.default_formats(str(path)) if settings else None
    assert formats is not None, f"{path.name} is not paired"
    paired = {Path(p) for p, _ in jupytext.paired_paths.paired_paths(str(path), "ipynb", formats)}
    assert source in paired
    text_cells = _cells(jupytext.read(source))
    assert text_cells == _cells(nbformat.read(path, as_version=4)), (
        f"{path.name} differs from src/{source.name}: run `make notebooks`"
    )


def test_every_source_has_its_notebook() -> None:
    sources = sorted((config.NOTEBOOKS_DIR / "src").glob("*.py"))
    assert [p.stem for p in sources] == [p.stem for p in NOTEBOOKS]


@pytest.mark.parametrize("name", ["demo", "paper"])
def test_parameter_sets_only_set_known_parameters(name: str, tmp_path: Path) -> None:
    runs = load_parameter_set(config.PARAMS_DIR / name, tmp_path, tmp_path / "figures")
    # The demo judges with one local model: no panel for 09, which paper/ runs on the riddles;
    # both judge answers one at a time, so neither runs the pairwise step 10.
    left_out = {"10_pairwise"} | ({"09_judge_panel"} if name == "demo" else set())
    assert {r.notebook.stem for r in runs} == {p.stem for p in NOTEBOOKS} - left_out
    judging = next(r for r in runs if r.name == "01_run_judging")
    assert judging.parameters["dataset_path"] == str(config.DATA_DIR / "demo/riddles_demo.csv")
    assert not any("key" in k.lower() for r in runs for k in r.parameters)


def test_unknown_parameter_is_refused(tmp_path: Path) -> None:
    params = tmp_path / "params"
    params.mkdir()
    (params / "02_human_agreement.yaml").write_text("judgment_path: x.parquet\n")
    typo = r"unknown parameter `judgment_path` \(did you mean `judgments_path`\?\)"
    with pytest.raises(ValueError, match=typo):
        load_parameter_set(params, tmp_path, tmp_path / "figures")


def _write_params(folder: Path, runs: dict[str, dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, values in runs.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(values), encoding="utf-8")
    return folder


def _oracle() -> dict[str, float]:
    frame = read_table(config.DATA_DIR / "demo/riddles_demo.csv").frame
    return {str(i): float(v) for i, v in zip(frame["ID"], frame["Human_Accuracy"], strict=True)}


@pytest.mark.notebooks
def test_every_notebook_runs_on_the_simulator_without_leaking_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    simulator = SimulatorConfig(oracle=_oracle(), noise_rate=0.1, seed=11, model="sim-judge")
    with run_simulator(simulator) as sim:
        judge = {
            "dataset_path": "{data_dir}/demo/riddles_demo.csv",
            "judge_model": "sim-judge",
            "base_url": sim.base_url,
            "provider": "simulator",
            "store_path": "responses.sqlite",
        }
        params = _write_params(
            tmp_path / "params",
            {
                "01_run_judging": {
                    **judge,
                    "variants": ["base", "paraphrase_1", "paraphrase_2"],
                    "output_dir": "judging",
                },
                "01_run_judging--repeats": {
                    **judge,
                    "rubrics": ["riddle_accuracy"],
                    "runs": 3,
                    "output_dir": "repeats",
                },
                "02_human_agreement": {
                    "judgments_path": "judging/judgments.parquet",
                    "repeats_path": "repeats/judgments.parquet",
                    "n_boot": 200,
                    "min_expected_kappa": 0.5,
                    "output_dir": "tables/agreement",
                },
                "03_run_consistency": {
                    "judgments_path": "repeats/judgments.parquet",
                    "n_boot": 200,
                    "output_dir": "tables/consistency",
                },
                "04_paraphrase_sensitivity": {
                    "judgments_path": "judging/judgments.parquet",
                    "n_boot": 200,
                    "min_expected_kappa": 0.3,
                    "output_dir": "tables/paraphrase",
                },
                "05_distributions_and_bias": {
                    "judgments_path": "judging/judgments.parquet",
                    "own_models": {"simulator:sim-judge": "model-a"},
                    "output_dir": "tables/bias",
                },
                "06_riddles_study_reproduced": {"output_dir": "tables/study"},
                "07_batch_effects": {
                    "judgments_path": "judging/judgments.parquet",
                    "dataset_path": "{data_dir}/demo/riddles_demo.csv",
                    "batch_sizes": list(BATCH_SIZES),
                    "judge_model": "sim-judge",
                    "base_url": sim.base_url,
                    "provider": "simulator",
                    "output_dir": "tables/batch_effects",
                },
                "08_human_labels": {
                    "judgments_path": "judging/judgments.parquet",
                    "dataset_path": "{data_dir}/demo/riddles_demo.csv",
                    "n_labels": 18,
                    "n_boot": 200,
                    "n_subsamples": 50,
                    "endpoint": sim.base_url,
                    "output_dir": "tables/human_labels",
                },
            },
        )
        run_dir = run_paper(params, tmp_path / "run", figures_dir=tmp_path / "paper_figures")
        requests = sim.stats()["requests"]
    # 2 rubrics x 3 variants, plus 2 new runs of one rubric (run 1 is replayed from the store),
    # plus notebook 07 judging every item again at each batch size (its own store, no re-asks:
    # the simulator sends no malformed replies here).
    n_items = len(_oracle())
    assert requests == 8 + sum(math.ceil(n_items / size) for size in BATCH_SIZES)
    executed = sorted(run_dir.glob("*.ipynb"))
    assert len(executed) == 9
    assert not list(run_dir.glob("*.failed.ipynb"))
    figures = {p.stem for p in (run_dir / "figures").glob("*.png")}
    assert figures == EXPECTED_FIGURES
    assert {p.stem for p in (tmp_path / "paper_figures").glob("*.pdf")} == EXPECTED_FIGURES
    shown = 0
    for path in executed:
        notebook = nbformat.read(path, as_version=4)
        shown += sum(
            "image/png" in output.get("data", {})
            for cell in notebook.cells
            if cell.cell_type == "code"
            for output in cell.outputs
        )
        record = notebook.metadata["judgekit"]["provenance"]
        assert record["environment"]["OPENAI_API_KEY"] == "<withheld>"
        assert record["packages"]["pandas"]
        assert "provenance" in notebook.cells[0].metadata["tags"]
    assert shown == len(EXPECTED_FIGURES), "every saved figure is also shown in its notebook"
    seed004 = pd.read_csv(run_dir / "tables" / "agreement" / "seed004_report.csv")
    consistency = seed004[seed004["check"] == "run_consistency"].set_index("rubric")["passed"]
    assert pd.notna(consistency["riddle_accuracy"]), "the repeats reach seed 004's check"
    assert pd.isna(consistency["riddle_reasoning"]), "a rubric without repeats gets no verdict"
    judging = nbformat.read(run_dir / "01_run_judging.ipynb", as_version=4)
    assert judging.metadata["judgekit"]["provenance"]["parameters"]["judge_model"] == "sim-judge"
    assert (
        (run_dir / "judging/scores/riddle_accuracy-base-run1.csv")
        .read_text()
        .startswith("ID,score\n")
    )
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    assert leaks == []


@pytest.mark.notebooks
def test_failed_notebook_is_kept_and_named(tmp_path: Path) -> None:
    params = _write_params(
        tmp_path / "params",
        {"06_riddles_study_reproduced": {"scores_path": str(tmp_path / "absent.csv")}},
    )
    with pytest.raises(RuntimeError, match=r"06_riddles_study_reproduced.*failed in cell"):
        run_parameter_set(params, tmp_path / "run", log=False)
    failed = tmp_path / "run/06_riddles_study_reproduced.failed.ipynb"
    assert failed.is_file()
    assert not (tmp_path / "run/06_riddles_study_reproduced.ipynb").exists()
    assert json.loads(failed.read_text())["metadata"]["judgekit"]["provenance"]
