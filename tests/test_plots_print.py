"""The figures' print rules (issue 25), one test per rule, on small frames.

Every plot function is drawn from a few rows and checked as a reviewer would: a one- or
two-column width, no text under 8 pt at that size and none cut off at the edge, row labels
without the context every row shares, named guide lines, fixed colour limits, no trivial
diagonal, cells of a readable size, whole-number ticks where the axis counts things, and one
meaning per colour within a figure.
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import QuadMesh
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from judgekit import plots
from judgekit.plots.style import MIN_FONT_PT, ONE_COLUMN_IN, TWO_COLUMN_IN


@pytest.fixture(autouse=True)
def _close_figures() -> None:
    yield
    plt.close("all")


def _kappas() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rubric": ["riddle_accuracy"] * 3 + ["riddle_reasoning"] * 3,
            "judge": ["gpt-4.1"] * 6,
            "weighting": ["unweighted", "linear", "quadratic"] * 2,
            "estimate": [0.41, 0.55, 0.68, 0.3, 0.45, 0.6],
            "ci_low": [0.2, 0.35, 0.5, 0.1, 0.25, 0.4],
            "ci_high": [0.6, 0.7, 0.82, 0.5, 0.62, 0.76],
        }
    )


def _confusion(levels: list[float], judges: list[str]) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        [
            {"judge": j, "level_a": a, "level_b": b, "count": int(rng.integers(0, 40))}
            for j in judges
            for a in levels
            for b in levels
        ]
    )


def _pairs(values: list[float]) -> pd.DataFrame:
    names = ["base", "paraphrase_1", "paraphrase_2"]
    rows = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    return pd.DataFrame(
        {"rater_a": [a for a, _ in rows], "rater_b": [b for _, b in rows], "estimate": values}
    )


def _per_item(n_runs: int) -> pd.DataFrame:
    flips = [0, 0, 0, 1, 0, 1] if n_runs == 2 else [0, 1, 2, 0, 0, 1]
    return pd.DataFrame(
        {
            "rubric": ["riddle_accuracy"] * 6,
            "judge": ["A", "A", "A", "B", "B", "B"],
            "n_runs": n_runs,
            "flip_rate": [f / n_runs for f in flips],
        }
    )


def _ppi() -> tuple[pd.DataFrame, pd.DataFrame]:
    intervals = pd.DataFrame(
        [
            {
                "model": m,
                "estimator": e,
                "estimate": 3.0 + k,
                "ci_low": 2.5 + k,
                "ci_high": 3.5 + k,
                "truth": 3.1 + k,
            }
            for k, m in enumerate(["Claude", "GPT"])
            for e in ("ppi", "judge_only", "human_only")
        ]
    )
    coverage = pd.DataFrame(
        {
            "judge": ["GPT", "GPT", "Gemini", "Gemini"],
            "model": ["Claude", "GPT"] * 2,
            "coverage": [0.94, 0.96, 0.93, 0.95],
        }
    )
    return intervals, coverage


def _subsets() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rubric": ["Accuracy"] * 4,
            "subset": ["GPT", "Gemini", "GPT + Gemini", "GPT + Gemini + Claude"],
            "cost": [1, 1, 2, 3],
            "estimate": [0.8, 0.85, 0.88, 0.9],
            "ci_low": [0.7, 0.75, 0.8, 0.84],
            "ci_high": [0.9, 0.92, 0.94, 0.95],
            "pareto": [False, True, True, True],
            "coverage": [1.0, 1.0, 0.9, 1.0],
        }
    )


def _scores(
    raters: tuple[str, ...] = ("Human", "Perplexity", "GPT", "Gemini", "Claude"),
) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        [
            {"model": m, "rater": r, "score": float(rng.choice([0, 3, 5]))}
            for m in ("Claude", "GPT", "Gemini")
            for r in raters
            for _ in range(10)
        ]
    )


FIGURES: dict[str, Callable[[], Figure]] = {
    "kappa_forest": lambda: plots.plot_kappa_forest(
        _kappas(),
        label=["rubric", "judge", "weighting"],
        colour_by="weighting",
        title="variant base, run 1",
    ),
    "kappa_forest_long_labels": lambda: plots.plot_kappa_forest(
        pd.DataFrame(
            {
                "rubric": ["Reasoning", "Grammar"],
                "rater_b": ["jury:dawid_skene", "jury:majority"],
                "estimate": [0.9, 0.45],
                "ci_low": [0.85, 0.3],
                "ci_high": [0.95, 0.55],
            }
        ),
        label=["rubric", "rater_b"],
        xlabel="Quadratic weighted kappa with the human (95% CI, clusters resampled)",
    ),
    "confusion_grid": lambda: plots.plot_confusion_grid(
        _confusion([1, 2, 3, 4], ["A", "B"]), title="variant base, run 1"
    ),
    "confusion_grid_four_judges": lambda: plots.plot_confusion_grid(
        _confusion([0, 3, 5], ["Perplexity", "GPT", "Gemini", "Claude"])
    ),
    "confusion_grid_six_judges": lambda: plots.plot_confusion_grid(
        _confusion([0, 3, 5], ["Perplexity", "GPT", "Gemini", "Claude", "Llama", "Qwen"])
    ),
    "score_distributions": lambda: plots.plot_score_distributions(_scores()),
    "score_distributions_long_names": lambda: plots.plot_score_distributions(
        _scores(("human", *(f"simulator:sim-judge · paraphrase_{k}" for k in (1, 2, 3))))
    ),
    "paraphrase_matrix": lambda: plots.plot_paraphrase_matrix(
        _pairs([0.9, 0.7, 0.85]), title="riddle_accuracy · gpt-4.1"
    ),
    "consistency": lambda: plots.plot_consistency(_per_item(2), panel=["rubric", "judge"]),
    "pair_matrix": lambda: plots.plot_pair_matrix(
        pd.concat([_pairs([0.9, 0.7, 0.85]).assign(rubric=r) for r in ("Accuracy", "Grammar")]),
        panel="rubric",
    ),
    "subset_costs": lambda: plots.plot_subset_costs(
        _subsets(), panel="rubric", ylabel="Quadratic weighted kappa with the human (95% CI)"
    ),
    "self_bias": lambda: plots.plot_self_bias(
        pd.DataFrame(
            {
                "judge": ["Accuracy · GPT"] * 2 + ["Reasoning · Gemini"] * 2,
                "method": ["naive (the study's t-test)", "controlled for human"] * 2,
                "estimate": [0.3, 0.05, -0.1, 0.0],
                "ci_low": [0.1, -0.1, -0.3, -0.1],
                "ci_high": [0.5, 0.2, 0.1, 0.1],
            }
        ),
        xlabel="Own-model minus other-model score (95% CI)",
    ),
    "ppi_study": lambda: plots.plot_ppi_study(*_ppi()),
    "planner": lambda: plots.plot_planner(
        pd.DataFrame({"n": [10, 20, 30, 50], "half_width": [0.4, 0.3, 0.25, 0.2]}), chosen=30
    ),
    "position_effect": lambda: plots.plot_position_effect(
        pd.DataFrame(
            {
                "group": "batched",
                "value": [0, 1, 2, 3],
                "mean": [0.1, 0.0, -0.1, 0.2],
                "ci_low": [-0.2, -0.3, -0.4, -0.1],
                "ci_high": [0.4, 0.3, 0.2, 0.5],
            }
        )
    ),
    "batch_size": lambda: plots.plot_batch_size(
        pd.DataFrame(
            {
                "batch_size": [4, 12, 24],
                "kappa": [0.6, 0.55, 0.5],
                "kappa_ci_low": [0.4, 0.35, 0.3],
                "kappa_ci_high": [0.8, 0.75, 0.7],
                "prompt_tokens_per_item": [300.0, 180.0, 150.0],
            }
        )
    ),
    "grouped_bars": lambda: plots.plot_grouped_bars(
        pd.DataFrame(
            {
                "model": ["GPT", "GPT", "Claude", "Claude"],
                "input": ["API", "UI"] * 2,
                "rate": [0.1, 0.2, 0.15, 0.05],
            }
        ),
        category="model",
        group="input",
        value="rate",
        ylabel="Answers scored 0",
        percent=True,
    ),
    "ranked_dots": lambda: plots.plot_ranked_dots(
        pd.DataFrame(
            {
                "topic": ["Music", "Politics & Public Life", "Sports"],
                "mean": [1.0, 3.3, 3.8],
                "lo": [0.2, 2.4, 2.7],
                "hi": [1.9, 4.2, 4.9],
            }
        ),
        category="topic",
        value="mean",
        low="lo",
        high="hi",
        xlabel="Mean human accuracy (0-5, 95% CI)",
    ),
}


# Panel-shaped frames (issue 37's own study): three simulated judges whose names share their
# first letters, five juries, two runs, a 1-10 scale and twelve confusion panels.
PANEL_JUDGES = ["simulator:judge-one", "simulator:judge-two", "simulator:judge-three"]
PANEL_RATERS = [*PANEL_JUDGES, "jury:mean", "jury:median", "jury:majority", "jury:dawid_skene"]
RUNS = ["helpfulness · base · run 1", "helpfulness · base · run 2"]


def _panel_confusion() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    panels = [f"{c} · {v} · {j}" for c in ("run 1", "run 2") for v in ("base", "paraphrase_1")
              for j in PANEL_JUDGES]  # fmt: skip
    levels = range(1, 11)
    return pd.DataFrame(
        [{"panel": p, "level_a": a, "level_b": b, "count": int(rng.integers(0, 4))}
         for p in panels for a in levels for b in levels]
    )  # fmt: skip


def _panel_forest() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for combination in RUNS:
        for rater in PANEL_RATERS:
            e = float(rng.uniform(0.5, 0.9))
            rows.append(
                {"combination": combination, "rater_b": rater, "estimate": e,
                 "kind": "jury" if rater.startswith("jury") else "judge",
                 "ci_low": e - 0.1, "ci_high": min(e + 0.08, 1.0)}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _panel_subsets() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for combination in RUNS:
        for k in (1, 2, 3):
            for subset in itertools.combinations(PANEL_JUDGES, k):
                e = float(rng.uniform(0.6, 0.9))
                rows.append(
                    {"combination": combination, "subset": " + ".join(subset),
                     "cost": 412.5 * k + float(rng.uniform(0, 40)), "estimate": e,
                     "ci_low": e - 0.1, "ci_high": e + 0.05, "pareto": k == 1, "coverage": 1.0}
                )  # fmt: skip
    return pd.DataFrame(rows)


PAGES = plots.plot_confusion_pages  # drawn lazily: FIGURES holds one page per entry
PAGE_NAMES = [f"panel_confusion_page_{k}" for k in (1, 2, 3)]
FIGURES.update(
    {
        "panel_forest": lambda: plots.plot_kappa_forest(
            _panel_forest(),
            label=["combination", "rater_b"],
            colour_by="kind",
            xlabel="Quadratic weighted kappa with the human (95% CI, clusters resampled)",
        ),
        "panel_subsets_cost": lambda: plots.plot_subset_costs(
            _panel_subsets(),
            panel="combination",
            cost_label="Cost (tokens per item)",
            ylabel="Quadratic weighted kappa with the human (95% CI)",
        ),
        "panel_self_preference": lambda: plots.plot_self_bias(
            pd.DataFrame(
                [
                    {
                        "judge": f"helpfulness · {j}",
                        "method": m,
                        "estimate": e,
                        "ci_low": e - 0.2,
                        "ci_high": e + 0.2,
                    }
                    for j in PANEL_JUDGES
                    for m, e in (("naive", 0.3), ("controlled", 0.1))
                ]
            )
        ),
        "panel_batch_size_without_intervals": lambda: plots.plot_batch_size(
            pd.DataFrame(
                {
                    "batch_size": [1, 4, 8],
                    "kappa": [0.6, 0.55, 0.5],
                    "kappa_ci_low": np.nan,
                    "kappa_ci_high": np.nan,
                    "prompt_tokens_per_item": [300.0, 180.0, 150.0],
                }
            )
        ),
        **{name: (lambda k=k: PAGES(_panel_confusion(), panel="panel")[k])
           for k, name in enumerate(PAGE_NAMES)},
    }
)  # fmt: skip

# The pairwise report's figures (10_pairwise), with a panel of long judge labels.
_PAIR_RATERS = ("gpt-4o-2024-08-06 · base · run 1", "claude-3-5-sonnet · base · run 1")
FIGURES.update(
    {
        "pairwise_outcomes": lambda: plots.plot_outcome_shares(
            pd.DataFrame(
                [
                    {"judge": j, "variant": "paraphrase-2", "run": 1, "outcome": o, "estimate": e}
                    for j in ("gpt-4o-2024-08-06", "claude-3-5-sonnet", "llama-3-70b")
                    for o, e in (("consistent_win", 0.55), ("consistent_tie", 0.1),
                                 ("inconsistent", 0.25), ("one_unparsed", 0.07),
                                 ("both_unparsed", 0.03))
                ]
            )
        ),
        "pairwise_bradley_terry": lambda: plots.plot_strength_forest(
            pd.DataFrame(
                [
                    {"rater": r, "model": m, "strength": e + k * 0.1, "ci_low": e - 0.4,
                     "ci_high": e + 0.5}
                    for k, r in enumerate(_PAIR_RATERS)
                    for m, e in (("gpt-4-turbo", 1.2), ("mixtral-8x7b-instruct", 0.1),
                                 ("vicuna-13b-v1.5", -0.5), ("alpaca-13b", -0.8))
                ]
            ),
            rater="rater",
        ),
    }
)  # fmt: skip


def _made_and_drawn(make: Callable[[], list[Figure]]) -> list[Figure]:
    """Figures out of pyplot's list (the per-test close leaves them be), each drawn once.

    A UserWarning while making or drawing fails: constrained layout gave up (axes collapsed).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        figures = make()
        for fig in figures:
            plt.close(fig)  # closing takes the canvas away: give it its own again
            FigureCanvasAgg(fig)
            fig.canvas.draw()
    return figures


