"""Hand a model to nutpie, in one of two ways.

* :func:`compile_native` is nutpie's own path: the PyMC model's log density and gradient become
  one numba C callback, which the sampler calls without the GIL. Fastest per evaluation, but
  the callback captures the data and numba cannot cache it on disk, so every new process pays
  its compile again (10-30 s on 5k-50k call pilots, benchmarks/bench_messy.py). It has
  ``with_data`` for refits with new scores.
* :func:`compile_density` compiles nothing: a likelihood written in NumPy/numba with its
  gradient (:mod:`bayes_tee._core.density`) is sampled through Python callbacks, a few
  microseconds of overhead per evaluation. The first fit of a new layout in a new process
  costs no more than the hundredth.

>>> import numpy as np, pymc as pm
>>> with pm.Model() as m:
...     y = pm.Data("y", np.zeros(5))
...     mu = pm.Normal("mu", 0, 1)
...     _ = pm.Potential("lik", pm.logp(pm.Normal.dist(mu, 1), y).sum())
>>> compiled = compile_native(m)  # doctest: +SKIP
>>> compiled.with_data(y=np.ones(5))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import nutpie
from nutpie.compiled_pyfunc import from_pyfunc

from .density import Density

if TYPE_CHECKING:
    import pymc as pm


def compile_native(model: pm.Model):
    """Compile through nutpie's numba C callback (no GIL; recompiled in every process)."""
    return nutpie.compile_pymc_model(model)


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
            x = np.asarray(x, dtype=float64)
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
