"""Batch-size sensitivity on the simulator, and the two batch-effect figures."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from judgekit.engine import OpenAIJudge
from judgekit.judging.batch_probe import batch_size_sensitivity
from judgekit.plots.position import plot_batch_size, plot_position_effect
from judgekit.plots.save import save_figure
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator
from judgekit.stats.position import position_profile
from judgekit.types import Item

matplotlib.use("Agg")

ACCURACY = load_rubric("riddle_accuracy")
N_ITEMS = 24
HUMAN = {str(i): float((0, 3, 5)[i * 7 % 3]) for i in range(1, N_ITEMS + 1)}


def items() -> list[Item]:
    return [
        Item(str(i), {"Question": f"Riddle {i}?", "Answer": f"Ans {i}", "Ref_Answer": f"Ref {i}"})
        for i in range(1, N_ITEMS + 1)
    ]


@pytest.fixture(scope="module")
def sensitivity() -> pd.DataFrame:
    config = SimulatorConfig(oracle=HUMAN, noise_rate=0.15, malformed={"missing_rows": 0.3}, seed=4)
    with run_simulator(config) as sim:
        client = OpenAIJudge("sim-judge", base_url=sim.base_url, provider="simulator")
        return batch_size_sensitivity(
            items(), ACCURACY, client, HUMAN, sizes=(1, 6, 24), structured=False
        )


def test_each_size_is_judged_and_summarised(sensitivity) -> None:
    assert sensitivity["batch_size"].tolist() == [1, 6, 24]
    assert sensitivity["requests"].iloc[0] >= N_ITEMS
    assert (sensitivity["n_items"] == N_ITEMS).all()
    # The instructions are paid once per request, so bigger batches cost fewer tokens per item.
    tokens = sensitivity["prompt_tokens_per_item"].tolist()
    assert tokens[0] > 5 * tokens[2]
    assert sensitivity["kappa_method"].eq("cohen_kappa[quadratic-rank]").all()
    assert (
        (sensitivity["kappa_ci_low"] < sensitivity["kappa"]) | (sensitivity["kappa"] == 1)
    ).all()
    assert (sensitivity["reask_rate"] > 0).all()  # the fault mix hits every size
    assert (sensitivity["first_ask_failure_rate"] >= sensitivity["reask_rate"]).all()
    assert (sensitivity["wall_time_s"] > 0).all()


def test_figures_are_drawn_and_saved(sensitivity, tmp_path) -> None:
    fig = plot_batch_size(sensitivity)
    left, right = fig.axes[:2]
    assert right.get_yscale() == "log" and left.get_xscale() == "log"
    assert np.allclose(right.lines[0].get_ydata(), sensitivity["prompt_tokens_per_item"])
    pdf, png = save_figure(fig, "batch_size", folder=tmp_path)
    assert pdf.stat().st_size > 0 and png.stat().st_size > 0

    judgments = pd.DataFrame(
        {
            "item_id": [str(i % 6) for i in range(24)],
            "status": "ok",
            "score": [float(i % 4) for i in range(24)],
            "attempt": 1,
            "position": [i % 4 for i in range(24)],
            "batch_index": [i // 4 for i in range(24)],
            "mode": ["independent"] * 12 + ["conversation"] * 12,
        }
    )
    profile = position_profile(judgments, {str(i): 1.0 for i in range(6)}, group_col="mode")
    fig = plot_position_effect(profile, group_order=["independent", "conversation"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines[1:]] == ["independent", "conversation"]
    assert np.allclose(ax.lines[1].get_ydata(), [-1.0, 0.0, 1.0, 2.0])
    assert ax.get_ylabel().startswith("judge - human")
    save_figure(fig, "position_effect", folder=tmp_path)


def test_plots_name_missing_columns() -> None:
    with pytest.raises(ValueError, match="plot_position_effect: missing column"):
        plot_position_effect(pd.DataFrame({"group": ["a"]}))


def test_failed_read_statuses_are_the_engines_reask_statuses() -> None:
    from judgekit.engine import REASK_STATUSES
    from judgekit.stats.run_summary import FAILED_READ_STATUSES

    assert {status.value for status in REASK_STATUSES} == FAILED_READ_STATUSES


def test_position_effects_name_what_is_missing() -> None:
    from judgekit.stats.position import position_effects

    with pytest.raises(
        ValueError, match=r"judgments: missing column\(s\) \['attempt', 'position', 'batch_index'\]"
    ):
        position_effects(pd.DataFrame({"item_id": ["1"], "status": ["ok"], "score": [1.0]}))
    with pytest.raises(ValueError, match="adjust must be"):
        position_effects(pd.DataFrame(), adjust="median")  # type: ignore[arg-type]
