"""``fit_posterior(df, ...)``: the front door.

Validates the design, picks the fastest exact likelihood (the balanced-strata shortcut when
every cell is present with equal replicates, the exact marginal model with every random effect
integrated out otherwise, sampled random effects only when that is too costly), samples with
nutpie, and returns a :class:`~bayes_tee.posterior.Posterior` whose summaries carry a visible
warning when the diagnostics fail.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
...                         temperature="temperature", replicate="replicate",
...                         category="category", random_seed=1)  # doctest: +SKIP
>>> post.shares()  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections import OrderedDict
from typing import Literal

import numpy as np
import nutpie
import pandas as pd
import pymc as pm
import xarray as xr

from . import diagnostics as diag
from .design import Design, validate_design
from .augment import MAX_LATENT_SHARE, augment_layout
from .compile import compile_cached, compile_native
from .model import LOGISTIC_VARIANCE, balanced_data, binomial_centering, binomial_data, build_model, marginal_cost
from .posterior import Posterior
from .priors import PriorSpec, get_prior
from .trees import draws_tree


#: Above this many floating-point operations per log-density evaluation the marginal model is
#: slower than sampling the random effects (measured: ~1e6 flops run in ~0.3 ms here).
MAX_MARGINAL_FLOPS = 5e7

#: Likelihoods with a handful of parameters and a log density that costs microseconds: compiled
#: through PyTensor's disk cache, so a new process on the same layout skips the numba compile
#: (benchmarks/bench_compile.py); the others use nutpie's GIL-free C callback.
DISK_CACHED_METHODS = frozenset({"balanced"})

#: Compiled balanced models kept in this process, by layout (see :func:`layout_key`).
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 8


def layout_key(design: Design, spec: PriorSpec, method: str, extra: object = None) -> str:
    """A key that is equal for two fits whose compiled model is the same up to score data.

    Covers the method, terms, level labels, categories, replicate count and priors, so a
    refit of new scores on the same layout (a coverage study, a bootstrap) reuses the
    compiled model through its data containers.
    """
    cells = design.cells
    parts = {
        "method": method,
        "terms": [(t.label, t.facets, t.kind) for t in design.terms],
        "levels": {k: list(v) for k, v in design.levels.items()},
        "categories": list(design.categories or ()),
        "item_category": None if design.item_category is None else design.item_category.tolist(),
        "n": cells["n"].tolist(),
        "codes": hashlib.sha1(np.ascontiguousarray(cells[list(design.facets)].to_numpy()).tobytes()).hexdigest(),
        "priors": spec.to_dict(),
        "family": design.family,
        "overdispersion": design.overdispersion,
        "extra": extra,
    }
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def choose_method(design: Design) -> str:
    """The fastest exact likelihood for a design: ``balanced``, ``augmented``, ``marginal`` or
    ``cells``.

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


def fit_posterior(
    df: pd.DataFrame,
    outcome: str,
    item: str,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    *,
    position: str | None = None,
    swapped: object = None,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: Literal["gaussian", "binomial"] = "gaussian",
    overdispersion: bool | None = None,
    priors: str | PriorSpec | dict | None = None,
    method: Literal["auto", "balanced", "augmented", "marginal", "cells", "rows", "binomial"] = "auto",
    chains: int = 4,
    tune: int = 1000,
    draws: int = 1000,
    target_accept: float | None = None,
    sampler: Literal["nutpie", "pymc"] = "nutpie",
    random_seed: int | None = None,
    progressbar: bool = True,
) -> Posterior:
    """Fit the Bayesian TEE model to long evaluation data.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per scored call.
    outcome, item : str
        Score column and item column (required).
    prompt, judge, temperature, replicate, category : str, optional
        Facet columns; the model uses only the facets present.
    position : str, optional
        Pairwise data: the presentation-order column, a fixed factor whose sensitivity index is
        the squared order bias (seed 000 App. H); shares, D-studies (``n_positions``) and the
        gaming surface include it. The outcome may hold verdict labels (A / B / tie).
    swapped : optional
        The ``position`` level whose verdicts are in the swapped slot frame: those rows are
        recoded to "the pair's first system wins" (seed 000 App. R ``true_order``; ties 0.5).
    judge_effect : {"fixed", "random"}
        Judges as a fixed panel (sensitivity index, the paper's default) or a random facet.
    family : {"gaussian", "binomial"}
        ``gaussian`` (default, seed 000's linear probability model for 0/1 scores) or
        ``binomial``: the logit GLMM for 0/1 outcomes, components on the logit scale with the
        logistic residual pi^2/3 (``theta()`` and ``shares(scale="probability")`` answer on
        the probability scale).
    overdispersion : bool, optional
        Binomial: include the cell-level (observation-level) random effect; default on when
        cells repeat.
    priors : str, PriorSpec or dict, optional
        A preset name from :data:`bayes_tee.priors.PRESETS` or a spec; default half-t(3).
    method : {"auto", "balanced", "augmented", "marginal", "cells", "rows"}
        Likelihood form (:func:`bayes_tee.model.build_model`); ``auto`` takes ``balanced``
        when the design is balanced, else ``augmented`` (the balanced likelihood with the
        missing calls, cells or items as latent values) when at most a fifth of the completed
        cells is incomplete, else ``marginal`` (every random effect integrated out exactly)
        unless its per-evaluation cost is large, else ``cells`` (``rows`` is the slow textbook
        form, for benchmarks).
    chains, tune, draws : int
        Sampler settings.
    target_accept : float, optional
        NUTS target acceptance rate; default 0.9, and 0.95 for the GLMM (sampled random
        effects, measured: fewer divergences and twice the ESS on the propaganda pilot).
    sampler : {"nutpie", "pymc"}
        nutpie (compiled, fastest) or PyMC's own NUTS.
    random_seed : int, optional
        Same seed, same draws.
    progressbar : bool
        Show sampling progress.

    Returns
    -------
    Posterior

    Examples
    --------
    >>> post = fit_posterior(df, outcome="score", item="item", prompt="prompt",
    ...                      random_seed=1)  # doctest: +SKIP
    >>> post.diagnostics()["ok"]  # doctest: +SKIP
    True
    """
    design = validate_design(
        df,
        outcome=outcome,
        item=item,
        prompt=prompt,
        judge=judge,
        temperature=temperature,
        replicate=replicate,
        category=category,
        position=position,
        swapped=swapped,
        judge_effect=judge_effect,
        family=family,
        overdispersion=overdispersion,
        warn=True,
    )
    spec = get_prior(priors)
    if method == "auto":
        method = choose_method(design)
    if design.family == "binomial" and method not in ("binomial", "rows"):
        raise ValueError(f"family='binomial' fits the GLMM (method='auto' or 'binomial', or 'rows' for the "
                         f"per-call benchmark baseline), not method={method!r}.")
    if target_accept is None:
        target_accept = 0.95 if design.family == "binomial" else 0.9
    seed = int(np.random.default_rng().integers(2**31)) if random_seed is None else int(random_seed)
    t0 = time.perf_counter()
    model = build_model(design, spec, method=method)
    if method == "balanced":
        reuse = (layout_key(design, spec, method), balanced_data(design))
    elif method == "binomial":
        reuse = (layout_key(design, spec, method, binomial_centering(design)), binomial_data(design))
    else:
        reuse = None
    idata, timing = _sample(model, sampler, chains, tune, draws, target_accept, seed, progressbar, reuse,
                            cached=method in DISK_CACHED_METHODS)
    posterior = idata["posterior"].to_dataset()
    posterior = posterior[[v for v in posterior.data_vars if not str(v).endswith("__")]]
    if design.family == "binomial":  # the logistic residual, fixed: a constant "draw"
        posterior["sigma_replicate"] = xr.full_like(posterior["mu"], np.sqrt(LOGISTIC_VARIANCE))
    idata = draws_tree(posterior, idata)
    info = {
        "sampler": sampler,
        "chains": chains,
        "tune": tune,
        "draws": draws,
        "target_accept": target_accept,
        "random_seed": seed,
        "build_s": round(timing["start"] - t0, 3),
        **timing["durations"],
        "n_free_parameters": int(sum(np.size(v) for v in model.initial_point().values())),
    }
    post = Posterior(idata, design, spec, method, info)
    diag.warn_if_failed(post.diagnostics(), stacklevel=2)
    return post


