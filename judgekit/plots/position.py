"""Plots of batch effects: leniency against position in the batch, and batch-size trade-offs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from judgekit.plots._common import require_columns, subplots
from judgekit.plots.style import Width, categorical_colours, figure_size, publication_style


def _levels(
    frame: pd.DataFrame, column: str | None, order: Sequence[object] | None
) -> list[object]:
    if column is None:
        return ["all"]
    return list(order) if order is not None else list(pd.unique(frame[column]))


def plot_position_effect(
    profile: pd.DataFrame,
    *,
    group: str = "group",
    value: str = "value",
    mean: str = "mean",
    low: str = "ci_low",
    high: str = "ci_high",
    group_order: Sequence[object] | None = None,
    xlabel: str = "Position in the batch (0-based)",
    ylabel: str | None = None,
    width: Width = "one",
) -> Figure:
    """Mean leniency at each batch position with its CI band, one line per group (mode).

    Args:
        profile: One row per group and position, as :func:`judgekit.stats.position_profile`
            returns (its ``outcome`` column, when present, labels the y axis).
        group: Group column (e.g. the judging mode); one coloured line and band each.
        value: Position column (x axis).
        mean: Mean column (y axis).
        low: Lower CI bound column.
        high: Upper CI bound column.
        group_order: Group order; default order of appearance.
        xlabel: X-axis label.
        ylabel: Y-axis label; default the profile's ``outcome`` plus "(score points)".
        width: ``"one"`` or ``"two"`` column figure.
    """
    require_columns(profile, [group, value, mean, low, high], "plot_position_effect")
    groups = _levels(profile, group, group_order)
    colours = categorical_colours(groups)
    if ylabel is None:
        outcome = profile["outcome"].iloc[0] if "outcome" in profile.columns else "score"
        ylabel = f"{outcome} (score points, 95% CI)"
    with publication_style():
        fig, axes = subplots(1, 1, figure_size(width, aspect=0.7))
        ax = axes[0]
        ax.axhline(0, color="#6f6f6f", linewidth=0.7, zorder=0)
        for name in groups:
            rows = profile[profile[group] == name].sort_values(value)
            x = rows[value].to_numpy(float)
            ax.fill_between(
                x,
                rows[low].to_numpy(float),
                rows[high].to_numpy(float),
                color=colours[name],
                alpha=0.25,
                linewidth=0,
            )
            ax.plot(x, rows[mean].to_numpy(float), marker="o", color=colours[name], label=str(name))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # positions are whole rows
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y")
        if len(groups) > 1:
            ax.legend(loc="best")
    return fig


def plot_batch_size(
    sensitivity: pd.DataFrame,
    *,
    size: str = "batch_size",
    kappa: str = "kappa",
    low: str = "kappa_ci_low",
    high: str = "kappa_ci_high",
    tokens: str = "prompt_tokens_per_item",
    group: str | None = None,
    group_order: Sequence[object] | None = None,
    kappa_label: str | None = None,
    width: Width = "two",
) -> Figure:
    """Agreement and prompt tokens per item against rows per request (log-scaled x axis).

    The agreement axis says "95% CI" only when at least one interval is drawn; points without
    one are drawn as points.

    Args:
        sensitivity: One row per batch size (and group), as
            :func:`judgekit.judging.batch_probe.batch_size_sensitivity` returns.
        size: Batch-size column.
        kappa: Agreement column.
        low: Lower CI bound of the agreement.
        high: Upper CI bound of the agreement.
        tokens: Prompt tokens per item column.
        group: Optional column (e.g. rubric or mode) drawn as separate coloured lines.
        group_order: Group order; default order of appearance.
        kappa_label: Y-axis label of the agreement panel; default "Kappa vs human", with
            "(95% CI)" when any interval is drawn.
        width: ``"one"`` or ``"two"`` column figure.
    """
    columns = [size, kappa, low, high, tokens] + ([group] if group is not None else [])
    require_columns(sensitivity, columns, "plot_batch_size")
    groups = _levels(sensitivity, group, group_order)
    colours = categorical_colours(groups)
    drawn = bool((sensitivity[low].notna() & sensitivity[high].notna()).any())
    if kappa_label is None:
        kappa_label = "Kappa vs human (95% CI)" if drawn else "Kappa vs human"
    with publication_style():
        fig, (left, right) = subplots(1, 2, figure_size(width, aspect=0.38), sharex=True)
        for k, name in enumerate(groups):
            rows = sensitivity if group is None else sensitivity[sensitivity[group] == name]
            rows = rows.sort_values(size)
            x = rows[size].to_numpy(float)
            dodged = x * 1.04 ** (k - (len(groups) - 1) / 2)  # keep intervals apart
            estimate = rows[kappa].to_numpy(float)
            errors = np.vstack([estimate - rows[low].to_numpy(float), rows[high] - estimate])
            left.errorbar(
                dodged,
                estimate,
                yerr=errors,
                fmt="o-",
                color=colours[name],
                capsize=2,
                label=str(name),
            )
            right.plot(x, rows[tokens].to_numpy(float), "o-", color=colours[name])
        for ax in (left, right):
            ax.set_xscale("log")
            ax.set_xlabel("Rows per request")
            ax.grid(axis="y")
        ticks = sorted(set(sensitivity[size].astype(int)))
        right.set_xticks(ticks, [str(t) for t in ticks])
        right.minorticks_off()
        left.minorticks_off()
        left.set_ylabel(kappa_label)
        left.set_title("Agreement")
        right.set_title("Prompt cost")
        right.set_yscale("log")
        right.set_ylabel("Prompt tokens per item")
        if group is not None:
            left.legend(loc="best")
    return fig
