"""Power-scaling prior and likelihood sensitivity of a fitted posterior (``post.sensitivity()``).

The power-scaling diagnostic of Kallioinen et al. (2023) through :func:`arviz_stats.psense`:
it perturbs the prior on the SDs (or the likelihood) by raising it to a power near 1,
reweights the draws by importance sampling and measures how far each component's posterior
moves (cumulative Jensen-Shannon distance per unit log-power). No refit. Above 0.05 for the
prior means the prior is informative for that component; if the likelihood's value is then
below 0.05 the data say little and the prior dominates, if it is also above 0.05 prior and data
pull in different directions. Refits under other priors are :mod:`bayes_tee.tee.prior_refits`.

The log densities are evaluated per draw on the model itself (PyMC graph, transforms removed,
vectorized over draws), so they hold for every likelihood form that keeps its parameters in
the posterior: balanced, augmented (through the marginal model's likelihood) and marginal fits
always; cell-level and GLMM fits while the random effects are in memory (not after ``save``
without ``keep_effects``). The draws go through in chunks whose memory stays under
:data:`EVAL_BYTES`: the marginal likelihood of a blocks fit holds every item's covariance per
draw (16 MB a draw on a 14-system x 100-item comparison of 4,785 calls, 63 GB for its 4,000
draws at once).

>>> post.sensitivity()                                     # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import tracemalloc
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytensor
import pytensor.tensor as pt
import xarray as xr
from arviz_stats import psense
from pymc.model.transform.conditioning import remove_value_transforms
from pytensor.compile.mode import Mode
from pytensor.graph.replace import vectorize_graph
from pytensor.tensor.math import variadic_add

from .._core.exceptions import ArgumentError
from .._core.trees import draws_tree, group
from ..families import get_family
from ..likelihoods import LIKELIHOODS, build_model

if TYPE_CHECKING:
    from .fit import Fit

#: Power-scaling sensitivity above this is "sensitive" (Kallioinen et al. 2023).
PSENS_THRESHOLD = 0.05


#: Bytes the evaluation of the log densities may hold at once (:func:`by_chunks`).
EVAL_BYTES = 256 * 2**20
#: Draws of the first chunk, whose peak memory sizes the others.
PROBE_DRAWS = 16


#: Each fit's log densities, computed once per set of draws (``post.sensitivity()`` and the
#: report both read them).
_LOG_DENSITIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def log_densities(post: Fit) -> tuple[xr.Dataset, xr.DataArray]:
    """Log prior of every free parameter and the total log likelihood, per draw (computed once
    per fit and set of draws).

    Returns
    -------
    (xarray.Dataset, xarray.DataArray)
        Log prior per free variable (dims ``chain, draw``) and the log likelihood (the
        observed terms and potentials of the model), both on the constrained scale.

    Raises
    ------
    ValueError
        When a free parameter the likelihood needs is not in the posterior (a cell-level or
        GLMM fit loaded from a file saved without ``keep_effects``).
    """
    # keyed by the draws, as Fit.component_draws keeps its own (a fit's method and priors are fixed)
    kept = _LOG_DENSITIES.get(post)
    if kept is None or kept[0] != id(post.idata):
        kept = _LOG_DENSITIES[post] = (id(post.idata), _evaluate(post))
    return kept[1]


def _evaluate(post: Fit) -> tuple[xr.Dataset, xr.DataArray]:
    # e.g. the augmented model's latent cell means are not kept; the marginal model has the same
    # parameters and priors and its potentials are the likelihood of the data, exactly
    method = LIKELIHOODS[post.method].loglik
    design = post.design
    if post.priors.reference is not None and not get_family(design.family).latent:
        # the priors' reference in place of the data's mean and SD: the fitted model, in user units
        design = dataclasses.replace(design, y_mean=post.priors.reference[0], y_sd=post.priors.reference[1])
    model = remove_value_transforms(build_model(design, post.priors, method=method))
    free = list(model.free_RVs)
    P = group(post.idata, "posterior")
    missing = [rv.name for rv in free if rv.name not in P]
    if missing:
        raise ArgumentError(
            f"The posterior lacks {missing[:3]} (the {post.method!r} model's random effects), so its "
            "likelihood cannot be evaluated; refit, or save with keep_effects=True."
        )
    values = [model.rvs_to_values[rv] for rv in free]
    # one call for both: each call rewrites the whole model's graph (most of this function's time)
    terms = model.logp(vars=[*free, *model.potentials, *model.observed_RVs], sum=False)
    outs = [*terms[: len(free)], variadic_add(*(pt.as_tensor(t).sum() for t in terms[len(free) :]))]
    batched = [pt.tensor(name=v.name, dtype=v.dtype, shape=(None, *v.type.shape)) for v in values]
    fn = pytensor.function(
        batched,
        vectorize_graph(outs, replace=dict(zip(values, batched))),
        # one evaluation over all draws: the Python linker, no graph rewrites (they cost more
        # than they save here, and the values are the same to the last digit)
        mode=Mode(linker="py", optimizer=None),
        on_unused_input="ignore",
    )
    n_chain, n_draw = P.sizes["chain"], P.sizes["draw"]
    res = by_chunks(
        fn,
        [
            P[rv.name].values.reshape(n_chain * n_draw, *P[rv.name].shape[2:]).astype(v.dtype)
            for rv, v in zip(free, values)
        ],
    )
    coords = {"chain": P["chain"].values, "draw": P["draw"].values}
    prior = xr.Dataset(
        {rv.name: (("chain", "draw"), r.reshape(n_chain, n_draw)) for rv, r in zip(free, res[:-1])},
        coords=coords,
    )
    return prior, xr.DataArray(res[-1].reshape(n_chain, n_draw), dims=("chain", "draw"), coords=coords)


def by_chunks(
    fn: Callable[..., Sequence[np.ndarray]], arrays: Sequence[np.ndarray], limit: int | None = None
) -> list[np.ndarray]:
    """Each output of ``fn`` summed per draw, ``fn`` called on chunks of the draws so that it
    holds at most ``limit`` bytes at once: the first :data:`PROBE_DRAWS` draws are evaluated
    with :mod:`tracemalloc` on, and their peak memory sizes the chunks after them.

    Parameters
    ----------
    fn : callable
        Takes one array per entry of ``arrays`` (a chunk of their draws) and returns arrays
        whose first axis is that chunk's draws.
    arrays : sequence of numpy.ndarray
        The draws, along the first axis of each.
    limit : int, optional
        Bytes a chunk's evaluation may hold (default :data:`EVAL_BYTES`).

    Returns
    -------
    list of numpy.ndarray
        Per output of ``fn``, its sum over every axis but the first: one value per draw.

    Examples
    --------
    >>> def fn(x):
    ...     return [x * 2.0, x.sum(axis=1)]
    >>> out = by_chunks(fn, [np.arange(40.0).reshape(20, 2)], limit=1)  # one draw a chunk
    >>> [o.shape for o in out], float(out[1][3])
    ([(20,), (20,)], 13.0)
    """
    n = len(arrays[0])
    probe = min(n, PROBE_DRAWS)
    tracing = tracemalloc.is_tracing()  # someone else's tracing: their earlier peak only shrinks the chunks
    if not tracing:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        parts = [fn(*[a[:probe] for a in arrays])]
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not tracing:
            tracemalloc.stop()
    size = max(1, int((EVAL_BYTES if limit is None else limit) * probe // max(peak, 1)))
    starts = [0, *range(probe, n, size)]
    parts += [fn(*[a[start : start + size] for a in arrays]) for start in starts[1:]]
    stops = [*starts[1:], n]
    return [
        np.concatenate(
            [np.asarray(p[i], float).reshape(b - a, -1).sum(axis=1) for p, a, b in zip(parts, starts, stops)]
        )
        for i in range(len(parts[0]))
    ]


def power_scaling(post: Fit, *, delta: float = 0.01, threshold: float = PSENS_THRESHOLD) -> pd.DataFrame:
    """Power-scaling prior and likelihood sensitivity of each variance component.

    The prior that is scaled is the one on the SDs (the choice the presets vary); the
    quantities checked are the components on the variance scale (the population variance of
    the levels for fixed judges/temperatures) and the grand mean.

    Parameters
    ----------
    post : Fit
    delta : float
        Finite-difference step of the log power.
    threshold : float
        Sensitivity above which a component is flagged (0.05, as in priorsense).

    Returns
    -------
    pandas.DataFrame
        ``component, prior, likelihood, diagnosis``: ``diagnosis`` is ``"-"``,
        ``"prior-data conflict"`` (both above ``threshold``) or ``"strong prior / weak
        likelihood"`` (prior above, likelihood below).

    Examples
    --------
    >>> post.sensitivity()  # doctest: +SKIP
    """
    log_prior, log_lik = log_densities(post)
    sd_vars = [t.var_name for t in post.terms if t.var_name in log_prior and t.kind != "fixed"]
    draws = post.component_draws()
    quantities = {
        t.label: draws.sel(component=t.label, drop=True) for t in post.terms if not post.is_fixed_residual(t)
    }
    quantities["mu"] = group(post.idata, "posterior")["mu"]
    tree = draws_tree(
        xr.Dataset(quantities),
        log_prior=log_prior[sd_vars],
        log_likelihood=xr.Dataset({"loglik": log_lik}),
    )
    # power alpha in [1 / (1 + delta), 1 + delta]: the finite difference of Kallioinen et al.
    alphas = (1.0 / (1.0 + delta), 1.0 + delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # psense's own divide warnings on constant draws
        prior = psense(tree, group="prior", group_var_names=sd_vars, alphas=alphas)
        lik = psense(tree, group="likelihood", alphas=alphas)
    rows = []
    for name in quantities:
        p, lk = float(prior[name]), float(lik[name])
        if p >= threshold and lk >= threshold:
            dx = "prior-data conflict"
        elif p >= threshold:
            dx = "strong prior / weak likelihood"
        else:
            dx = "-"
        rows.append({"component": name, "prior": p, "likelihood": lk, "diagnosis": dx})
    out = pd.DataFrame(rows)
    out.attrs.update(threshold=threshold, priors=post.priors.name, scaled=sd_vars)
    return out
