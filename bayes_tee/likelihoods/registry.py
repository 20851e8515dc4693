"""The registry of likelihoods: one :class:`Likelihood` per ``method=`` name, and the choice
of the fastest exact one for a design (:func:`choose_method`).

It imports no likelihood's machinery: each entry's callables load their module when a fit
calls them (PyMC only for the likelihoods that build a PyMC graph), so the names are known at
once to the command line and the docs.

>>> METHODS[:3]
('auto', 'balanced', 'augmented')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._core.exceptions import ArgumentError
from ..families import get_family
from ..families.ordinal import cell_draws

if TYPE_CHECKING:
    import numpy as np
    import pymc as pm
    import xarray as xr

    from .._core.density import Density
    from .._core.priors import PriorSpec
    from ..design.design import Design


#: Above this many floating-point operations per log-density evaluation the marginal model is
#: slower than sampling the random effects (measured: ~1e6 flops run in ~0.3 ms here).
MAX_MARGINAL_FLOPS = 5e7

#: The item blocks' cost is linear in the items; past this many floating-point operations per
#: item and evaluation (about 70 short cells in one item) the item is mostly invented and the
#: marginal or cell model is the better form.
MAX_BLOCK_FLOPS_PER_ITEM = 2e5

#: Above this many floating-point operations per evaluation (the item patterns' sums contracted
#: with the fixed coefficients' matrices) the ``collapsed`` form costs more than sampling the
#: coefficients in the marginal form.
MAX_COLLAPSED_FLOPS = 2e7


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
    target_accept : callable or None
        ``design -> float or None``: the NUTS acceptance target this likelihood needs on the
        layout, when it differs from the family's default (``None``: the family's).
    kernel_accept : callable or None
        The same when nutpie samples the density (its kernel), whose coordinates may differ from
        the PyMC model's (``blocks``: the grand mean around its conditional posterior); ``None``:
        ``target_accept``. :meth:`accept` picks.
    draws : callable or None
        ``design -> int or None``: the draws per chain this likelihood needs on the layout,
        when they differ from the family's default (``None``: the family's).
    tune : callable or None
        ``design -> int or None``: the warm-up steps per chain, when they differ from the
        family's default.
    covariates : bool
        Its PyMC model takes numeric covariates (:mod:`bayes_tee.design.covariates`); a fit with
        covariates samples that model unless ``density_covariates``.
    density_covariates : bool
        Its NumPy density takes the covariates too (``collapsed``), so a fit with covariates
        samples the density.
    """

    name: str
    family: str
    build: Callable[[Design, PriorSpec, dict | None], pm.Model]
    data: Callable[[Design], dict[str, np.ndarray]] | None = None
    key: Callable[[Design], object] | None = None
    postprocess: Callable[[xr.Dataset], xr.Dataset] | None = None
    loglik: str = ""
    density: Callable[[Design, PriorSpec], Density] | None = None
    target_accept: Callable[[Design], float | None] | None = None
    draws: Callable[[Design], int | None] | None = None
    tune: Callable[[Design], int | None] | None = None
    covariates: bool = False
    density_covariates: bool = False
    kernel_accept: Callable[[Design], float | None] | None = None

    def accept(self, design: Design, sampler: str) -> float | None:
        """The acceptance target of a fit of ``design`` with ``sampler`` (``None``: the
        family's): :attr:`kernel_accept` when nutpie samples a density, else :attr:`target_accept`.
        """
        kernel = sampler == "nutpie" and self.density is not None and self.kernel_accept is not None
        rule = self.kernel_accept if kernel else self.target_accept
        return rule(design) if rule is not None else None


#: The version of the GLMMs' sampled coordinates, recorded in every fit's ``info`` (as
#: ``glmm_coordinates``): 2 since every non-centred level is adapted to its data
#: (:func:`~.glmm_layout.level_adaptation`), 3 since no level is centred outright and each adapted
#: level sits around its rough total relative to its sampled mean, 4 since every few-level two-way
#: term that completely crosses two free main effects is centred on them, whatever its data, and
#: sampled with them in :mod:`~.logit_glmm.crossed_kernel`'s coordinates (its main effects' own
#: adaptation off). A fit's random effects are read back from its draws through these
#: coordinates, so effects saved under another version are refused.
GLMM_COORDINATES = 4


@dataclass(frozen=True)
class Lazy:
    """A function of a likelihood's folder named by ``"module:function"`` (under
    ``bayes_tee.likelihoods``), imported when first called: the registry names every builder,
    density and cost without loading PyMC, PyTensor or numba until a fit needs them.

    >>> Lazy("anova:anova_estimates").load().__name__
    'anova_estimates'
    """

    ref: str

    def load(self) -> Callable:
        """The function itself (its module imported now)."""
        module, name = self.ref.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)

    def __call__(self, *args, **kwargs):  # noqa: D102
        return self.load()(*args, **kwargs)


def _cell_draws(d: Design) -> int | None:
    return cell_draws([t.label for t in d.terms if t.kind == "random"])


