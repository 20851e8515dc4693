"""The one sampler entry point (:func:`sample`) and the compiled-model cache of this process.

Every fit in the package (TEE, judge calibration, paired noise) samples through :func:`sample`:
nutpie by default, PyMC's own NUTS on request. How nutpie gets the log density:

- a likelihood written in NumPy (:mod:`bayes_tee._core.density`) is sampled as it is, with
  nothing to compile: the first fit of a layout in a process;
- a layout refitted in the same process (a coverage study, a bootstrap) is compiled once into
  nutpie's numba C callback (about 4x cheaper per evaluation, 10-30 s to compile) and every
  later fit reuses it through ``with_data``; the caller names the layout (a key) and the data
  containers that change;
- anything else compiles the PyMC model into the C callback.
"""

from __future__ import annotations

import os
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import xarray as xr

from .compile import compile_density, compile_native
from .density import Density
from .exceptions import ArgumentError, SamplingError, first_line

if TYPE_CHECKING:
    import pymc as pm

#: Compiled models kept in this process, by layout key.
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 8
#: Layout keys fitted once in this process through their NumPy density.
_SEEN: set[str] = set()


def clear_cache() -> None:
    """Forget every compiled model of this process (the next fit of each layout starts afresh)."""
    _COMPILED.clear()
    _SEEN.clear()


def sample(
    model: pm.Model | Callable[[], pm.Model],
    sampler: Literal["nutpie", "pymc"],
    chains: int,
    tune: int,
    draws: int,
    target_accept: float,
    seed: int | None,
    progressbar: bool,
    reuse: tuple[str, dict] | None = None,
    density: Density | None = None,
) -> tuple[xr.DataTree, dict]:
    """Sample ``model`` with nutpie or PyMC: the one sampler entry point of every fit.

    ``model`` is a PyMC model, or a function that builds it (called only when it is needed).
    ``reuse=(layout key, data)`` reuses a compiled model of this process (the key says when two
    models are the same up to the data containers named in ``data``). ``density``, the same
    model as a NumPy log density, is what nutpie samples on a layout's first fit in this process
    (see the module docstring).

    Returns
    -------
    (xarray.DataTree, dict)
        The draws as nutpie or PyMC return them, and ``{"start": t0, "durations": {...}}``
        (compile and sampling seconds, whether a compiled model was reused and how it was
        compiled).

    Examples
    --------
    >>> idata, timing = sample(model, "nutpie", 4, 1000, 1000, 0.9, 1, False)  # doctest: +SKIP
    """
    start = time.perf_counter()
    key = reuse[0] if reuse is not None else None
    if sampler == "nutpie" and density is not None and key not in _COMPILED and key not in _SEEN:
        if key is not None:
            _SEEN.add(key)
        compiled = compile_density(density)
        return _run_nutpie(
            compiled, chains, tune, draws, target_accept, seed, progressbar, start, False, "none"
        )
    if not hasattr(model, "named_vars"):  # a builder: the PyMC model is made only here
        model = model()
    if sampler == "nutpie":
        with warnings.catch_warnings():
            # numba's hint that np.dot is faster on contiguous arrays, raised while compiling
            # the Woodbury terms on a cold cache: a compiler note, not a user problem
            warnings.filterwarnings("ignore", category=_numba_performance_warning())
            return _sample_nutpie(model, chains, tune, draws, target_accept, seed, progressbar, reuse, start)
    if sampler == "pymc":
        import pymc as pm  # PyMC's own sampler: loaded only when asked for

        with model:
            idata = pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                cores=min(chains, os.cpu_count() or 1),
                target_accept=target_accept,
                random_seed=seed,
                progressbar=progressbar,
                quiet=not progressbar,
                nuts_sampler="pymc",  # PyMC 6 would hand NUTS to nutpie when it is installed
                compute_convergence_checks=False,
            )
        t2 = time.perf_counter()
        return idata, {
            "start": start,
            "durations": {"compile_s": None, "sample_s": round(t2 - start, 3), "reused_compiled": False},
        }
    raise ArgumentError(f"sampler must be 'nutpie' or 'pymc', got {sampler!r}.")


def _numba_performance_warning() -> type[Warning]:
    try:
        from numba.core.errors import NumbaPerformanceWarning
    except ImportError:  # numba is nutpie's dependency; stay importable without it
        return RuntimeWarning
    return NumbaPerformanceWarning


def _sample_nutpie(model, chains, tune, draws, target_accept, seed, progressbar, reuse, start):
    entry = _COMPILED.get(reuse[0]) if reuse is not None else None
    if entry is not None:
        _COMPILED.move_to_end(reuse[0])
        old_model, compiled, kind = entry
        # the initial-point function reads the cached model's data containers: update them
        # too, so a reused fit starts (and, seeded, ends) exactly as a fresh one would
        import pymc as pm  # a compiled PyMC model is being reused: PyMC is loaded already

        pm.set_data(reuse[1], model=old_model)
        # data the compiled functions never read (e.g. a prior of another mode) are not theirs;
        # nutpie keys its shared data by a uuid and names them through shared_var_keys
        names = {var.name for var in compiled.shared_var_keys}
        compiled = compiled.with_data(**{k: v for k, v in reuse[1].items() if k in names})
        reused = True
    else:
        reused, kind = False, "native"
        compiled = compile_native(model)
        if reuse is not None:
            _COMPILED[reuse[0]] = (model, compiled, kind)
            _COMPILED.move_to_end(reuse[0])
            while len(_COMPILED) > _COMPILED_MAX:
                _COMPILED.popitem(last=False)
    return _run_nutpie(compiled, chains, tune, draws, target_accept, seed, progressbar, start, reused, kind)


def _run_nutpie(compiled, chains, tune, draws, target_accept, seed, progressbar, start, reused, kind):
    t1 = time.perf_counter()
    import nutpie  # loads ArviZ and its plots: only when a fit samples

    try:
        idata = nutpie.sample(
            compiled,
            chains=chains,
            tune=tune,
            draws=draws,
            seed=seed,
            target_accept=target_accept,
            progress_bar=progressbar,  # nutpie's spelling; ours is PyMC's
            save_warmup=False,
        )
    except RuntimeError as err:  # nutpie's Rust errors carry a backtrace: keep its first line
        first = first_line(err)
        raise SamplingError(
            f"The sampler (nutpie) stopped: {first}. The log density could not be evaluated at the "
            "start; check the outcome for extreme values, or try sampler='pymc' to see where."
        ) from None
    t2 = time.perf_counter()
    durations = {
        "compile_s": round(t1 - start, 3),
        "sample_s": round(t2 - t1, 3),
        "reused_compiled": reused,
        "compiled_with": kind,
    }
    return idata, {"start": start, "durations": durations}