@pytest.fixture(scope="module")
def confusion_pages() -> list[Figure]:
    """The twelve-panel confusion pages, made by one call for the whole module."""
    return _made_and_drawn(lambda: PAGES(_panel_confusion(), panel="panel"))


@pytest.fixture(scope="module")
def figure(confusion_pages: list[Figure]) -> Callable[[str], Figure]:
    """FIGURES[name], made and drawn once per module: the tests only read it."""
    made = dict(zip(PAGE_NAMES, confusion_pages, strict=False))

    def get(name: str) -> Figure:
        if name not in made:
            made[name] = _made_and_drawn(lambda: [FIGURES[name]()])[0]
        return made[name]

    return get


def _undrawn_ticks(fig: Figure) -> set[int]:
    """Tick labels outside their axis' view: matplotlib keeps them but never draws them."""
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            for tick in axis.get_major_ticks():
                if not low - span <= tick.get_loc() <= high + span:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return hidden


def _texts(fig: Figure) -> list[Text]:
    """Every piece of text a reader sees: visible, not empty, not on a hidden axes, drawn."""
    undrawn = _undrawn_ticks(fig)
    return [
        text
        for child in fig.get_children()
        if child.get_visible()
        for text in child.findobj(Text)
        if text.get_visible() and text.get_text().strip() and id(text) not in undrawn
    ]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_one_or_two_columns_wide_with_text_of_8_pt_or_more(
    name: str, figure: Callable[[str], Figure]
) -> None:
    fig = figure(name)
    width, height = fig.get_size_inches()
    assert width in (ONE_COLUMN_IN, TWO_COLUMN_IN), f"{name}: {width} in wide"
    assert height <= 9.0, f"{name}: {height} in tall"
    small = {t.get_text(): t.get_fontsize() for t in _texts(fig) if t.get_fontsize() < MIN_FONT_PT}
    assert small == {}, f"{name}: text under {MIN_FONT_PT} pt at print size"