#: Floating-point operations per evaluation of the ``blocks`` likelihood.
blocks_cost = Lazy("blocks.layout:blocks_cost")
#: Floating-point operations per evaluation of the exact marginal likelihood.
marginal_cost = Lazy("marginal.model:marginal_cost")
#: The marginal likelihood's layout.
marginal_layout = Lazy("marginal.model:marginal_layout")
_latent_share = Lazy("strata.augment:latent_share")
_blocks_limitation = Lazy("blocks.layout:blocks_limitation")
_marginal = Lazy("marginal.model:marginal_model")
_cell_data = Lazy("parts:cell_data")
_glmm_data = Lazy("logit_glmm.layout:binomial_data")
_glmm_key = Lazy("logit_glmm.layout:glmm_key")
_logistic = Lazy("logit_glmm.layout:add_logistic_residual")
_slope_accept = Lazy("covariates:slope_accept")


def _quadrature_accept(design: Design) -> float:
    """0.95 on every layout: :func:`~.levels.glmm_accept`'s measurement (0.9 where no few-level
    term needs more) did not cover ``binomial_quadrature``, whose small-facet fits take 1-3 min each.
    """
    return 0.95


#: Floating-point operations per evaluation of the ``collapsed`` likelihood (infinite where it
#: does not fit).
collapsed_cost = Lazy("collapsed.layout:collapsed_cost")


#: Every likelihood by ``method=`` name.
LIKELIHOODS: dict[str, Likelihood] = {
    lk.name: lk
    for lk in (
        Likelihood(
            "balanced",
            "gaussian",
            Lazy("strata.balanced:balanced_model"),
            data=Lazy("anova:balanced_data"),
            loglik="balanced",
            density=Lazy("strata.density:balanced_density"),
            target_accept=Lazy("levels:few_level_accept"),
        ),
        Likelihood(
            "augmented",
            "gaussian",
            Lazy("strata.augmented:augmented_model"),
            loglik="marginal",
            density=Lazy("strata.density:augmented_density"),
        ),
        Likelihood(
            "blocks",
            "gaussian",
            _marginal,  # the same posterior as a PyMC graph (sampler="pymc"): every effect integrated
            loglik="marginal",
            density=Lazy("blocks.density:blocks_density"),
            target_accept=Lazy("blocks.layout:blocks_target_accept"),
            kernel_accept=Lazy("blocks.layout:blocks_kernel_accept"),
            tune=Lazy("blocks.layout:blocks_tune"),
        ),
        Likelihood(
            "marginal",
            "gaussian",
            _marginal,
            data=_cell_data,
            loglik="marginal",
            target_accept=_slope_accept,
            covariates=True,
        ),
        Likelihood(
            "collapsed",
            "gaussian",
            _marginal,  # the same posterior as a PyMC graph (sampler="pymc")
            loglik="marginal",
            density=Lazy("collapsed.density:collapsed_density"),
            tune=Lazy("collapsed.layout:collapsed_tune"),
            covariates=True,
            density_covariates=True,
        ),
        Likelihood(
            "cells",
            "gaussian",
            Lazy("cells.model:cell_model"),
            data=_cell_data,
            key=Lazy("cells.model:cells_key"),
            loglik="cells",
            target_accept=_slope_accept,
            covariates=True,
        ),
        Likelihood("rows", "any", Lazy("rows:rows_model"), loglik="rows"),
        Likelihood(
            "binomial",
            "binomial",
            Lazy("logit_glmm.model:binomial_model"),
            data=_glmm_data,
            key=_glmm_key,
            postprocess=_logistic,
            loglik="binomial",
            density=Lazy("logit_glmm.density:binomial_density"),
            target_accept=Lazy("levels:glmm_accept"),
            covariates=True,
        ),
        Likelihood(
            "ordinal",
            "ordinal",
            Lazy("ordinal.model:ordinal_model"),
            postprocess=_logistic,
            loglik="ordinal",
            density=Lazy("ordinal.density:ordinal_density"),
            draws=_cell_draws,
            covariates=True,
        ),
        Likelihood(
            "ordinal_probit",
            "ordinal_probit",
            Lazy("ordinal.model:ordinal_model"),
            postprocess=Lazy("logit_glmm.layout:add_probit_residual"),
            loglik="ordinal_probit",
            density=Lazy("ordinal.density:ordinal_density"),
            draws=_cell_draws,
            covariates=True,
        ),
        Likelihood(
            "binomial_quadrature",
            "binomial",
            Lazy("logit_glmm.model:binomial_quadrature_model"),
            data=_glmm_data,
            key=_glmm_key,
            postprocess=_logistic,
            loglik="binomial_quadrature",
            density=Lazy("logit_glmm.density:binomial_quadrature_density"),
            target_accept=_quadrature_accept,
            covariates=True,
        ),
    )
}


#: Every ``method=`` a fit takes: ``auto`` and the registry's names.
METHODS: tuple[str, ...] = ("auto", *LIKELIHOODS)


