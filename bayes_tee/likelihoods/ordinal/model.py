"""``ordinal``: the cumulative-link GLMM (``family="ordinal"`` or ``"ordinal_probit"``).

Calls aggregate exactly to counts per category per cell; given the cell's latent linear
predictor ``eta`` (the logit GLMM's crossed effects, :func:`~.binomial.latent_predictor`, the
cell effect sampled when cells repeat), a category's probability is ``F(c_k - eta) -
F(c_{k-1} - eta)`` at its threshold set's centred cutpoints (:mod:`.ordinal_layout`). The
residual's variance is the link's constant (the fixed ``replicate`` component). The PyMC
model here is the reference; fits sample the same model as a numba density
(:mod:`.ordinal_density`), which the tests hold equal to it.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._core.priors import PriorSpec
from ...design.design import Design
from ...families import get_family
from ..levels import coords
from ..logit_glmm.layout import glmm_terms
from ..logit_glmm.model import latent_predictor
from .density import CUT_DIMS, GAP_DIMS
from .layout import binary_view, ordinal_data


def ordinal_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """Cumulative-link GLMM on per-cell category counts.

    Examples
    --------
    >>> m = ordinal_model(d, bt.priors.get_prior())  # doctest: +SKIP
    >>> m["cutpoints"].shape.eval()  # doctest: +SKIP
    array([1, 4])
    """
    link = get_family(design.family).link
    data = ordinal_data(design, link)
    K, S = data["K"], data["n_sets"]
    n = design.cells["n"].to_numpy().astype(float)
    values = np.asarray(design.outcome_levels, float)
    with pm.Model(coords=coords(design)) as model:
        model.add_coord("threshold_set", data["set_labels"])
        model.add_coord("gap", [f"{k + 1}-{k + 2}" for k in range(K - 2)])
        model.add_coord("cutpoint", [f"{k}|{k + 1}" for k in range(1, K)])
        eta, _ = latent_predictor(design, priors, glmm_terms(binary_view(design)), model, data["mu0"])
        gaps = pm.Normal("cutpoint_gaps", data["gap_mu"], data["gap_sd"], dims=GAP_DIMS)
        acc = pt.concatenate([pt.zeros((S, 1)), pt.cumsum(pt.exp(gaps), axis=1)], axis=1)
        cut = pm.Deterministic("cutpoints", acc - acc.mean(axis=1, keepdims=True), dims=CUT_DIMS)
        z = cut[data["cell_set"]] - eta[:, None]
        if data["spread"]:  # each judge's latent spread: (c - eta) / s_judge
            log_s = pm.ZeroSumNormal("judge_log_spread", sigma=data["spread_sd"], dims="judge")
            z = z * pt.exp(-log_s)[data["cell_judge"]][:, None]
        # the CDF and the survival function, and each difference from the side where it does
        # not cancel (as the kernel computes it)
        F, S = (
            (pm.math.invlogit(z), pm.math.invlogit(-z))
            if link == "logit"
            else (0.5 * pt.erfc(-z / np.sqrt(2.0)), 0.5 * pt.erfc(z / np.sqrt(2.0)))
        )
        middle = pt.where(F[:, 1:] < 0.5, F[:, 1:] - F[:, :-1], S[:, :-1] - S[:, 1:])
        P = pt.concatenate([F[:, :1], middle, S[:, -1:]], axis=1)
        counts = pm.Data("counts", data["counts"])
        pm.Potential("y_cells", pt.sum(counts * pt.log(pt.maximum(P, 1e-300))))
        pm.Deterministic("score_panel", pt.sum(n * pt.dot(P, values)) / n.sum())
    return model