@pytest.mark.parametrize("name", sorted(FIGURES))  # figure() fails where layout gave up
def test_no_text_is_cut_off_at_the_figure_edge(name: str, figure: Callable[[str], Figure]) -> None:
    fig = figure(name)  # savefig keeps the figure's own box, so whatever sticks out is lost
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # in inches
    width, height = fig.get_size_inches()
    slack = 1 / 72  # one point
    assert box.x0 >= -slack and box.y0 >= -slack, f"{name}: {box}"
    assert box.x1 <= width + slack and box.y1 <= height + slack, f"{name}: {box}"


def test_saved_png_is_the_figure_size(tmp_path) -> None:
    from PIL import Image

    _, png = plots.save_figure(FIGURES["kappa_forest"](), "forest", folder=tmp_path)
    with Image.open(png) as image:
        assert image.size[0] == round(ONE_COLUMN_IN * 300)


def test_kappa_forest_says_shared_context_once_in_the_title(
    figure: Callable[[str], Figure],
) -> None:
    fig = figure("kappa_forest")
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert len(rows) == len(set(rows)) == 6
    assert not any("gpt-4.1" in row for row in rows)
    assert rows[0] == "riddle_accuracy · unweighted"
    assert ax.get_title("right").replace("\n", " ") == "variant base, run 1; judge gpt-4.1"


