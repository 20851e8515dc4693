"""The ordinal GLMM's data and cutpoint layout, in NumPy: per-cell category counts, which
threshold set each cell uses, the cutpoints' prior and the binary view of the data that lays
out its random effects (:func:`~.glmm_layout.glmm_terms` decides centring from 0/1 calls).

Cutpoints are centred (they sum to zero per set, so the intercept keeps the location) and
spaced by gaps ``exp(g)``, ``K - 2`` free coordinates per set; each ``g ~ N(gap_mu, GAP_SD)``
with ``gap_mu`` the log of the spacing that gives every category the same probability at the
latent mean.

>>> round(float(gap_centre(5, "logit")), 3)
-0.079
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from ...design.design import Design
from ..logit_glmm.layout import END_COLUMNS

#: Prior SD of a cutpoint gap's log: a gap 4.5 times the even spacing is one SD away.
GAP_SD = 1.5
#: Prior SD of a judge's log latent spread (``spread="judge"``): a judge spreading its latent
#: values 1.65 times the panel's geometric mean is one SD away.
SPREAD_SD = 0.5
#: Cumulative proportions are clipped to this distance from 0 and 1 for the grand mean's centre.
CLIP = 0.01


def quantile(p: np.ndarray | float, link: str) -> np.ndarray:
    """The link's quantile function (logit or probit)."""
    p = np.asarray(p, float)
    return special.logit(p) if link == "logit" else special.ndtri(p)


def gap_centre(K: int, link: str) -> float:
    """The log of the even spacing: the gaps that give every category probability ``1/K`` at
    the latent mean (thresholds at the link's ``k/K`` quantiles).
    """
    span = 2.0 * float(quantile((K - 1) / K, link))
    return float(np.log(span / (K - 2)))


def ordinal_data(design: Design, link: str) -> dict:
    """The ordinal likelihood's data: ``counts`` (cells x categories), ``cell_set`` (each
    cell's threshold set), ``n_sets``, ``set_labels``, the grand mean's prior centre ``mu0``
    (where the centred cutpoints put the observed cumulative proportions) and the gaps' prior.
    """
    counts = design.cells[design.count_columns].to_numpy().astype(np.float64)
    K = counts.shape[1]
    if design.thresholds == "judge":
        cell_set = design.cells["judge"].to_numpy().astype(np.int64)
        labels = list(design.levels["judge"])
    else:
        cell_set = np.zeros(len(counts), dtype=np.int64)
        labels = ["all"]
    spread = design.spread == "judge"
    cell_judge = (
        design.cells["judge"].to_numpy().astype(np.int64) if spread else np.zeros(len(counts), np.int64)
    )
    cum = np.cumsum(counts.sum(0))[:-1] / counts.sum()
    mu0 = -float(np.mean(quantile(np.clip(cum, CLIP, 1 - CLIP), link)))
    return {
        "counts": np.ascontiguousarray(counts),
        "cell_set": cell_set,
        "n_sets": len(labels),
        "set_labels": labels,
        "K": K,
        "mu0": mu0,
        "gap_mu": gap_centre(K, link),
        "gap_sd": GAP_SD,
        "spread": spread,
        "cell_judge": cell_judge,
        "n_judges": len(design.levels["judge"]) if spread else 1,
        "spread_sd": SPREAD_SD,
    }


def binary_view(design: Design) -> Design:
    """The design with each call scored 1 above the category that holds the median call, 0 at
    or below it: what :func:`~.glmm_layout.glmm_terms` reads to decide which levels the data pin.
    Each cell also counts its calls in the lowest and the highest category
    (:data:`~.glmm_layout.END_COLUMNS`): a level is bounded on one side only when all of its
    calls sit in one of those, not when they sit on one side of the median.
    """
    counts = design.cells[design.count_columns].to_numpy().astype(np.float64)
    total = counts.sum(0)
    split = min(int(np.searchsorted(np.cumsum(total) / total.sum(), 0.5)), counts.shape[1] - 2)
    n = counts.sum(1)
    k = counts[:, split + 1 :].sum(1)
    ends = dict(zip(END_COLUMNS, (counts[:, 0], counts[:, -1]), strict=True))
    cells = design.cells.assign(mean=k / n, ss=k - k**2 / n, **ends)
    p = float(k.sum() / n.sum())
    return dataclasses.replace(design, cells=cells, y_mean=p, y_sd=float(np.sqrt(p * (1 - p))))
