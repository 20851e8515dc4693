"""Matplotlib figures. Every function returns the Figure and never calls ``show()``.

>>> fig = plot_shares(post)          # doctest: +SKIP
>>> fig.savefig("shares.png")         # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import matplotlib.pyplot as plt
import numpy as np

from . import diagnostics as diag

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .posterior import Posterior


def plot_shares(
    post: "Posterior",
    kind: Literal["vartheta", "observation"] = "vartheta",
    ax=None,
    **shares_kwargs,
) -> "Figure":
    """Horizontal bars of each component's share: posterior median with its 90% interval.

    Parameters
    ----------
    post : Posterior
    kind : {"vartheta", "observation"}
        Shares of Var(theta_hat) at the design (``shares_kwargs`` go to
        :meth:`Posterior.shares`) or of the per-call variance (:meth:`Posterior.components`).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import warnings

    from .exceptions import DiagnosticWarning

    with warnings.catch_warnings():  # the figure shows the warning itself
        warnings.simplefilter("ignore", DiagnosticWarning)
        table = post.shares(**shares_kwargs) if kind == "vartheta" else post.components()
    table = table.sort_values("share_median")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 0.42 * len(table) + 1.6))
    else:
        fig = ax.figure
    y = np.arange(len(table))
    med = table["share_median"].to_numpy() * 100
    lo = table["share_low"].to_numpy() * 100
    hi = table["share_high"].to_numpy() * 100
    ax.barh(y, med, color="#4C72B0", alpha=0.85, height=0.6)
    ax.errorbar(med, y, xerr=[med - lo, hi - med], fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, table["component"])
    ax.set_xlabel("share (%): posterior median, 90% interval")
    ax.set_xlim(0, min(100.0, float(hi.max()) * 1.1 + 1))
    counts = post.design_counts(
        **{k: v for k, v in shares_kwargs.items() if k.startswith("n_")}
    )
    if kind == "vartheta":
        dims = " ".join(
            f"{s}{counts[f]:.3g}"
            for s, f in (("N", "item"), ("V", "prompt"), ("H", "temperature"), ("M", "judge"), ("R", "replicate"))
            if counts[f] > 1 or f in post.design.facets
        )
        title = f"Shares of Var(θ̂) at {dims}"
    else:
        title = "Shares of the per-call variance"
    ax.set_title(title + f"  [{post.method} model, outcome scale]", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    msg = diag.message(post.diagnostics())
    if msg:
        fig.text(0.01, 0.005, "WARNING: " + msg, color="red", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.05 if msg else 0, 1, 1))
    return fig