def test_kappa_forest_axis_does_not_claim_a_weighting_by_default() -> None:
    frame = _kappas().drop(columns="weighting")
    ax = plots.plot_kappa_forest(frame.iloc[:2], label="rubric").axes[0]
    assert "weighted" not in ax.get_xlabel().lower()


def test_kappa_forest_guides_are_named(figure: Callable[[str], Figure]) -> None:
    fig = figure("kappa_forest")
    named = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "0.6: substantial" in named and "0.8: almost perfect" in named
    assert any("Landis & Koch" in legend.get_title().get_text() for legend in fig.legends)
    custom = plots.plot_kappa_forest(_kappas(), label="weighting", reference_lines={0.8: "gate"})
    named = [t.get_text() for legend in custom.legends for t in legend.get_texts()]
    assert named == ["0.8: gate"]


def _mesh_limits(fig: Figure) -> list[tuple[float, float]]:
    return [
        (mesh.norm.vmin, mesh.norm.vmax)
        for ax in fig.axes
        for mesh in ax.collections
        if isinstance(mesh, QuadMesh)
    ]


def test_agreement_heatmaps_have_fixed_colour_limits() -> None:
    low = plots.plot_paraphrase_matrix(_pairs([0.3, 0.35, 0.4]))
    high = plots.plot_paraphrase_matrix(_pairs([0.85, 0.9, 0.95]))
    assert _mesh_limits(low) == _mesh_limits(high)
    assert set(_mesh_limits(low)) == {(0.0, 1.0)}
    signed = plots.plot_paraphrase_matrix(_pairs([-0.2, 0.1, 0.4]), limits=(-1.0, 1.0))
    assert set(_mesh_limits(signed)) == {(-1.0, 1.0)}
    pair = plots.plot_pair_matrix(_pairs([0.2, 0.25, 0.3]))
    assert set(_mesh_limits(pair)) == {(0.0, 1.0)}
    for judges in (["A"], ["A", "B", "C"]):
        confusion = plots.plot_confusion_grid(_confusion([0, 1], judges))
        assert set(_mesh_limits(confusion)) == {(0.0, 1.0)}


