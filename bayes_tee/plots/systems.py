"""Figures of a comparison of systems: the leaderboard forest, P(row beats column) and the
rank distributions (tables from :mod:`bayes_tee.posterior.leaderboard`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ._base import figure, warn_footer

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_leaderboard(table: pd.DataFrame, *, ax=None) -> Figure:
    """Forest plot, best system on top: the estimate, its *panel* interval (thick: these judges
    and prompts) and its *new* interval (thin: new levels of every random facet), with P(best)
    and the tie group's letters beside each name (``table`` from
    :meth:`bayes_tee.Posterior.leaderboard`).
    """
    n = len(table)
    fig, ax = figure(ax, (6.4, 0.9 + 0.38 * n))
    y = np.arange(n)[::-1]
    est = table["estimate"].to_numpy()
    ax.hlines(y, table["new_low"], table["new_high"], color="#4C72B0", lw=1.2, label="new")
    ax.hlines(y, table["panel_low"], table["panel_high"], color="#4C72B0", lw=4.5, alpha=0.6, label="panel")
    ax.plot(est, y, "o", color="black", ms=4)
    ax.set_yticks(y)
    groups = table["group"] if "group" in table else [""] * n
    labels = [
        f"{s}  ({p:.0%})" + (f"  [{g}]" if g else "")
        for s, p, g in zip(table["system"], table["p_best"], groups)
    ]
    ax.set_yticklabels(labels, fontsize=8)
    level = table.attrs.get("level", 0.9)
    tied = " and [tie group]" if "group" in table else ""
    ax.set_xlabel(f"score ({level:.0%} intervals); P(best){tied} beside each name")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    ax.set_title("Leaderboard", fontsize=10)
    warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_cost_front(table: pd.DataFrame, *, ax=None) -> Figure:
    """Score against cost, one point per system with its *new* (thin) and *panel* (thick)
    intervals, the front of the estimates drawn as a step line and each system's P(on the
    front) beside its name (``table`` from :meth:`bayes_tee.Posterior.leaderboard` with
    ``cost=``, whose ``attrs["front"]`` names the systems on the estimates' front; the cost
    axis is logarithmic when the costs span more than 20x).
    """
    if "p_pareto" not in table:
        raise ValueError("plot_cost_front needs a leaderboard with costs: post.leaderboard(cost=...).")
    fig, ax = figure(ax, (6.8, 4.6))
    cost, est = table["cost"].to_numpy(float), table["estimate"].to_numpy(float)
    on = table["system"].isin(table.attrs.get("front", [])).to_numpy()
    colour = np.where(on, "#C44E52", "#4C72B0")
    ax.vlines(cost, table["new_low"], table["new_high"], color=colour, lw=1.0, alpha=0.8)
    ax.vlines(cost, table["panel_low"], table["panel_high"], color=colour, lw=4.0, alpha=0.45)
    ax.scatter(cost, est, c=colour, s=22, zorder=3)
    order = np.argsort(cost[on], kind="stable")
    ax.step(cost[on][order], est[on][order], where="post", color="#C44E52", lw=1, alpha=0.7,
            label="front of the estimates")  # fmt: skip
    for x, y, name, p, g in zip(
        cost, est, table["system"], table["p_pareto"], table.get("group", [""] * len(table))
    ):
        ax.annotate(f"{name} {p:.0%}" + (f" [{g}]" if g else ""), (x, y), xytext=(4, 3),
                    textcoords="offset points", fontsize=7)  # fmt: skip
    positive = cost[cost > 0]
    if len(positive) == len(cost) and positive.max() / positive.min() > 20:
        ax.set_xscale("log")
    level = table.attrs.get("level", 0.9)
    ax.set_xlabel("cost")
    ax.set_ylabel(f"score ({level:.0%} intervals)")
    ax.set_title("Cost front: P(no system as cheap is better) beside each name", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_p_better(matrix: pd.DataFrame, *, ax=None) -> Figure:
    """Heat map of P(row system scores higher than column system), systems best first
    (``matrix`` from :func:`bayes_tee.posterior.leaderboard.p_better_matrix`).
    """
    n = len(matrix)
    fig, ax = figure(ax, (1.2 + 0.45 * n, 0.9 + 0.4 * n))
    im = ax.imshow(matrix.to_numpy(float), vmin=0, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(n))
    ax.set_xticklabels(matrix.columns, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n))
    ax.set_yticklabels(matrix.index, fontsize=7)
    if n <= 15:
        for i in range(n):
            for j in range(n):
                v = matrix.iat[i, j]
                if np.isfinite(v):
                    ink = "white" if abs(v - 0.5) > 0.3 else "black"
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6, color=ink)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="P(row > column)")
    ax.set_title("P(row scores higher than column)", fontsize=10)
    warn_footer(fig, matrix.attrs.get("warning"))
    return fig


def plot_ranks(table: pd.DataFrame, *, ax=None) -> Figure:
    """Rank distributions: P(rank = r) per system, best system on top (``table`` from
    :func:`bayes_tee.posterior.leaderboard.rank_probabilities`, one column per rank).
    """
    n, k = table.shape
    fig, ax = figure(ax, (1.6 + 0.45 * k, 0.9 + 0.38 * n))
    im = ax.imshow(table.to_numpy(float), vmin=0, vmax=1, cmap="Blues", aspect="auto")
    ax.set_xticks(range(k))
    ax.set_xticklabels(table.columns, fontsize=7)
    ax.set_yticks(range(n))
    ax.set_yticklabels(table.index, fontsize=7)
    ax.set_xlabel("rank")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="probability")
    ax.set_title("Rank distributions", fontsize=10)
    warn_footer(fig, table.attrs.get("warning"))
    return fig
