"""``binomial``: the logit GLMM (``family="binomial"``). Calls aggregate exactly to successes
out of trials per cell; random effects per level (non-centred where the data say little), the
cell-level effect as the observation-level random effect; the logistic residual pi^2/3 is the
fixed ``replicate`` component (:func:`add_logistic_residual`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from ..._core.priors import PriorSpec
from ..design import Design
from .parts import choose_centering, coords, fixed_effect, random_effect, term_levels

#: Latent residual variance of the logistic link (Nakagawa & Schielzeth 2010), the GLMM's
#: call-level ``replicate`` component.
LOGISTIC_VARIANCE = float(np.pi**2 / 3)

#: Unit of the GLMM's prior scales (SDs on the logit scale): a half-t(3) with scale 1 puts
#: half its mass below an SD of 0.77, i.e. odds ratios within about 2x between typical levels.
LOGIT_UNIT = 1.0

#: GLMM terms with at most this many levels are always non-centred.
FEW_LEVELS = 12


def binomial_model(design: Design, priors: PriorSpec, *, rows: bool = False) -> pm.Model:
    """Logit GLMM on per-cell successes/trials (or per call with ``rows``, the benchmark
    baseline). Centring per term by :func:`choose_centering` on the 0/1 data: its rule (a
    level's variance against the noise of its mean) is the same on the logit scale to first
    order, both sides scaling by p(1-p). Items seen in hundreds of calls are centred; sparse
    interactions and the cell-level effect are not.
    """
    cells = design.cells
    n = cells["n"].to_numpy()
    data = binomial_data(design)
    level_coords = coords(design)
    random = [t for t in design.terms if t.kind == "random"]
    centering = binomial_centering(design)
    with pm.Model(coords=level_coords) as model:
        sig = {t.label: priors.for_component(t.label).build(t.var_name, LOGIT_UNIT) for t in random}
        mu = pm.Normal(
            "mu", mu=pm.Data("logit_rate", data["logit_rate"]), sigma=priors.intercept_scale * LOGIT_UNIT
        )
        # Hierarchical centring (Gelfand, Sahu & Carlin 1995): when the item effects are
        # centred they are centred on mu (and their category's effect), not on zero; centred
        # effects around zero next to a free intercept trade off with it and mix slowly.
        nested = {"item"} | ({"category"} if design.categories else set())
        hier = centering.get("item", False) and not rows
        item_mean = mu
        if hier and "category" in nested:
            dim = "category"
            if centering.get("category", False):
                kappa = pm.Normal("re_category", mu, sig["category"], dims=dim)
            else:
                kappa = mu + pm.Normal("z_category", 0.0, 1.0, dims=dim) * sig["category"]
            item_mean = kappa[design.item_category]
        if hier:
            eta = pm.Normal("re_item", item_mean, sig["item"], dims="item")[cells["item"].to_numpy()]
        else:
            eta = mu
        for t in design.terms:
            if t.kind == "fixed":
                eta = eta + fixed_effect(design, priors, t, LOGIT_UNIT)[cells[t.facets[0]].to_numpy()]
        for t in random:
            if hier and t.label in nested:
                continue
            idx, labels = term_levels(design, t)
            eta = (
                eta
                + random_effect(model, t, labels, sig[t.label], centering.get(t.label, False) and not rows)[
                    idx
                ]
            )
        # the panel's mean success probability over the observed calls (probability scale)
        pm.Deterministic("p_panel", pt.sum(n * pm.math.invlogit(eta)) / n.sum())
        if rows:
            pm.Bernoulli("y", logit_p=eta[design.row_cell], observed=design.row_y.astype(np.int64))
        else:
            pm.Binomial("y", n=n, logit_p=eta, observed=pm.Data("successes", data["successes"]))
    return model


def binomial_centering(design: Design) -> dict[str, bool]:
    """The GLMM's per-term centring: :func:`choose_centering` with a stricter bar (the level's
    variance three times the noise of its mean: binary calls near 0 or 1 carry less
    information than the linear approximation credits), and never for few-level terms.
    """
    centering = choose_centering(design, ratio=3.0)
    for t in design.terms:  # few levels: the SD is weakly identified whatever the data per level
        if t.kind == "random" and len(term_levels(design, t)[1]) <= FEW_LEVELS:
            centering[t.label] = False
    return {k: bool(v) for k, v in centering.items()}


def binomial_data(design: Design) -> dict[str, np.ndarray]:
    """The score-dependent inputs of the GLMM (successes per cell, the prior's centre), by
    data-container name, for refits without recompiling.
    """
    n = design.cells["n"].to_numpy()
    p_bar = float(np.clip(design.y_mean, 0.01, 0.99))
    return {
        "successes": np.round(design.cells["mean"].to_numpy() * n).astype(np.int64),
        "logit_rate": np.asarray(np.log(p_bar / (1 - p_bar)), float),
    }


def add_logistic_residual(posterior: xr.Dataset) -> xr.Dataset:
    """The GLMM's call-level ``sigma_replicate``: the logistic residual, a constant "draw"."""
    return posterior.assign(sigma_replicate=xr.full_like(posterior["mu"], np.sqrt(LOGISTIC_VARIANCE)))