@pytest.mark.parametrize("name", ["paraphrase_matrix", "pair_matrix"])
def test_agreement_heatmaps_leave_the_diagonal_blank(
    name: str, figure: Callable[[str], Figure]
) -> None:
    fig = figure(name)
    heat = [ax for ax in fig.axes if ax.texts]  # not the colour bar
    assert heat
    for ax in heat:
        mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
        shown = np.ma.getmaskarray(mesh.get_array()).reshape(3, 3)
        assert shown.diagonal().all(), "the diagonal (a variant with itself) is drawn"
        printed = [t.get_text() for t in ax.texts if t.get_text()]
        assert len(printed) == 6 and "1.00" not in printed


def test_confusion_cells_are_sized_for_their_numbers(figure: Callable[[str], Figure]) -> None:
    fig = figure("confusion_grid")
    assert fig.get_size_inches()[0] == TWO_COLUMN_IN  # two 4 x 4 panels stacked: too tall
    heat = [ax for ax in fig.axes if ax.get_title("left") in {"A", "B"}]
    cell_in = heat[0].get_window_extent().width / fig.dpi / 4
    assert 0.25 <= cell_in <= 0.45
    assert fig.get_suptitle() == "variant base, run 1"
    numbers = [t for t in heat[0].texts if t.get_text()]
    assert numbers and min(t.get_fontsize() for t in numbers) >= MIN_FONT_PT
    four = figure("confusion_grid_four_judges")
    assert four.get_size_inches()[0] == ONE_COLUMN_IN  # 2 x 2 panels of 3 x 3 cells
    six = figure("confusion_grid_six_judges")
    assert six.get_size_inches()[0] == TWO_COLUMN_IN  # three rows of one column: too tall