def _sample(model, sampler, chains, tune, draws, target_accept, seed, progressbar, reuse=None, cached=False):
    """Sample ``model`` with nutpie or PyMC.

    ``reuse=(layout key, data)`` reuses a compiled model of this process; ``cached=True``
    compiles a new layout through PyTensor's disk cache (:mod:`bayes_tee.compile`).
    """
    start = time.perf_counter()
    if sampler == "nutpie":
        with warnings.catch_warnings():
            # numba's hint that np.dot is faster on contiguous arrays, raised while compiling
            # the Woodbury terms on a cold cache: a compiler note, not a user problem
            warnings.filterwarnings("ignore", category=_numba_performance_warning())
            return _sample_nutpie(model, chains, tune, draws, target_accept, seed, progressbar, reuse, start,
                                  cached)
    if sampler == "pymc":
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
        return idata, {"start": start, "durations": {"compile_s": None, "sample_s": round(t2 - start, 3),
                                               "reused_compiled": False}}
    raise ValueError(f"sampler must be 'nutpie' or 'pymc', got {sampler!r}.")


def _numba_performance_warning() -> type[Warning]:
    try:
        from numba.core.errors import NumbaPerformanceWarning
    except ImportError:  # numba is nutpie's dependency; stay importable without it
        return RuntimeWarning
    return NumbaPerformanceWarning


def _sample_nutpie(model, chains, tune, draws, target_accept, seed, progressbar, reuse, start, cached):
    entry = _COMPILED.get(reuse[0]) if reuse is not None else None
    if entry is not None and entry[2] == "native":
        _COMPILED.move_to_end(reuse[0])
        old_model, compiled, kind = entry
        # the initial-point function reads the cached model's data containers: update them
        # too, so a reused fit starts (and, seeded, ends) exactly as a fresh one would
        pm.set_data(reuse[1], model=old_model)
        # data the compiled functions never read (e.g. a prior of another mode) are not theirs;
        # nutpie keys its shared data by a uuid and names them through shared_var_keys
        names = {var.name for var in compiled.shared_var_keys}
        compiled = compiled.with_data(**{k: v for k, v in reuse[1].items() if k in names})
        reused = True
    else:
        # the first fit of a layout in this process compiles through the disk cache when the
        # likelihood allows; a layout refitted in the same process (a study, a bootstrap) gets
        # nutpie's C callback, compiled once, which samples each refit about 4x faster
        reused = False
        kind = "cached" if cached and entry is None else "native"
        compiled = compile_cached(model) if kind == "cached" else compile_native(model)
        if reuse is not None:
            _COMPILED[reuse[0]] = (model, compiled, kind)
            _COMPILED.move_to_end(reuse[0])
            while len(_COMPILED) > _COMPILED_MAX:
                _COMPILED.popitem(last=False)
    t1 = time.perf_counter()
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
    t2 = time.perf_counter()
    durations = {"compile_s": round(t1 - start, 3), "sample_s": round(t2 - t1, 3), "reused_compiled": reused,
                 "compiled_with": kind}
    return idata, {"start": start, "durations": durations}
