"""Figure of judge allocation strategies (Zhu et al. 2026 Fig. 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ._base import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_allocation(table: pd.DataFrame, *, n_items: int, pool: int, level: float, ax=None) -> Figure:
    """Var of the benchmark mean against the budget per item, per allocation strategy
    (posterior median, band = the comparison's credible ``level``), as Zhu et al. (2026) Fig. 2
    (``table`` from :meth:`bayes_tee.allocation.AllocationComparison.table`).
    """
    fig, ax = figure(ax, (6.2, 4.0))
    for k, (name, sub) in enumerate(table.groupby("strategy", sort=False)):
        sub = sub.sort_values("budget_per_item")
        ax.plot(sub["budget_per_item"], sub["variance"], "o-", color=f"C{k}", label=name, ms=4)
        ax.fill_between(
            sub["budget_per_item"], sub["variance_low"], sub["variance_high"], color=f"C{k}", alpha=0.15
        )
    ax.set_xlabel("judge calls per item")
    ax.set_ylabel("Var(benchmark mean)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(
        f"Judge allocation: {n_items} items, pool of {pool} judges ({level:.0%} intervals)", fontsize=10
    )
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
