"""Hand a model to nutpie, in one of two ways.

* :func:`compile_native` is nutpie's own path: the PyMC model's log density and gradient become
  one numba C callback, which the sampler calls without the GIL. Fastest per evaluation; the
  callbacks read the data from a table of addresses (:mod:`bayes_tee._core.native`), so numba
  caches them on disk and a model compiled before on this machine (the same graph, in any
  process) loads in about 3 s instead of 15-35 s. A new graph compiles as in nutpie (10-30 s
  on 5k-50k call pilots, benchmarks/bench_messy.py). It has ``with_data`` for refits with new
  scores.
* :func:`compile_density` compiles nothing: a likelihood written in NumPy/numba with its
  gradient (:mod:`bayes_tee._core.density`) is sampled through Python callbacks, a few
  microseconds of overhead per evaluation. The first fit of a new layout in a new process
  costs no more than the hundredth.
* :func:`compile_callback` takes such a density whose kernel also exists as a C callback
  (``density.callback()``: compiled once per machine, its data read from a table of
  addresses): nutpie calls it without Python or the interpreter lock, and the draws, sampled as
  unconstrained vectors, are expanded afterwards for all draws at once (:func:`expand_draws`).

>>> import numpy as np, pymc as pm
>>> with pm.Model() as m:
...     y = pm.Data("y", np.zeros(5))
...     mu = pm.Normal("mu", 0, 1)
...     _ = pm.Potential("lik", pm.logp(pm.Normal.dist(mu, 1), y).sum())
>>> compiled = compile_native(m)  # doctest: +SKIP
>>> compiled.with_data(y=np.ones(5))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import nutpie
import xarray as xr
from nutpie.compile_pymc import CompiledPyMCModel
from nutpie.compiled_pyfunc import from_pyfunc

from .density import Density
from .native import compile_cached

if TYPE_CHECKING:
    import pymc as pm


def compile_native(model: pm.Model) -> CompiledPyMCModel:
    """Compile through numba C callbacks (no GIL), cached on disk where PyTensor can cache the
    model's functions (:func:`~bayes_tee._core.native.compile_cached`), else nutpie's own.
    """
    return compile_cached(model) or nutpie.compile_pymc_model(model)


def density_logp(density: Density, x: np.ndarray) -> tuple[float, np.ndarray]:
    """``density.logp_grad`` as nutpie calls it: a float and a contiguous gradient, and
    ``-inf`` where the kernel divides by zero (an exception, or NaN).

    An SD proposed below ``exp(-745)`` in warm-up underflows to zero and a compiled kernel
    divides by it: a point without posterior mass, which NUTS rejects as a divergence (an
    exception raised in the callback would stop every chain).

    >>> density_logp(dens, dens.initial_point(np.random.default_rng(0)))[0]  # doctest: +SKIP
    -1234.5
    """
    try:
        value, grad = density.logp_grad(np.asarray(x, dtype=np.float64))
    except ZeroDivisionError:
        return -np.inf, np.zeros(len(x))
    if np.isnan(value):  # 0 / 0 in NumPy arithmetic: the same point, rejected the same way
        return -np.inf, np.zeros(len(x))
    return float(value), np.ascontiguousarray(grad, dtype=np.float64)


def reported_point(density: Density, x: np.ndarray) -> np.ndarray:
    """``x`` (one point or rows) in the coordinates its draws are reported in: the density's
    ``report`` where it samples other coordinates than it reports (the GLMMs' crossed terms,
    :mod:`~bayes_tee.likelihoods.logit_glmm.crossed_kernel`), ``x`` itself otherwise.
    """
    report = getattr(density, "report", None)
    return x if report is None else report(x)


def compile_density(density: Density):
    """Wrap a NumPy :class:`~bayes_tee._core.density.Density` for nutpie: nothing to compile.

    Each chain calls ``density.logp_grad`` through a Python callback (a few microseconds of
    overhead per evaluation); draws are reported as ``density.layout.expand`` maps them, plus
    the density's ``derived`` quantities (``density.derive``) where it has any.
    """
    layout = density.layout
    derived = getattr(density, "derived", [])
    reported = layout.reported + derived
    float64 = np.dtype("float64")

    def make_logp():
        def logp(x, **data):
            return density_logp(density, x)

        return logp

    def make_expand(seed1, seed2, chain):
        def expand(x, **data):
            x = reported_point(density, np.asarray(x, dtype=float64))
            return {**layout.expand(x), **density.derive(x)} if derived else layout.expand(x)

        return expand

    def initial_point(seed):
        return density.initial_point(np.random.default_rng(seed))

    return from_pyfunc(
        ndim=layout.ndim,
        make_logp_fn=make_logp,
        make_expand_fn=make_expand,
        make_initial_point_fn=initial_point,
        expanded_dtypes=[float64] * len(reported),
        expanded_shapes=[s for _, s in reported],
        expanded_names=[n for n, _ in reported],
        dims={n: d for n, d in density.dims.items() if n in dict(reported)},
        coords=density.coords,
    )


#: The one variable a callback-sampled model reports: the unconstrained vector.
RAW, RAW_DIM = "x", "unconstrained"


def compile_callback(
    density: Density, initial_point: Callable[[int], np.ndarray] | None = None
) -> CompiledPyMCModel:
    """Wrap a density with a C callback (``density.callback()`` returns the log density
    callback, the expand callback, the table their user data point to and the arrays it points
    into) as nutpie's compiled model. The draws hold the unconstrained vector ``x`` only: expand
    them with :func:`expand_draws`. ``initial_point(seed)`` starts the chains (a warm start,
    :mod:`~bayes_tee._core.warm`); by default ``density.initial_point``.

    >>> compiled = compile_callback(OrdinalDensity(design, priors))  # doctest: +SKIP
    """
    logp, expand, table, keep = density.callback()
    ndim = density.layout.ndim
    return CompiledPyMCModel(
        _n_dim=ndim,
        dims={RAW: (RAW_DIM,)},
        _coords={RAW_DIM: np.arange(ndim)},
        _shapes={RAW: (ndim,)},
        compiled_logp_func=logp,
        compiled_expand_func=expand,
        initial_point_func=initial_point or (lambda seed: density.initial_point(np.random.default_rng(seed))),
        # what the table points into lives as long as the compiled model (nutpie holds it
        # while it samples)
        shared_data={f"argument_{i}": a for i, a in enumerate(keep)},
        shared_var_keys={},
        user_data=table,
        n_expanded=ndim,
        shape_info=([RAW], [slice(0, ndim)], [(ndim,)]),
        logp_func=None,
        expand_func=None,
    )


def expand_draws(idata: xr.DataTree, density: Density) -> xr.DataTree:
    """``idata`` with its posterior of unconstrained vectors (:func:`compile_callback`) replaced
    by the reported parameters and the density's derived quantities (``density.derive_draws``,
    every draw at once), as :func:`compile_density`'s draws hold them (same names, dims and
    coordinates).
    """
    raw = idata["posterior"][RAW]
    x = np.ascontiguousarray(raw.transpose("chain", "draw", RAW_DIM).to_numpy(), dtype=np.float64)
    chain, draw = x.shape[:2]
    x = reported_point(density, x.reshape(chain * draw, -1)).reshape(x.shape)
    values = density.layout.expand(x)
    derived = getattr(density, "derived", [])
    if derived:  # every draw in one compiled loop: a density with a callback has derive_draws
        found = density.derive_draws(x.reshape(chain * draw, -1))
        for name, shape in derived:
            values[name] = np.asarray(found[name]).reshape((chain, draw, *shape))
    dims = density.dims
    data = {}
    for name, v in values.items():
        extra = dims.get(name) or tuple(f"{name}_dim_{i}" for i in range(v.ndim - 2))
        data[name] = (("chain", "draw", *extra), v)
    coords = {"chain": raw["chain"].to_numpy(), "draw": raw["draw"].to_numpy()}
    used = {d for ds, _ in data.values() for d in ds}
    coords |= {k: np.asarray(v) for k, v in density.coords.items() if k in used}
    posterior = xr.Dataset(data, coords=coords, attrs=idata["posterior"].attrs)
    out = idata.copy()
    out["posterior"] = xr.DataTree(posterior)
    return out