def get_likelihood(method: str, design: Design) -> Likelihood:
    """The registry entry for ``method``, checked against the design's family.

    Raises
    ------
    ValueError
        An unknown name, or a likelihood of the other family.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> get_likelihood("balanced", d).density is not None
    True
    """
    if method not in LIKELIHOODS:
        raise ArgumentError(f"method must be one of {sorted(LIKELIHOODS)} or 'auto', got {method!r}.")
    lk = LIKELIHOODS[method]
    if lk.family not in ("any", design.family):
        own = ", ".join(repr(n) for n, other in LIKELIHOODS.items() if other.family == design.family)
        raise ArgumentError(
            f"method={method!r} fits family={lk.family!r}; a design validated with "
            f"family={design.family!r} takes method='auto', {own} or 'rows' (the per-call benchmark "
            "baseline)."
        )
    if design.covariates is not None and not lk.covariates:
        takes = ", ".join(
            repr(n) for n, other in LIKELIHOODS.items() if other.covariates and other.family == design.family
        )
        raise ArgumentError(
            f"method={method!r} does not take covariates (its sufficient statistics have no slopes); a "
            "design "
            f"with covariates ({', '.join(design.covariates.names)}) takes method='auto' or {takes}."
        )
    return lk


def choose_method(design: Design) -> str:
    """The fastest exact likelihood for a design: ``balanced``, ``blocks``, ``marginal`` or
    ``cells`` (``binomial`` for the GLMM).

    >>> import bayes_tee as bt
    >>> choose_method(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item"))
    'balanced'
    """
    default = get_family(design.family).default_method
    if default is not None:
        return default
    if design.covariates is not None:  # the slopes break the strata and the item blocks' kernel
        # with only the items' and the cells' random effects, every linear effect integrates out
        # and only the SDs are sampled: nothing compiled, no ridge between the coefficients
        if collapsed_cost(design) <= MAX_COLLAPSED_FLOPS:
            return "collapsed"
        return "marginal" if marginal_cost(design) <= MAX_MARGINAL_FLOPS else "cells"
    if design.complete:
        return "balanced"
    # the item blocks are sampled through a C callback compiled once per machine (nothing per
    # layout, no Python per gradient), so they are taken whatever share of the cells is short
    # while each item's block stays small; the marginal form compiles its PyMC model natively in
    # every process (10-30 s), which an adaptive loop's refits would pay at every step
    per_item = blocks_cost(design) / max(len(design.levels["item"]), 1)
    if _blocks_limitation(design) is None and per_item <= MAX_BLOCK_FLOPS_PER_ITEM:
        return "blocks"
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
    if design.covariates is not None:
        names = ", ".join(design.covariates.names)
        if method == "collapsed":
            return (
                f"{method}: the random effects are the items' and the cells', so every linear effect "
                f"(intercept, fixed effects, the slopes of {names}) is integrated out exactly and only the "
                "SDs are sampled; the coefficients are drawn from their exact conditional posterior."
            )
        if method in ("marginal", "cells"):
            how = (
                "every random effect integrated out exactly"
                if method == "marginal"
                else "the many-level effects sampled, the few-level ones integrated out"
            )
            return (
                f"{method}: covariate(s) {names} give every cell its own slope term, so the strata and "
                f"item-block kernels do not apply; the cell means' likelihood with {how}."
            )
    if method == "balanced":
        sizes = "" if design.balanced else " (categories of unequal size enter through their means)"
        return (
            f"{method}: every cell of the full cross holds the same number of calls, so the exact strata "
            f"likelihood applies{sizes}."
        )
    missing = design.n_full_cells - design.n_cells
    layout = f"{missing} of {design.n_full_cells} cells empty" if missing else "unequal calls per cell"
    if method == "blocks":
        share, _ = _latent_share(design)
        return (
            f"{method}: unbalanced ({layout}); {share:.0%} of the cells of the full cross are short or "
            "empty, integrated out exactly item by item (one Woodbury step per item)."
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
    if method.startswith("ordinal"):
        link = get_family(design.family).link
        extras = [
            w for w, v in (("cutpoints", design.thresholds), ("latent spread", design.spread)) if v == "judge"
        ]
        own = f" (each judge its own {' and '.join(extras)})" if extras else ""
        return f"{method}: the cumulative-{link} GLMM on each cell's calls per category{own}."
    return f"{method}: the logit GLMM on successes out of trials per cell."


def build_model(
    design: Design,
    priors: PriorSpec,
    *,
    method: str = "balanced",
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
    default, lk = get_family(design.family).default_method, LIKELIHOODS.get(method)
    if default is not None and lk is not None and lk.family not in ("any", design.family):
        method = default
    return get_likelihood(method, design).build(design, priors, centering)


__all__ = [
    "LIKELIHOODS",
    "MAX_BLOCK_FLOPS_PER_ITEM",
    "MAX_COLLAPSED_FLOPS",
    "MAX_MARGINAL_FLOPS",
    "METHODS",
    "Likelihood",
    "build_model",
    "choose_method",
    "get_likelihood",
    "marginal_cost",
    "marginal_layout",
    "method_note",
]
