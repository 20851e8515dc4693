"""Figures of simulation studies: coverage per method and design, and the coverage staircase."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_coverage(table: pd.DataFrame, target: str | None = None, level: float | None = None) -> Figure:
    """Coverage per method (points, Monte Carlo 95% error bars) for each design, one panel per
    target, against the nominal level (dashed) (``table`` from
    :meth:`bayes_tee.studies.coverage.CoverageStudy.table`).
    """
    level = float(table["level"].iloc[0]) if level is None else level
    table = table[np.isclose(table["level"], level)]
    targets = [target] if target else list(dict.fromkeys(table["target"]))
    designs = list(dict.fromkeys(table["design"]))
    methods = [m for m in ("naive", "anova_wald", "bootstrap", "bayes") if m in set(table["method"])]
    fig, axes = plt.subplots(
        1,
        len(targets),
        figsize=(3.2 * len(targets) + 1.5, 0.45 * len(designs) * len(methods) + 1.8),
        sharey=True,
        squeeze=False,
    )
    step = 0.8 / len(methods)
    for ax, tgt in zip(axes[0], targets):
        sub = table[table["target"] == tgt]
        for k, m in enumerate(methods):
            rows = sub[sub["method"] == m].set_index("design").reindex(designs)
            y = np.arange(len(designs))[::-1] + 0.4 - step * (k + 0.5)
            ax.errorbar(
                rows["coverage"] * 100,
                y,
                xerr=1.96 * rows["mc_se"] * 100,
                fmt="o",
                ms=4,
                capsize=2,
                color=f"C{k}",
                label=m if tgt == targets[0] else None,
            )
        ax.axvline(level * 100, color="black", ls="--", lw=0.8)
        ax.set_xlim(0, 102)
        ax.set_title(tgt, fontsize=10)
        ax.set_xlabel("coverage (%)")
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(np.arange(len(designs))[::-1], designs)
    fig.legend(loc="lower center", ncol=len(methods), fontsize=8, frameon=False)
    n = int(table["n_sims"].max()) if len(table) else 0
    fig.suptitle(
        f"Coverage of nominal {level:.0%} intervals ({n} simulated data sets per design)", fontsize=11
    )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def plot_staircase(
    table: pd.DataFrame, level: float = 0.95, target: str = "theta (TEE)", method: str = "bayes"
) -> Figure:
    """Coverage against the number of items per scenario (Messing 2026 App. E.4, Fig. 11b): the
    naive interval of scenario A and ``method``'s interval (the posterior's TEE interval by
    default) in scenarios B-D (``table``: coverage per design with ``scenario`` and ``n_items``,
    :meth:`bayes_tee.studies.coverage.CoverageStudy.staircase_table`).
    """
    table = table[np.isclose(table["level"], level) & (table["target"] == target)]
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for k, (name, g) in enumerate(table.groupby("scenario", sort=True)):
        m = "naive" if name.startswith("A") else method
        g = g[g["method"] == m].sort_values("n_items")
        ax.errorbar(
            g["n_items"],
            g["coverage"] * 100,
            yerr=1.96 * g["mc_se"] * 100,
            marker="o",
            ms=4,
            capsize=2,
            color=f"C{k}",
            label=f"{name} ({m})",
        )
    ax.axhline(level * 100, color="black", ls="--", lw=0.8, label=f"nominal {level:.0%}")
    ax.set_xscale("log")
    ax.set_ylim(0, 102)
    ax.set_xlabel("items N")
    ax.set_ylabel(f"coverage of {target} (%)")
    ax.set_title("Coverage staircase: each modelled facet restores one step", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def plot_sbc(ranks: pd.DataFrame, bins: int = 10) -> Figure:
    """Rank histograms of a simulation-based calibration: one row per likelihood (``method``
    column, if any), one panel per parameter, with the band that 99% of the bins of uniform
    ranks fall in (grey). ``ranks`` from :class:`bayes_tee.studies.sbc.SBCRun` (``rank`` out of
    ``n_ranked``).
    """
    from scipy import stats  # loaded with the figure only

    ranks = ranks if "method" in ranks else ranks.assign(method="")
    methods = list(dict.fromkeys(ranks["method"]))
    params = list(dict.fromkeys(ranks["parameter"]))
    fig, axes = plt.subplots(
        len(methods), len(params), figsize=(1.6 * len(params) + 1, 1.3 * len(methods) + 0.6), squeeze=False
    )
    for i, m in enumerate(methods):
        for j, p in enumerate(params):
            ax = axes[i, j]
            part = ranks[(ranks["method"] == m) & (ranks["parameter"] == p)]
            ax.set_xticks([])
            ax.set_yticks([])
            if part.empty:
                ax.axis("off")
                continue
            n, top = len(part), int(part["n_ranked"].iloc[0]) + 1
            counts = np.bincount(np.minimum(part["rank"].to_numpy() * bins // top, bins - 1), minlength=bins)
            lo, hi = stats.binom.ppf([0.005, 0.995], n, 1.0 / bins)
            ax.axhspan(lo, hi, color="0.85", lw=0)
            ax.bar(np.arange(bins), counts, width=1.0, color="C0", edgecolor="white", lw=0.5)
            if i == 0:
                ax.set_title(p.replace("sigma_", "σ "), fontsize=8)
            if j == 0:
                ax.set_ylabel(m, fontsize=8, rotation=0, ha="right", va="center")
    fig.suptitle("SBC rank histograms (grey: 99% band of uniform ranks)", fontsize=9)
    fig.tight_layout()
    return fig