def test_score_distribution_panels_do_not_repeat_their_row_labels(
    figure: Callable[[str], Figure],
) -> None:
    fig = figure("score_distributions")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    labelled = [ax for ax in visible if any(t.get_visible() for t in ax.get_yticklabels())]
    assert labelled == visible[:1]
    assert [ax.get_title("left") for ax in visible][:2] == ["Human", "Perplexity"]
    assert "n = 30 per panel" in fig.get_supxlabel()


def _integer_ticks(labels: list[Text]) -> bool:
    texts = [t.get_text().replace("\u2212", "-") for t in labels if t.get_text()]
    return bool(texts) and all(text.lstrip("-").isdigit() for text in texts)


def test_flip_chart_counts_runs_in_whole_numbers(figure: Callable[[str], Figure]) -> None:
    fig = figure("consistency")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1"]
    assert ax.get_xlabel().replace("\n", " ").endswith("(of 2)")
    assert ax.get_title("left") == "rubric riddle_accuracy"
    three = plots.plot_consistency(_per_item(3), panel="judge").axes[0]
    assert [t.get_text() for t in three.get_xticklabels()] == ["0", "1", "2"]


@pytest.mark.parametrize("name", ["planner", "position_effect", "subset_costs"])
def test_count_axes_have_whole_number_ticks(name: str, figure: Callable[[str], Figure]) -> None:
    fig = figure(name)
    ax = fig.axes[0]
    ticks = [t for t in ax.get_xticklabels() if ax.get_xlim()[0] <= t.get_position()[0]]
    ticks = [t for t in ticks if t.get_position()[0] <= ax.get_xlim()[1]]
    assert _integer_ticks(ticks), [t.get_text() for t in ticks]


def test_ppi_figure_gives_each_colour_one_meaning(figure: Callable[[str], Figure]) -> None:
    fig = figure("ppi_study")
    left, right = fig.axes[:2]
    estimator_colours = {to_hex(line.get_color()) for line in left.get_lines()} - {"#000000"}
    judge_fills = {to_hex(bar.get_facecolor()) for bar in right.patches if bar.get_height() > 0.5}
    assert len(estimator_colours) == 3 and len(judge_fills) == 2
    assert estimator_colours.isdisjoint(judge_fills)


