"""Figure of reference-anchored Elo (RAEE) ratings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ._base import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_raee(table: pd.DataFrame, ax=None) -> Figure:
    """Reference-anchored Elo gaps: one row per system, interval bars, the reference at 0
    (``table`` from :meth:`bayes_tee.pairwise.raee.RAEE.table`).
    """
    tab = table.iloc[::-1].reset_index(drop=True)
    systems = list(dict.fromkeys(tab["system"]))
    fig, ax = figure(ax, (7.5, 0.45 * len(systems) + 1.6))
    judges = list(dict.fromkeys(tab["judge"])) if "judge" in tab else [None]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.6 / max(len(judges), 1)
    for j, name in enumerate(judges):
        part = tab if name is None else tab[tab["judge"] == name]
        y = np.array([systems.index(s) for s in part["system"]]) + (j - (len(judges) - 1) / 2) * step
        elo, lo, hi = (part[c].to_numpy() for c in ("elo", "elo_low", "elo_high"))
        ax.errorbar(
            elo,
            y,
            xerr=[elo - lo, hi - elo],
            fmt="o",
            ms=4,
            capsize=2,
            lw=1,
            color=colors[j % len(colors)],
            label=None if name is None else str(name),
        )
    ax.axvline(0.0, color="grey", lw=1, ls="--")
    ax.set_yticks(np.arange(len(systems)), systems)
    ref = tab.attrs.get("reference")
    ax.set_xlabel(f"Elo gap vs {ref}" if ref else "Elo gap vs the reference")
    mode = "hierarchical Beta-Binomial" if tab.attrs.get("hierarchical") else "Jeffreys-Beta"
    ax.set_title(
        f"Reference-anchored Elo, {mode} {100 * tab.attrs.get('level', 0.95):.0f}% intervals", fontsize=10
    )
    if judges != [None]:
        ax.legend(title="judge", fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
