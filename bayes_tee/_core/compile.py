"""Compile a PyMC model for nutpie, in one of two ways.

* :func:`compile_native` is nutpie's own path: the log density and its gradient become one
  numba C callback, which the sampler calls without the GIL. Fastest per evaluation, but the
  callback captures the data and numba cannot cache it on disk, so every new process pays its
  compile again (10-15 s on the demo).
* :func:`compile_cached` samples through Python callbacks into PyTensor's numba functions,
  which PyTensor 3 caches on disk (``~/.pytensor``): a second process on the same layout skips
  the numba compile and pays only PyTensor's graph rewrites. Each evaluation costs about 10
  microseconds more and chains share the GIL, which is nothing next to a compile when the log
  density has a handful of parameters and costs microseconds: the ``balanced`` likelihood.

Both return a nutpie compiled model with ``with_data`` for refits with new scores.

>>> import numpy as np, pymc as pm
>>> with pm.Model() as m:
...     y = pm.Data("y", np.zeros(5))
...     mu = pm.Normal("mu", 0, 1)
...     _ = pm.Potential("lik", pm.logp(pm.Normal.dist(mu, 1), y).sum())
>>> compiled = compile_cached(m)  # doctest: +SKIP
>>> compiled.with_data(y=np.ones(5))  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import nutpie
import pymc as pm
from nutpie.compile_pymc import _make_functions, _prepare_dims_and_coords, _wrap_with_lock
from nutpie.compiled_pyfunc import from_pyfunc
from pymc.initial_point import make_initial_point_fn


def compile_native(model: pm.Model):
    """Compile through nutpie's numba C callback (no GIL; recompiled in every process)."""
    return nutpie.compile_pymc_model(model)


def compile_cached(model: pm.Model):
    """Compile through Python callbacks into PyTensor's disk-cached numba functions.

    The initial points follow nutpie's defaults (PyMC's support point, jittered), so a fit is
    the same model and the same initialisation as through :func:`compile_native`.
    """
    # chains start in parallel threads: PyTensor functions are not thread-safe, so lock it
    initial = _wrap_with_lock(
        make_initial_point_fn(
            model=model,
            default_strategy="support_point",
            jitter_rvs=set(model.free_RVs),
            return_transformed=True,
        )
    )
    n_dim, _, logp_pt, expand_pt, initial_point, shape_info, reparameterized = _make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=False, pymc_initial_point_fn=initial
    )
    logp_jit, expand_jit = logp_pt.vm.jit_fn, expand_pt.vm.jit_fn
    logp_names = [v.name for v in logp_pt.get_shared()]
    expand_names = [v.name for v in expand_pt.get_shared()]
    shared = {v.name: np.asarray(v.get_value()) for v in [*logp_pt.get_shared(), *expand_pt.get_shared()]}
    names, _, shapes = shape_info
    float64 = np.dtype("float64")

    def make_logp():
        def logp(x, **data):
            value, grad = logp_jit(x, *[data[n] for n in logp_names])
            return float(value), np.ascontiguousarray(grad, dtype=float64)

        return logp

    def make_expand(seed1, seed2, chain):
        def expand(x, **data):
            values = expand_jit(x, *[data[n] for n in expand_names])
            return {
                n: np.ascontiguousarray(v, dtype=float64).reshape(s) for n, v, s in zip(names, values, shapes)
            }

        return expand

    dims, coords = _prepare_dims_and_coords(model, shape_info, reparameterized)
    return from_pyfunc(
        ndim=n_dim,
        make_logp_fn=make_logp,
        make_expand_fn=make_expand,
        make_initial_point_fn=initial_point,
        expanded_dtypes=[float64] * len(names),
        expanded_shapes=shapes,
        expanded_names=names,
        shared_data=shared,
        dims=dims,
        coords=coords,
        reparameterized_names=reparameterized,
    )
