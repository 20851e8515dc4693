"""Design + priors -> PyMC model: the likelihoods of the TEE model and their registry.

Every likelihood has the same variance parameters (``sigma_<term>``), grand mean ``mu`` and
zero-sum fixed level effects (``<facet>_effect``), so every summary works on any of them. They
differ in what is integrated out and so in cost and geometry:

===================  ========================================================================  ==========
name                 when                                                                      module
===================  ========================================================================  ==========
balanced             every cell present with equal replicates (exact strata likelihood)        balanced
augmented            nearly balanced: the balanced likelihood with latent missing values       augmented
marginal             any Gaussian design, every random effect integrated out exactly           marginal
cells                any Gaussian design, random effects sampled (when marginal is costly)     cells
rows                 one term per call: the textbook baseline, for benchmarks                  cells
binomial             the logit GLMM on successes out of trials per cell, cell effect sampled   binomial
binomial_quadrature  the GLMM with the cell effect integrated out by adaptive quadrature       quadrature
===================  ========================================================================  ==========

:data:`LIKELIHOODS` maps each name to what the rest of the package needs to know about it
(:class:`Likelihood`); a new likelihood is one module plus one entry. ``balanced`` and
``augmented`` also exist as a NumPy/numba density (:mod:`.strata_density`), which nutpie samples
without compiling anything per layout; the PyMC models stay the reference (the tests hold the
two equal) and serve PyMC's sampler, power-scaling and in-process refits.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge")
>>> m = build_model(d, bt.priors.get_prior(), method="balanced")
>>> sorted(m.named_vars)[:3]
['judge_effect', 'mu', 'sigma_cell']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pymc as pm
import xarray as xr

from .._core.density import Density
from .._core.priors import PriorSpec
from ..design.roles import Design
from .augment import MAX_LATENT_SHARE, augment_layout
from .augmented import augmented_model
from .balanced import balanced_data, balanced_model
from .binomial import (
    LOGISTIC_VARIANCE,
    add_logistic_residual,
    binomial_data,
    binomial_model,
    glmm_key,
)
from .binomial_density import binomial_density, binomial_quadrature_density
from .cells import cell_model
from .marginal import marginal_cost, marginal_layout, marginal_model
from .parts import choose_centering, term_levels
from .quadrature import NODES
from .strata_density import augmented_density, balanced_density

Method = Literal["balanced", "augmented", "marginal", "cells", "rows", "binomial", "binomial_quadrature"]

#: Above this many floating-point operations per log-density evaluation the marginal model is
#: slower than sampling the random effects (measured: ~1e6 flops run in ~0.3 ms here).
MAX_MARGINAL_FLOPS = 5e7


@dataclass(frozen=True)
class Likelihood:
    """What the package needs to know about one likelihood.

    Attributes
    ----------
    name : str
        The ``method=`` name.
    family : {"gaussian", "binomial", "any"}
        The outcome family it fits (``rows`` serves both).
    build : callable
        ``(design, priors, centering) -> pymc.Model``.
    data : callable or None
        ``design -> {container: array}``: the score-dependent data containers, so a compiled
        model of the same layout is refitted to new scores without recompiling; ``None`` when
        the model is rebuilt per fit.
    key : callable or None
        ``design -> object``: anything besides the layout that changes the compiled model
        (the GLMM's per-term centring).
    postprocess : callable or None
        ``posterior Dataset -> Dataset`` after sampling (the GLMM's fixed logistic residual).
    loglik : str
        The likelihood whose potentials give this fit's log likelihood per draw for
        power-scaling (``augmented`` keeps no latent values; ``marginal`` is its exact
        likelihood with the same parameters).
    density : callable or None
        ``(design, priors) -> Density``: the same model as a NumPy log density with its
        gradient (:mod:`bayes_tee._core.density`), which nutpie samples without compiling;
        ``None`` when the model is only a PyMC graph.
    """

    name: str
    family: str
    build: Callable[[Design, PriorSpec, dict | None], pm.Model]
    data: Callable[[Design], dict[str, np.ndarray]] | None = None
    key: Callable[[Design], object] | None = None
    postprocess: Callable[[xr.Dataset], xr.Dataset] | None = None
    loglik: str = ""
    density: Callable[[Design, PriorSpec], Density] | None = None


def _rows(design: Design, priors: PriorSpec, centering: dict | None) -> pm.Model:
    if design.row_cell is None:
        raise ValueError(
            "method='rows' (one likelihood term per call) needs the rows in memory: pass a pandas "
            "DataFrame, or use method='auto' (the per-cell likelihoods give the same posterior)."
        )
    if design.family == "binomial":
        return binomial_model(design, priors, rows=True)
    return cell_model(design, priors, centering or choose_centering(design), rows=True)


#: Every likelihood by ``method=`` name.
LIKELIHOODS: dict[str, Likelihood] = {
    lk.name: lk
    for lk in (
        Likelihood(
            "balanced",
            "gaussian",
            lambda d, p, c: balanced_model(d, p),
            data=balanced_data,
            loglik="balanced",
            density=balanced_density,
        ),
        Likelihood(
            "augmented",
            "gaussian",
            lambda d, p, c: augmented_model(d, p),
            loglik="marginal",
            density=augmented_density,
        ),
        Likelihood("marginal", "gaussian", lambda d, p, c: marginal_model(d, p), loglik="marginal"),
        Likelihood(
            "cells",
            "gaussian",
            lambda d, p, c: cell_model(d, p, c or choose_centering(d), rows=False),
            loglik="cells",
        ),
        Likelihood("rows", "any", _rows, loglik="rows"),
        Likelihood(
            "binomial",
            "binomial",
            lambda d, p, c: binomial_model(d, p),
            data=binomial_data,
            key=glmm_key,
            postprocess=add_logistic_residual,
            loglik="binomial",
            density=binomial_density,
        ),
        Likelihood(
            "binomial_quadrature",
            "binomial",
            lambda d, p, c: binomial_model(d, p, quadrature=NODES),
            data=binomial_data,
            key=glmm_key,
            postprocess=add_logistic_residual,
            loglik="binomial_quadrature",
            density=binomial_quadrature_density,
        ),
    )
}


def get_likelihood(method: str, design: Design) -> Likelihood:
    """The registry entry for ``method``, checked against the design's family.

    Raises
    ------
    ValueError
        An unknown name, or a likelihood of the other family.

    Examples
    --------
    >>> get_likelihood("balanced", d).density is not None
    True
    """
    if method not in LIKELIHOODS:
        raise ValueError(f"method must be one of {sorted(LIKELIHOODS)} or 'auto', got {method!r}.")
    lk = LIKELIHOODS[method]
    if design.family == "binomial" and lk.family == "gaussian":
        raise ValueError(
            f"family='binomial' fits the GLMM (method='auto', 'binomial' or 'binomial_quadrature', "
            f"or 'rows' for the per-call benchmark baseline), not method={method!r}."
        )
    if design.family != "binomial" and lk.family == "binomial":
        raise ValueError(f"method={method!r} needs a design validated with family='binomial'.")
    return lk


def choose_method(design: Design) -> str:
    """The fastest exact likelihood for a design: ``balanced``, ``augmented``, ``marginal`` or
    ``cells`` (``binomial`` for the GLMM).

    >>> import bayes_tee as bt
    >>> choose_method(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item"))
    'balanced'
    """
    if design.family == "binomial":
        return "binomial"
    if design.balanced:
        return "balanced"
    if augment_layout(design).latent_share <= MAX_LATENT_SHARE:
        return "augmented"
    return "marginal" if marginal_cost(design) <= MAX_MARGINAL_FLOPS else "cells"


def method_note(design: Design, method: str) -> str:
    """Which likelihood a fit used and why, in one sentence (the summary prints it).

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> method_note(d, "balanced").split(":")[0]
    'balanced'
    """
    auto = choose_method(design)
    if method != auto:
        return f"{method}: chosen by the caller (method='auto' would take {auto})."
    if method == "balanced":
        return (
            f"{method}: every cell of the full cross holds the same number of calls, so the exact strata "
            "likelihood applies."
        )
    missing = design.n_full_cells - design.n_cells
    layout = f"{missing} of {design.n_full_cells} cells empty" if missing else "unequal calls per cell"
    if method == "augmented":
        share = augment_layout(design).latent_share
        return (
            f"{method}: unbalanced ({layout}); {share:.0%} of the completed cells are short, few enough to "
            "complete them with latent values inside the exact balanced likelihood."
        )
    if method == "marginal":
        return (
            f"{method}: unbalanced ({layout}) beyond what latent completion handles; every random effect is "
            "integrated out exactly."
        )
    if method == "cells":
        return (
            f"{method}: unbalanced ({layout}), and integrating every effect out would cost "
            f"{marginal_cost(design):.2g} flops per evaluation: the many-level effects are sampled, "
            "the few-level ones integrated out."
        )
    return f"{method}: the logit GLMM on successes out of trials per cell."


def build_model(
    design: Design,
    priors: PriorSpec,
    *,
    method: Method = "balanced",
    centering: dict[str, bool] | None = None,
) -> pm.Model:
    """Build the PyMC model.

    Parameters
    ----------
    design : Design
        From :func:`bayes_tee.validate_design`.
    priors : PriorSpec
        From :func:`bayes_tee._core.priors.get_prior`.
    method : {"balanced", "augmented", "marginal", "cells", "rows", "binomial", "binomial_quadrature"}
        Likelihood form (see the module docstring); ``balanced`` needs a balanced design. A
        binomial design always gets the GLMM (``rows``: per call; ``binomial_quadrature``: the
        cell effect integrated out).
    centering : dict, optional
        Per random term, centred (``True``) or not; default :func:`choose_centering`.

    Returns
    -------
    pymc.Model
    """
    if design.family == "binomial" and method not in ("rows", "binomial_quadrature"):
        method = "binomial"
    return get_likelihood(method, design).build(design, priors, centering)


__all__ = [
    "LIKELIHOODS",
    "LOGISTIC_VARIANCE",
    "MAX_MARGINAL_FLOPS",
    "Likelihood",
    "Method",
    "build_model",
    "choose_centering",
    "choose_method",
    "method_note",
    "get_likelihood",
    "marginal_layout",
    "term_levels",
]