def test_subset_front_is_named_in_the_title_not_over_the_points(
    figure: Callable[[str], Figure],
) -> None:
    ax = figure("subset_costs").axes[0]
    assert ax.get_title("left").replace("\n", " ") == (
        "Accuracy front (cost): Gemini (1), GPT + Gemini (2), GPT+Gem+Cla (3)"
    )
    assert list(ax.texts) == []


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_two_pieces_of_text_overlap(name: str, figure: Callable[[str], Figure]) -> None:
    fig = figure(name)
    renderer = fig.canvas.get_renderer()
    level = [t for t in _texts(fig) if t.get_rotation() % 90 == 0]
    # A slanted label's box is wider than its glyphs, so only level and upright text is compared.
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in level]
    drawn = [(text, box) for text, box in boxes if box.width > 0 and box.height > 0]
    drawn = [(text, box) for text, box in drawn if fig.bbox.overlaps(box)]
    # Bbox.overlaps of every two boxes shrunk to 90 %, as arrays (a page has ~400 texts).
    x0, y0, x1, y1 = np.array([box.shrunk(0.9, 0.9).extents for _, box in drawn]).reshape(-1, 4).T
    clash = (x0[:, None] <= x1) & (x0 <= x1[:, None]) & (y0[:, None] <= y1) & (y0 <= y1[:, None])
    clashes = [(drawn[i][0], drawn[j][0]) for i, j in np.argwhere(np.triu(clash, 1))]
    assert clashes == [], f"{name}: overlapping text"


def test_every_figure_function_is_checked_by_the_print_rules() -> None:
    drawn = {
        name
        for make in FIGURES.values()
        for name in plots.__all__
        if name.startswith("plot_") and f"plots.{name}(" in inspect.getsource(make)
    }
    drawn |= {"plot_confusion_pages"}  # the panel_confusion_page_* entries, through PAGES
    assert drawn == {name for name in plots.__all__ if name.startswith("plot_")}


def test_a_twelve_panel_ten_level_confusion_grid_is_split_into_pages(
    confusion_pages: list[Figure],
) -> None:
    pages = confusion_pages  # plots.plot_confusion_pages(_panel_confusion(), panel="panel")
    assert len(pages) == 3  # was one figure of 2160 x 14670 px
    for number, page in enumerate(pages, start=1):
        width, height = page.get_size_inches()
        assert width <= TWO_COLUMN_IN and height <= 9.0
        assert page.get_suptitle() == f"page {number} of 3"
    titles = [ax.get_title("left") for page in pages for ax in page.axes if ax.get_title("left")]
    assert len(titles) == len(set(titles)) == 12  # every panel once
    with pytest.raises(ValueError, match="plot_confusion_pages"):
        plots.plot_confusion_grid(_panel_confusion(), panel="panel")


def test_batch_size_axis_claims_an_interval_only_when_one_is_drawn(
    figure: Callable[[str], Figure],
) -> None:
    bare = figure("panel_batch_size_without_intervals").axes[0]
    assert bare.get_ylabel() == "Kappa vs human"
    assert figure("batch_size").axes[0].get_ylabel() == "Kappa vs human (95% CI)"


def test_long_row_labels_widen_the_forest_and_the_self_preference_plot(
    figure: Callable[[str], Figure],
) -> None:
    for name in ("panel_forest", "panel_self_preference"):
        fig = figure(name)
        assert fig.get_size_inches()[0] == TWO_COLUMN_IN, name
        ax = fig.axes[0]
        # The intervals keep at least 40 % of the width, not a sliver beside the labels.
        assert ax.get_window_extent().width / fig.bbox.width >= 0.4, name


def test_titles_are_in_sentence_case(figure: Callable[[str], Figure]) -> None:
    for name in FIGURES:
        fig = figure(name)
        titles = [fig.get_suptitle()] + [
            ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")
        ]
        for title in filter(None, titles):
            words = [w for w in title.replace("·", " ").split() if w[:1].isalpha()]
            capitalised = [w for w in words[1:] if w[0].isupper()]
            # Names (GPT, Claude) may be capitalised; every word after the first may not.
            assert len(words) < 3 or len(capitalised) < len(words) - 1, (name, title)
