"""What every figure shares: a Figure for an Axes, interval bars, the diagnostics footer."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def figure(ax, size: tuple[float, float]):
    """A new Figure and Axes of ``size``, or the given Axes and its Figure."""
    if ax is None:
        return plt.subplots(figsize=size)
    return ax.figure, ax


def interval_bars(ax, table, prefix: str, scale: float = 1.0, color="#4C72B0") -> np.ndarray:
    """Horizontal bars at ``<prefix>median`` with ``<prefix>low``-``<prefix>high`` error bars."""
    y = np.arange(len(table))
    med, lo, hi = (table[f"{prefix}{k}"].to_numpy() * scale for k in ("median", "low", "high"))
    ax.barh(y, med, color=color, alpha=0.85, height=0.6)
    ax.errorbar(med, y, xerr=[med - lo, hi - med], fmt="none", ecolor="black", capsize=3, lw=1)
    return hi


def warn_footer(fig, msg: str | None) -> None:
    """The diagnostics warning, in red under the axes (figures never hide a failed fit)."""
    if msg:
        fig.text(0.01, 0.005, "WARNING: " + msg, color="red", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.05 if msg else 0, 1, 1))
