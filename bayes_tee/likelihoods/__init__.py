"""Design + priors -> PyMC model: the likelihoods of the TEE model and their registry.

Every likelihood has the same variance parameters (``sigma_<term>``), grand mean ``mu`` and
zero-sum fixed level effects (``<facet>_effect``), so every summary works on any of them. They
differ in what is integrated out and so in cost and geometry:

===================  ========================================================================  ==========
name                 when                                                                      module
===================  ========================================================================  ==========
balanced             every cell present with equal replicates (exact strata likelihood)        strata/
augmented            nearly balanced: the balanced likelihood with latent missing values       strata/
marginal             any Gaussian design, every random effect integrated out exactly           marginal/
cells                any Gaussian design, random effects sampled (when marginal is costly)     cells/
rows                 one term per call: the textbook baseline, for benchmarks                  rows
binomial             the logit GLMM on successes out of trials per cell, cell effect sampled   logit_glmm/
binomial_quadrature  the GLMM with the cell effect integrated out by adaptive quadrature       logit_glmm/
ordinal              cumulative-logit GLMM on each cell's calls per category (Likert scores)   ordinal/
ordinal_probit       the same with the probit link                                             ordinal/
===================  ========================================================================  ==========

:data:`LIKELIHOODS` maps each name to what the rest of the package needs to know about it
(:class:`Likelihood`, its builders named by :class:`~.registry.Lazy` references); a new
likelihood is one folder (its layout, PyMC model, NumPy density and numba kernel side by side)
plus one entry. The item-blocks likelihood (``blocks/``) is the marginal model's PyMC graph with
its own density; shared pieces sit at the top: ``anova`` (strata algebra and moment estimates),
``levels``, ``linalg``, ``parts`` (PyMC pieces) and ``kernels/`` (the SD priors every kernel
calls, the C callbacks, the kernels' cache key). ``balanced`` and
``augmented`` also exist as a NumPy/numba density (:mod:`.strata.density`), which nutpie samples
without compiling anything per layout; the PyMC models stay the reference (the tests hold the
two equal) and serve PyMC's sampler, power-scaling and in-process refits.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge")
>>> m = build_model(d, bt.priors.get_prior(), method="balanced")
>>> sorted(str(v) for v in m.free_RVs)[:3]
['judge_effect', 'mu', 'sigma_cell']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import (
    LIKELIHOODS,
    MAX_MARGINAL_FLOPS,
    METHODS,
    Likelihood,
    build_model,
    choose_method,
    get_likelihood,
    marginal_cost,
    marginal_layout,
    method_note,
)

if TYPE_CHECKING:
    from .levels import choose_centering, term_levels
    from .logit_glmm.layout import LOGISTIC_VARIANCE

#: Names loaded on first use (they need pandas and xarray, which the registry does not).
_LAZY = {
    "LOGISTIC_VARIANCE": "glmm_layout",
    "choose_centering": "levels",
    "term_levels": "levels",
}


def __getattr__(name: str):
    """``LOGISTIC_VARIANCE``, ``choose_centering`` and ``term_levels``, imported on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LIKELIHOODS",
    "LOGISTIC_VARIANCE",
    "MAX_MARGINAL_FLOPS",
    "METHODS",
    "Likelihood",
    "build_model",
    "choose_centering",
    "choose_method",
    "get_likelihood",
    "marginal_cost",
    "marginal_layout",
    "method_note",
    "term_levels",
]
