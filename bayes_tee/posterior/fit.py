"""The plain fitted object every question is asked of: draws, design, priors and how it was made.

A :class:`Fit` holds what a TEE fit produced and nothing it answers: the draws (an ArviZ
``DataTree``), the validated :class:`~bayes_tee.design.design.Design`, the priors, the likelihood's
name and the sampler's record, with the model's terms, family and scale read off the design, the
variance-component draws computed once, and the convergence checks computed once. The questions
(:mod:`~bayes_tee.posterior.components`, :mod:`~bayes_tee.posterior.theta`,
:mod:`~bayes_tee.posterior.shares`, :mod:`~bayes_tee.posterior.dstudy`, ...) are functions of a
``Fit`` that call each other as plain functions; :class:`bayes_tee.Posterior`, the object users
hold, is a ``Fit`` with one delegating method per question. A ``Fit`` built from stored draws answers
every question without sampling:

>>> import bayes_tee as bt
>>> post = bt.load("models/tee_demo.nc")  # doctest: +SKIP
>>> fit = Fit(post.idata, post.design, post.priors, post.method)  # doctest: +SKIP
>>> theta(fit)  # from bayes_tee.posterior.theta  # doctest: +SKIP
"""

from __future__ import annotations

import xarray as xr

from .._core import diagnostics as diag
from .._core.priors import PriorSpec
from .._core.trees import group
from .._core.warm import SamplerState
from ..design.design import Design
from ..design.formula import write_formula
from ..families import get_family
from .components import component_draws


class Fit(diag.FitResult):
    """A fitted TEE model: the draws and what they were fitted to.

    Parameters
    ----------
    idata : xarray.DataTree
        Draws (ArviZ 1); its ``posterior`` group holds ``sigma_<term>``, ``mu`` and ``<facet>_effect``.
    design : Design
        The validated design the model was fitted to.
    priors : PriorSpec
        Priors used.
    method : str
        Likelihood (a name in :data:`bayes_tee.likelihoods.registry.LIKELIHOODS`).
    info : dict, optional
        Sampler, timings and settings.
    """

    def __init__(
        self, idata: xr.DataTree, design: Design, priors: PriorSpec, method: str, info: dict | None = None
    ) -> None:
        self.idata, self.design, self.priors, self.method = idata, design, priors, method
        self.info = dict(info or {})
        self._components: tuple[int, xr.DataArray] | None = None
        #: Where the chains were (:class:`~bayes_tee._core.warm.SamplerState`), for a refit's
        #: ``warm_start``; ``None`` for a fit not sampled through a kernel or read from a file.
        self.sampler_state: SamplerState | None = None

    @property
    def _draws(self) -> xr.Dataset:
        return group(self.idata, "posterior")

    @property
    def terms(self) -> list:
        """The model's terms (components), in display order."""
        return list(self.design.terms)

    @property
    def formula(self) -> str:
        """The lme4-style formula given, or the one the roles wrote (``write_formula``): refittable."""
        if self.design.formula:
            return self.design.formula
        return write_formula(self.design.roles.outcome, self.terms, self.design.columns)

    @property
    def family(self) -> str:
        """The outcome family's name (:data:`bayes_tee.families.FAMILIES`)."""
        return self.design.family

    @property
    def scale(self) -> str:
        """Scale of the variance components: ``outcome`` or ``latent (logit)``."""
        return get_family(self.family).scale

    def is_fixed_residual(self, t) -> bool:
        """Whether term ``t`` is this family's fixed residual (the GLMM's logistic pi^2/3)."""
        return is_fixed_residual(t, self.family)

    def _convergence_vars(self) -> list[str]:
        return convergence_vars(self.terms, self.family, self.design.covariates)

    def diagnostics(self) -> dict:
        """R-hat, ESS, divergences, tree depth and E-BFMI (:func:`bayes_tee._core.diagnostics.check`)."""
        return self.convergence()

    def component_draws(self) -> xr.DataArray:
        """Variance of every component per draw (:func:`bayes_tee.posterior.components.component_draws`),
        computed once per set of draws.
        """
        if self._components is None or self._components[0] != id(self.idata):
            self._components = (id(self.idata), component_draws(self._draws, self.terms))
        return self._components[1]


def convergence_vars(terms: list, family: str, covariates=None) -> list[str]:
    """The draws a TEE fit is diagnosed on (its checkpoints and :meth:`Fit.diagnostics`):
    every term's SD or fixed effects, a family's fixed residual aside, the grand mean and
    every slope (:class:`~bayes_tee.design.covariates.Covariates`).

    >>> convergence_vars(design.terms, "binomial")  # doctest: +SKIP
    ['sigma_item', 'judge_effect', ..., 'mu']
    """
    slopes = [] if covariates is None else [s.var_name for s in covariates.slopes]
    return [t.var_name for t in terms if not is_fixed_residual(t, family)] + ["mu"] + slopes


def is_fixed_residual(t, family: str) -> bool:
    """Whether term ``t`` is ``family``'s fixed residual (the GLMM's logistic pi^2/3): a constant."""
    return get_family(family).fixed_residual and t.kind == "residual"


def describe(fit: Fit) -> str:
    """One line on a fit: its likelihood, design, draws and diagnostics verdict (the ``repr``).

    >>> describe(fit)  # doctest: +SKIP
    '<Posterior balanced | Design(item=40, ...) | 4000 draws | diagnostics ok>'
    """
    d = fit.diagnostics()
    status = "diagnostics ok" if d["ok"] else "DIAGNOSTICS FAILED: " + "; ".join(d["problems"])
    return f"<Posterior {fit.method} | {fit.design!r} | {d['n_draws']} draws | {status}>"
