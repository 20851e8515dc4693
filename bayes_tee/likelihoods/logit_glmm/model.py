"""``binomial``: the logit GLMM (``family="binomial"``). Calls aggregate exactly to successes
out of trials per cell; the cell-level effect is the observation-level random effect (sampled,
non-centred; or integrated out by adaptive Gauss-Hermite quadrature, :mod:`.quadrature`); the
logistic residual pi^2/3 is the fixed ``replicate`` component (:func:`~.glmm_layout.add_logistic_residual`).

Near separation (most items SAFE in every call) the geometry is what makes or breaks the fit;
:func:`~.glmm_layout.glmm_terms` lays out the random effects for it: each level's coordinate adapted
to its own data (partial non-centring), items drawn around their category and the intercept,
few-level terms swept into the intercept. Priors are on the logit scale: SDs in units of
:data:`LOGIT_UNIT`, the intercept in units of :data:`INTERCEPT_UNIT`. The PyMC model here is the
reference; fits sample the same model as a numba density (:mod:`.binomial_density`), which the tests
hold equal to it.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._core.density import zerosum_basis
from ..._core.priors import PriorSpec
from ...design.design import Design
from ..covariates import covariate_part
from ..levels import coords
from ..parts import fixed_effect
from .layout import (
    INTERCEPT_UNIT,
    LOGIT_UNIT,
    NODES,
    binomial_data,
    fixed_through_terms,
    glmm_terms,
    swept_dim,
    swept_labels,
    swept_name,
)
from .quadrature import cell_marginal


def latent_predictor(
    design: Design, priors: PriorSpec, terms: list, model: pm.Model, mu_centre: object
) -> tuple[pt.TensorVariable, dict]:
    """The GLMM's latent linear predictor per cell, built inside ``model``: SD priors, fixed
    effects, the random-effect vectors ``terms`` (:func:`~.glmm_layout.glmm_terms`: swept,
    centred per level) and the intercept drawn around ``mu_centre``; adds ``mu``. Returns the
    predictor and the SDs by term label. Every GLMM family's reference model starts here.
    """
    cells = design.cells
    if priors.reference is not None:  # a prior that does not look at the data
        mu_centre = priors.reference[0]
    random = [t for t in design.terms if t.kind == "random"]
    sig = {t.label: priors.for_component(t.label).build(t.var_name, LOGIT_UNIT) for t in random}
    fixed = [t for t in design.terms if t.kind == "fixed"]
    fixed_eff = [fixed_effect(design, priors, t, LOGIT_UNIT) for t in fixed]
    # the swept terms' coordinates and deviations, and the grand mean they shift (glmm_terms)
    w, dev = {}, {}
    for j, g in enumerate(terms):
        if g.swept:
            dim = swept_dim(g)
            model.add_coord(dim, swept_labels(g))
            basis = zerosum_basis(len(g.labels))
            rest = sig[g.term.label] if g.centred[0] else 1.0
            scale = pt.concatenate([pt.ones(1), pt.full(len(g.labels) - 1, rest)])
            centre = 0.0
            if g.crossed:  # around the zero-sum part of its main effects' sum
                main = sum((fixed_eff[p] if kind == "fixed" else dev[p])[i] for kind, p, i in g.crossed)
                centre = pt.concatenate([pt.zeros(1), pt.dot(basis.T, main)])
            w[g.name] = pm.Normal(swept_name(g), centre, scale, dims=dim)
            if g.centred[0]:
                dev[j] = pt.dot(basis, w[g.name][1:])
                continue
            # the data-adapted coordinates (glmm_layout.sweep_adaptation): v = a(s) + b(s) z,
            # the prior of v and the Jacobian in place of the N(0, 1) of z
            s, z = sig[g.term.label], w[g.name][1:]
            q = 1.0 + s**2 * g.info
            v_hat = np.zeros(len(g.labels) - 1) if g.v_hat is None else g.v_hat  # a crossed main effect's
            u = (s * g.info / q) * v_hat + z / pt.sqrt(q)  # v / s, without dividing by s
            dev[j] = pt.dot(basis, s * u)
            adapted = 0.5 * pt.sum(z**2) - 0.5 * pt.sum(u**2) - 0.5 * (len(g.labels) - 1) * pt.log(q)
            pm.Potential(f"{swept_name(g)}_adapted", adapted)
    shift = sum((sig[g.term.label] * w[g.name][0] / np.sqrt(len(g.labels)) for g in terms if g.swept), 0.0)
    intercept = pm.Normal(
        "intercept",
        mu=mu_centre + shift,
        sigma=priors.intercept_scale * INTERCEPT_UNIT,
    )
    pm.Deterministic("mu", intercept - shift)
    effects: list[pt.TensorVariable] = []
    mu_in_eta = True
    for j, g in enumerate(terms):
        mean = 0.0 if g.parent == -1 else (intercept if g.parent == -2 else effects[g.parent][g.parent_index])
        mu_in_eta = mu_in_eta and g.parent != -2
        s = sig[g.term.label]
        if g.swept:
            effects.append(mean + dev[j])
            continue
        if g.dim not in model.coords:
            model.add_coord(g.dim, g.labels)
        raw = pm.Normal(g.name, 0.0, 1.0, dims=g.dim)
        u = raw
        if g.level_info is not None:  # the levels' data-adapted coordinates (level_adaptation)
            q = 1.0 + s**2 * g.level_info
            u = (s * g.level_info / q) * (g.v_hat - mean) + raw / pt.sqrt(q)
            adapted = pt.sum(0.5 * raw**2 - 0.5 * u**2 - 0.5 * pt.log(q))  # zero where info is 0
            pm.Potential(f"{g.name}_adapted", adapted)
        effects.append(mean + s * u)
    eta = intercept if mu_in_eta else pt.zeros(len(cells))
    through = fixed_through_terms(terms)
    for f, t in enumerate(fixed):
        if f not in through:
            eta = eta + fixed_eff[f][cells[t.facets[0]].to_numpy()]
    for g, e in zip(terms, effects):
        if g.in_eta:
            eta = eta + e[g.cell_level]
    if design.covariates is not None:  # constant within each cell (design.covariates)
        eta = eta + covariate_part(design, priors, LOGIT_UNIT)[0]
    return eta, sig


def binomial_model(
    design: Design,
    priors: PriorSpec,
    centering: dict | None = None,
    *,
    rows: bool = False,
    quadrature: int | None = None,
) -> pm.Model:
    """Logit GLMM on per-cell successes out of trials, random effects as :func:`glmm_terms`
    lays them out. With ``quadrature=K`` the cell (observation-level) effect is integrated out
    by adaptive Gauss-Hermite quadrature with K nodes (:mod:`.quadrature`) instead of sampled.
    With ``rows``: one Bernoulli term per call (the benchmark baseline).

    Examples
    --------
    >>> m = binomial_model(d, bt.priors.get_prior())  # doctest: +SKIP
    >>> "sigma_cell" in m.named_vars and "u_cell" not in m.named_vars  # doctest: +SKIP
    True
    """
    cells = design.cells
    n = cells["n"].to_numpy()
    data = binomial_data(design)
    random = [t for t in design.terms if t.kind == "random"]
    integrate = quadrature is not None and not rows and any(t.label == "cell" for t in random)
    with pm.Model(coords=coords(design)) as model:
        terms = glmm_terms(design, sample_cell=not integrate)
        eta, sig = latent_predictor(design, priors, terms, model, pm.Data("logit_rate", data["logit_rate"]))
        successes = pm.Data("successes", data["successes"])
        if rows:
            pm.Deterministic("p_panel", pt.sum(n * pm.math.invlogit(eta)) / n.sum())
            pm.Bernoulli("y", logit_p=eta[design.row_cell], observed=design.row_y.astype(np.int64))
        elif integrate:
            loglik, p_cell = cell_marginal(eta, successes, n, sig["cell"], quadrature)
            pm.Potential("y_cells", pt.sum(loglik))
            # the panel's mean success probability over the observed calls, each cell's given
            # its data (the quadrature's weights are its cell effect's posterior)
            pm.Deterministic("p_panel", pt.sum(n * p_cell) / n.sum())
        else:
            pm.Deterministic("p_panel", pt.sum(n * pm.math.invlogit(eta)) / n.sum())
            pm.Binomial("y", n=n, logit_p=eta, observed=successes)
    return model


def binomial_quadrature_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """The ``binomial_quadrature`` likelihood: :func:`binomial_model` with the cell effect integrated
    out by adaptive Gauss-Hermite quadrature on :data:`~.layout.NODES` nodes.
    """
    return binomial_model(design, priors, centering, quadrature=NODES)
