"""Figure of paired noise (Wang 2025 Fig. 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ._base import figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_paired_noise(
    pairs: pd.DataFrame,
    theory: tuple[np.ndarray, np.ndarray],
    *,
    n_questions: int,
    k_range: tuple[float, float],
    within: float | None = 0.2,
    ax=None,
    show_unpaired: bool = False,
) -> Figure:
    """Wang (2025) Fig. 1: the paired SEs of every close pair against the accuracy of the better
    model, with the Beta-theory curve ``sqrt(p (1 - p) / N)`` for the total.

    Total (dots), data (triangles) and prediction (crosses) SEs, one point per pair (``pairs``
    from :meth:`bayes_tee.noise.exact.PairedNoise.pairs`); ``theory`` is the curve as
    ``(accuracy, SE)``; the unpaired SE for contrast when ``show_unpaired``.
    """
    fig, ax = figure(ax, (6.4, 4.2))
    n = n_questions
    x = pairs["acc_a"].to_numpy()
    ax.scatter(x, pairs["SE_total"] * 100, s=12, color="C0", label="total (paired)", alpha=0.8)
    ax.scatter(x, pairs["SE_data"] * 100, s=12, marker="^", color="C1", label="data", alpha=0.6)
    ax.scatter(x, pairs["SE_pred"] * 100, s=14, marker="x", color="C2", label="prediction", alpha=0.6)
    if show_unpaired:
        ax.scatter(x, pairs["SE_unpaired"] * 100, s=10, marker=".", color="0.6", label="total (unpaired)")
    ax.plot(theory[0], np.asarray(theory[1]) * 100, color="black", lw=1.2, label="Beta theory sqrt(p(1-p)/N)")
    ax.set_xlabel("accuracy of the better model of the pair")
    ax.set_ylabel("standard error of A - B (percentage points)")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    sub = f"{len(pairs)} pairs" + (f" within {within:.0%} accuracy" if within is not None else "")
    ax.set_title(f"Paired noise, N={n} questions, K={k_range[0]:.0f}-{k_range[1]:.0f} ({sub})", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="lower center", ncol=2)
    fig.tight_layout()
    return fig
