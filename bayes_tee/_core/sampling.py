"""The one sampler entry point (:func:`sample`) and the compiled-model cache of this process.

Every fit in the package (TEE, judge calibration, paired noise) samples through :func:`sample`:
nutpie by default, PyMC's own NUTS on request. How nutpie gets the log density:

- a likelihood whose numba kernel is also a C callback (the GLMMs: ``density.callback()``) is
  sampled through it on every fit: no Python per gradient and nothing compiled per layout;
- a likelihood written in NumPy (:mod:`bayes_tee._core.density`) is sampled as it is, with
  nothing to compile: the first fit of a layout in a process;
- a layout refitted in the same process (a coverage study, a bootstrap) is compiled once into
  nutpie's numba C callback (about 4x cheaper per evaluation, 10-30 s to compile) and every
  later fit reuses it through ``with_data``; the caller names the layout (a key) and the data
  containers that change;
- anything else compiles the PyMC model into the C callback.

nutpie runs each chain in a thread of its own, so every fit samples with the BLAS libraries
(NumPy's and SciPy's OpenBLAS) held to one thread, as ``pm.sample`` does through its
``blas_cores``: a compiled PyMC model's matrix products otherwise start BLAS threads inside every
chain's thread, and those threads wait for cores the chains hold. On two cores a ``cells`` fit
(20 items, 2 x 1,500 iterations) took 15-17 s and 30-33 s of CPU with OpenBLAS's own threads,
4.7-5.0 s and 9 s with one; ``marginal`` fits and those through a numba kernel's C callback are
unchanged (``benchmarks/bench_blas_threads.py``).
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import xarray as xr
from threadpoolctl import threadpool_limits

from .compile import RAW, compile_callback, compile_density, compile_native, expand_draws
from .density import Density
from .diagnostics import MAX_RHAT, MIN_ESS, check
from .exceptions import ArgumentError, SamplingError, first_line
from .warm import SamplerState, carried, start_points, state_of

if TYPE_CHECKING:
    import pymc as pm

#: Compiled models kept in this process, by layout key.
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 8
#: Layout keys fitted once in this process through their NumPy density.
_SEEN: set[str] = set()
#: A run with checkpoints (:func:`sample`'s ``checkpoints``) stops at the first where every
#: SD and the grand mean have R-hat <= ``MAX_RHAT`` and bulk and tail ESS >= this (the
#: diagnostics' own ESS threshold with half again as margin), and no transition diverged.
STOP_ESS = 1.5 * MIN_ESS
#: Seconds between looks at the chains' progress while waiting for a checkpoint.
_POLL_S = 0.05


def clear_cache() -> None:
    """Forget every compiled model of this process (the next fit of each layout starts afresh)."""
    _COMPILED.clear()
    _SEEN.clear()


def _one_blas_thread(func: Callable) -> Callable:
    """``func`` run with the BLAS libraries held to one thread (module docstring), the limit
    taken when it is called, so that libraries loaded after this module are held too.
    """

    @functools.wraps(func)
    def run(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return run


@_one_blas_thread
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
    checkpoints: tuple[int, ...] = (),
    diagnosed: list[str] | None = None,
    settled: int | None = None,
    warm: SamplerState | None = None,
) -> tuple[xr.DataTree, dict]:
    """Sample ``model`` with nutpie or PyMC: the one sampler entry point of every fit.

    ``model`` is a PyMC model, or a function that builds it (called only when it is needed).
    ``reuse=(layout key, data)`` reuses a compiled model of this process (the key says when two
    models are the same up to the data containers named in ``data``). ``density``, the same
    model as a NumPy log density, is what nutpie samples on a layout's first fit in this process
    (see the module docstring).

    ``checkpoints`` (draws per chain, each below ``draws``; nutpie only): the chains run side
    by side, and at each checkpoint the draws so far are diagnosed; the run stops at the first
    where they pass with margin (:data:`STOP_ESS`), or from ``settled`` draws on where they pass
    the diagnostics' own checks (:data:`MIN_ESS`), and keeps exactly those draws. Each chain's
    draws do not depend on when it is looked at, so a seeded run stops at the same checkpoint
    with the same draws every time. ``diagnosed`` names the draws a checkpoint diagnoses (those
    the fit's own diagnostics will); by default every SD and the grand mean.

    ``warm``, the state of an earlier fit of the same coordinates (:mod:`~bayes_tee._core.warm`),
    starts the chains at its draws and the step-size adaptation at its step when the density is
    sampled through its C callback; the caller has checked it with :func:`~bayes_tee._core.warm.usable`
    first. Such a run records its own state (``durations["state"]``) for the next to start from.

    Returns
    -------
    (xarray.DataTree, dict)
        The draws as nutpie or PyMC return them, and ``{"start": t0, "durations": {...}}``
        (compile and sampling seconds, whether a compiled model was reused and how it was
        compiled, and with checkpoints the draws per chain kept).

    Examples
    --------
    >>> idata, timing = sample(model, "nutpie", 4, 1000, 1000, 0.9, 1, False)  # doctest: +SKIP
    """
    start = time.perf_counter()
    key = reuse[0] if reuse is not None else None
    if sampler == "nutpie" and density is not None and hasattr(density, "callback"):
        # a kernel with a C callback: no Python per gradient, nothing compiled per layout
        compiled = compile_callback(density, None if warm is None else start_points(warm, density))
        step = {} if warm is None else {"initial_step": warm.step_size}
        kept: list[xr.DataTree] = []

        def expand(tree: xr.DataTree) -> xr.DataTree:
            kept[:] = [tree]  # the unconstrained draws last expanded: the run's own state
            return expand_draws(tree, density)

        if checkpoints:
            idata, timing = _run_checkpoints(
                compiled, chains, tune, draws, target_accept, seed, progressbar, start, checkpoints,
                expand, diagnosed, "callback", settled=settled, step=step,
            )  # fmt: skip
        else:
            idata, timing = _run_nutpie(
                compiled, chains, tune, draws, target_accept, seed, progressbar, start, False, "callback",
                step=step,
            )  # fmt: skip
            t = time.perf_counter()
            idata = expand(idata)
            timing["durations"]["expand_s"] = round(time.perf_counter() - t, 3)
        timing["durations"]["warm_start"] = 0.0 if warm is None else round(carried(warm, density), 4)
        timing["durations"]["state"] = state_of(kept[0], density, seed or 0) if kept else None
        return idata, timing
    if sampler == "nutpie" and density is not None and key not in _COMPILED and key not in _SEEN:
        if key is not None:
            _SEEN.add(key)
        compiled = compile_density(density)
        if checkpoints:
            return _run_checkpoints(
                compiled, chains, tune, draws, target_accept, seed, progressbar, start, checkpoints,
                None, diagnosed, "none", settled=settled,
            )  # fmt: skip
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
            return _sample_nutpie(
                model, chains, tune, draws, target_accept, seed, progressbar, reuse, start,
                checkpoints, diagnosed, settled,
            )  # fmt: skip
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


def _sample_nutpie(
    model, chains, tune, draws, target_accept, seed, progressbar, reuse, start, checkpoints, diagnosed,
    settled=None,
):  # fmt: skip
    entry = _COMPILED.get(reuse[0]) if reuse is not None else None
    if entry is not None:
        _COMPILED.move_to_end(reuse[0])
        old_model, compiled, kind = entry
        # the initial-point function reads the cached model's data containers: update them
        # too, so a reused fit starts (and, seeded, ends) exactly as a fresh one would
        import pymc as pm  # a compiled PyMC model is being reused: PyMC is loaded already

        # (a container the model does not have, e.g. the within-cell sums of a design whose
        # cells hold one call each, is not swapped)
        pm.set_data({k: v for k, v in reuse[1].items() if k in old_model.named_vars}, model=old_model)
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
    if checkpoints:
        return _run_checkpoints(
            compiled, chains, tune, draws, target_accept, seed, progressbar, start, checkpoints,
            None, diagnosed, kind, reused, settled,
        )  # fmt: skip
    return _run_nutpie(compiled, chains, tune, draws, target_accept, seed, progressbar, start, reused, kind)


def _run_nutpie(
    compiled, chains, tune, draws, target_accept, seed, progressbar, start, reused, kind, step=None
):  # fmt: skip
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
            **(step or {}),  # a warm start's step size (nutpie's initial_step)
        )
    except RuntimeError as err:
        raise _stopped(err) from None
    return idata, _timing(start, t1, reused, kind)


def _run_checkpoints(
    compiled, chains, tune, draws, target_accept, seed, progressbar, start, checkpoints,
    expand, names, kind, reused=False, settled=None, step=None,
):  # fmt: skip
    """:func:`sample` with checkpoints: nutpie runs every chain at once in the background;
    at each checkpoint the first ``n`` draws of every chain are expanded (``expand``, for a C
    callback's unconstrained draws) and diagnosed (:func:`~bayes_tee._core.diagnostics.check`
    on those of ``names`` they hold, or on the SDs ``sigma_*`` and the grand mean ``mu``), and
    kept when they pass with margin, or from ``settled`` draws on when they pass.
    """
    expand = expand if expand is not None else (lambda tree: tree)
    t1 = time.perf_counter()
    import nutpie  # as in _run_nutpie

    done = [0] * chains

    def on_progress(progress) -> None:  # nutpie's thread: the chains' draws so far, tuning included
        for i, p in enumerate(progress):
            done[i] = p.finished_draws

    try:
        run = nutpie.sample(
            compiled, chains=chains, cores=chains, tune=tune, draws=draws, seed=seed,
            target_accept=target_accept, progress_bar=progressbar, save_warmup=False,
            blocking=False, progress_callback=on_progress, progress_rate=100, **(step or {}),
        )  # fmt: skip
    except RuntimeError as err:
        raise _stopped(err) from None
    kept, looks, idata, finished = draws, [], None, None
    try:
        for n in sorted(c for c in checkpoints if 0 < c < draws):
            while finished is None and min(done) < tune + n and not _finished(run):
                time.sleep(_POLL_S)
            if finished is None and _finished(run):
                # done before this look: the remaining checkpoints are read from the whole run,
                # so what is kept never depends on how fast the chains ran
                finished = run.wait()
            if finished is None:
                run.pause()  # the look needs the cores the chains would run on
            so_far = (finished if finished is not None else run.inspect()).isel(draw=slice(0, n))
            while finished is None and not _complete(so_far, n):  # progress ran ahead of the trace
                run.resume()
                time.sleep(_POLL_S)
                run.pause()
                so_far = run.inspect().isel(draw=slice(0, n))
            part = expand(so_far)
            diag = check(part, _diagnosed(part, names))
            least = min(diag["min_ess_bulk"], diag["min_ess_tail"])
            looks.append({"draws": n, "max_rhat": round(diag["max_rhat"], 4), "min_ess": round(least, 1)})
            need = MIN_ESS if settled is not None and n >= settled else STOP_ESS
            if diag["max_rhat"] <= MAX_RHAT and least >= need and not diag["divergences"]:
                if finished is None:
                    run.cancel()
                idata, kept = part, n
                break
            if finished is None:
                run.resume()
        if idata is None:
            idata = expand(finished if finished is not None else run.wait())
    except RuntimeError as err:
        raise _stopped(err) from None
    return idata, _timing(start, t1, reused, kind, draws_kept=kept, checkpoints=looks)


def _diagnosed(tree: xr.DataTree, names: list[str] | None) -> list[str]:
    """The draws a checkpoint diagnoses: those of ``names`` that ``tree`` holds (a fixed
    residual added after sampling is not among them), or every SD and the grand mean.
    """
    held = [str(v) for v in tree["posterior"].data_vars]
    if names is None:
        return [v for v in held if v.startswith("sigma_") or v == "mu"]
    return [v for v in names if v in held]


def _timing(start: float, t1: float, reused: bool, kind: str, **more) -> dict:
    """What a run records of itself: compile and sampling seconds (``t1``: sampling started),
    whether a compiled model was reused and how it was compiled, and ``more``.
    """
    durations = {
        "compile_s": round(t1 - start, 3),
        "sample_s": round(time.perf_counter() - t1, 3),
        "reused_compiled": reused,
        "compiled_with": kind,
    }
    return {"start": start, "durations": durations | more}


def _complete(tree: xr.DataTree, n: int) -> bool:
    """Whether every chain of ``tree`` holds ``n`` draws (a chain behind the others is padded
    with NaN).
    """
    post = tree["posterior"]
    raw = post[RAW] if RAW in post else post[next(iter(post.data_vars))]
    return raw.sizes["draw"] == n and not bool(raw.isnull().any())


def _finished(run) -> bool:
    """Whether nutpie's background run has finished (its ``is_finished`` raises
    ``TimeoutError`` while it runs).
    """
    try:
        return bool(run.is_finished)
    except TimeoutError:
        return False


def _stopped(err: RuntimeError) -> SamplingError:
    """The error to raise when nutpie stops: the first line of its Rust error (which carries a
    backtrace), and what to try.
    """
    return SamplingError(
        f"The sampler (nutpie) stopped: {first_line(err)}. The log density could not be evaluated at the "
        "start; check the outcome for extreme values, or try sampler='pymc' to see where."
    )
