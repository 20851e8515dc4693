"""Figure of judge calibration: judge quality and corrected accuracy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ._base import warn_footer

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_calibration(
    quality: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    estimates: pd.DataFrame,
    *,
    systems: list[str],
    judges: list[str],
    mode: str,
    level: float = 0.9,
    axes=None,
) -> Figure:
    """Judge calibration at a glance (see :meth:`bayes_tee.JudgeCalibration.plot`):
    ``quality`` maps ``se``, ``sp``, ``youden`` to ``(low, median, high)`` arrays (judge x
    system); ``estimates`` is :meth:`~bayes_tee.JudgeCalibration.estimates`.

    Left: the fitted Se, Sp and Youden J per judge x system (posterior median and ``level``
    interval; the dashed line is J = 0.2, below which corrections are unstable). Right: each
    system's accuracy by estimator, naive and the closed-form corrections per judge beside the
    Bayesian posterior, so a correction that moves the answer (or widens it) is visible.
    """
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 0.9 + 0.5 * max(len(systems) * len(judges), 4)))
    fig = axes[0].figure
    ax = axes[0]
    labels = []
    for name, color, dy in (("se", "C0", -0.2), ("sp", "C1", 0.0), ("youden", "C3", 0.2)):
        lo, med, hi = quality[name]
        for ji, j in enumerate(judges):
            for si, s in enumerate(systems):
                y = ji * len(systems) + si
                ax.errorbar(
                    med[ji, si],
                    y + dy,
                    xerr=[[med[ji, si] - lo[ji, si]], [hi[ji, si] - med[ji, si]]],
                    fmt="o",
                    color=color,
                    ms=4,
                    capsize=2,
                    label={"se": "Se", "sp": "Sp", "youden": "J"}[name] if (ji, si) == (0, 0) else None,
                )
                if name == "se":
                    labels.append(f"{s}\n({j})")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.axvline(0.2, color="0.5", ls="--", lw=0.8)
    ax.axvline(0, color="0.2", lw=0.6)
    ax.set_xlim(-0.5, 1.02)
    ax.invert_yaxis()
    ax.set_xlabel(f"posterior median, {level:.0%} interval")
    ax.set_title(f"Judge quality ({mode} calibration)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.14), ncol=3)

    ax = axes[1]
    est = estimates
    kinds = list(dict.fromkeys(zip(est["estimator"], est["judge"])))
    width = 0.8 / len(kinds)
    for i, (name, judge) in enumerate(kinds):
        sub = est[(est["estimator"] == name) & (est["judge"] == judge)].set_index("system").reindex(systems)
        y = np.arange(len(systems)) - 0.4 + (i + 0.5) * width
        color = "k" if name.startswith("bayes") else f"C{list(dict.fromkeys(est['estimator'])).index(name)}"
        marker = "o" if judge in (judges[0], "all") else "s"
        ax.errorbar(
            sub["estimate"],
            y,
            xerr=[sub["estimate"] - sub["low"], sub["high"] - sub["estimate"]],
            fmt=marker,
            color=color,
            ms=4,
            capsize=2,
            lw=2.0 if judge == "all" else 1.0,
            label=name if judge == "all" else f"{name} ({judge})",
        )
    ax.set_yticks(range(len(systems)), systems, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"accuracy (estimate and {level:.0%} interval)")
    ax.set_title("Naive and corrected accuracy", fontsize=10)
    ax.legend(fontsize=7, frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    warn_footer(fig, est.attrs.get("warning"))
    return fig
