"""Building blocks every Gaussian and binomial likelihood shares, on the PyMC side: the SD
priors, the intercept and fixed level effects, random-effect vectors (centred or not, per
:func:`~.levels.choose_centering`) and the within-cell replicate potential. Level indices,
centring and coordinates are in :mod:`.levels`.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from .._core.priors import PriorSpec
from ..design.covariates import covariate_data
from ..design.design import Design
from ..design.terms import Term
from .covariates import covariate_part, within_ss_shift


def sd_priors(design: Design, priors: PriorSpec, y_sd=None) -> dict[str, pt.TensorVariable]:
    """The prior SD variable of every random and residual term, by label, scaled by ``y_sd``."""
    y_sd = design.y_sd if y_sd is None else y_sd
    return {
        t.label: priors.for_component(t.label).build(t.var_name, y_sd)
        for t in design.terms
        if t.kind != "fixed"
    }


def fixed_effect(design: Design, priors: PriorSpec, term: Term, y_sd=None) -> pt.TensorVariable:
    """Zero-sum level effects of a fixed facet, scaled by ``y_sd``."""
    y_sd = design.y_sd if y_sd is None else y_sd
    scale = priors.fixed_scale_of(term.label, design.system)
    return pm.ZeroSumNormal(term.var_name, sigma=scale * y_sd, dims=term.facets[0])


def intercept(design: Design, priors: PriorSpec, y_mean=None, y_sd=None) -> pt.TensorVariable:
    """The grand mean ``mu``, centred on the outcome mean with a scale of ``y_sd``."""
    y_mean = design.y_mean if y_mean is None else y_mean
    y_sd = design.y_sd if y_sd is None else y_sd
    return pm.Normal("mu", mu=y_mean, sigma=priors.intercept_scale * y_sd)


def fixed_predictor(design: Design, priors: PriorSpec) -> tuple[pt.TensorVariable, pt.TensorVariable]:
    """Grand mean plus the fixed level effects and the covariates' part at every observed cell,
    and how the covariates move the within-cell sum of squares (:mod:`.covariates`; zero
    without covariates that vary within cells).
    """
    pred = intercept(design, priors)
    for t in design.terms:
        if t.kind == "fixed":
            pred = pred + fixed_effect(design, priors, t)[design.cells[t.facets[0]].to_numpy()]
    if design.covariates is None:
        return pred, pt.as_tensor(0.0)
    part, slopes = covariate_part(design, priors, design.y_sd)
    return pred + part, within_ss_shift(design, slopes)


def residual_sd(design: Design, sig: dict) -> pt.TensorVariable | None:
    """The SD of the within-cell (replicate) residual, ``None`` when cells do not repeat."""
    return next((sig[t.label] for t in design.terms if t.kind == "residual"), None)


def cell_data(design: Design) -> dict[str, np.ndarray]:
    """The score-dependent data of the cell-mean likelihoods (``marginal``, ``cells``): each
    cell's mean and the within-cell sum of squares, by data-container name, so a compiled model
    of the same layout is refitted to new scores without recompiling.
    """
    return {
        "cell_mean": design.cells["mean"].to_numpy(dtype=float),
        "within_ss": np.asarray(float(design.cells["ss"].sum())),
        **covariate_data(design.covariates, design.cells),
    }


def replicate_potential(
    design: Design, rep: pt.TensorVariable, shift: pt.TensorVariable | float = 0.0
) -> None:
    """Within-cell sums of squares: ``-(n-1) log sigma_rho - SS / (2 sigma_rho^2)`` summed over
    cells; ``SS`` is the data container ``within_ss`` (:func:`cell_data`) plus ``shift``, what
    covariates that vary within cells take out of it (:func:`fixed_predictor`).
    """
    dof = float((design.cells["n"] - 1).sum())
    ss = pm.Data("within_ss", np.asarray(float(design.cells["ss"].sum())))
    pm.Potential("replicate_loglik", -dof * pt.log(rep) - (ss + shift) / (2.0 * rep**2))


def random_effect(model: pm.Model, t: Term, labels: list[str], sd, centred: bool) -> pt.TensorVariable:
    """One level effect per label of term ``t``: centred ``Normal(0, sd)`` or non-centred ``z * sd``."""
    dim = t.facets[0] if len(t.facets) == 1 else t.key
    if dim not in model.coords:
        model.add_coord(dim, labels)
    if centred:
        return pm.Normal(f"re_{t.key}", 0.0, sd, dims=dim)
    return pm.Normal(f"z_{t.key}", 0.0, 1.0, dims=dim) * sd
