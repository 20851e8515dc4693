"""Compile the likelihood kernels once per machine, at install: ``bayes-tee warmup``.

The strata, blocks, collapsed, GLMM and ordinal likelihoods are numba kernels, called by nutpie as C
callbacks and cached on disk (``__pycache__`` beside the package, or ``NUMBA_CACHE_DIR``). The
first fit of each on a machine with an empty cache compiles it: on the 2-core reference machine,
in a fresh process with its imports, about 13 s for a balanced Gaussian fit, 16 s with calls lost
(``blocks``), 10 s with covariates (``collapsed``) and 19-21 s for a binomial or an ordinal fit,
against 3.5-4.2 s once the cache is warm (``benchmarks/bench_startup.py --cold``, 2026-12-07).
:func:`warm_up` fits one tiny design through every kernel layout (few draws, results thrown
away) so that the first real fit reads the cache. ``bayes-tee warmup --ship`` compiles the same
kernels for numba's generic CPU into the package itself
(:mod:`~bayes_tee.likelihoods.kernels.precompiled`), so that a wheel built afterwards ships them:
there the first fit of every kernel family on a new machine (same platform, Python and numba)
loads its kernels with nothing to compile, about as fast as a warm fit (4.8-5.4 s against
4.5-5.2 s in a fresh process, imports included; 10-27 s compiling). ``make venv`` runs it and,
beside it, ``bayes-tee warmup --layouts marginal cells`` (the PyMC layouts below).
Elsewhere a ``pip install`` user runs ``bayes-tee warmup`` once (or pays the compile in their
first fit of each family).

Fits through the PyMC model (``marginal``, ``cells``, ``rows``, GLMM fits with covariates) compile
their own C callbacks per model graph (:mod:`bayes_tee._core.native`): a graph compiled before
on the machine loads in 2-3 s, a new one compiles. The warm-up fits one ``marginal`` and one
``cells`` model, which fills PyTensor's cache of the operations every such graph is made of:
the first ``marginal`` fit of a new design then compiles in 45-60 s instead of about 105 s,
and a ``cells`` fit in 17-21 s instead of 29-43 s. The whole warm-up took 37-43 s with numba's
cache empty (two processes; about 125 s with PyTensor's empty too, measured before the kernels'
callbacks read their arguments in one intrinsic).

>>> seconds = warm_up(["binomial"], jobs=1)  # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, DesignWarning, DiagnosticWarning
from ..likelihoods.kernels import precompiled
from ..studies.bias_designs import bias_dgp
from ..studies.dgp import systems_dgp, tee_dgp
from ..studies.verdicts_dgp import PAIRWISE_ROLES, pairwise_battles
from ..tee.fit import fit_posterior

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate")  # fmt: skip
SYSTEM_ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")
#: Few draws: the kernels compile on their first call, whatever the run's length.
SHORT = dict(draws=10, tune=10, chains=1, random_seed=1, progressbar=False)


def _pilot(loss: float = 0.0, **kw) -> pd.DataFrame:
    df = tee_dgp(n_items=8, n_prompts=2, n_judges=3, n_temperatures=2, n_replicates=2, random_seed=4, **kw)
    return df[np.random.default_rng(5).random(len(df)) >= loss]


def _systems(loss: float = 0.0, outcome: str = "gaussian") -> pd.DataFrame:
    df = systems_dgp(n_systems=3, n_items=8, n_replicates=2, outcome=outcome, random_seed=4)
    return df[np.random.default_rng(5).random(len(df)) >= loss]


#: One tiny fit per kernel layout (each compiles its own kernel specialisations). The first
#: :data:`COMPILING` of them compile a kernel or model each, the longest first (two processes
#: finish together); the others only read those from the cache.
LAYOUTS: dict[str, Callable[[], dict]] = {
    "marginal": lambda: dict(data=_pilot(0.05), **ROLES, method="marginal"),
    "ordinal": lambda: dict(data=_pilot(outcome="ordinal"), **ROLES, family="ordinal"),
    "balanced": lambda: dict(data=_pilot(), **ROLES),
    "blocks": lambda: dict(data=_pilot(0.05), **ROLES),
    "binomial": lambda: dict(data=_pilot(outcome="bernoulli"), **ROLES, family="binomial"),
    "collapsed": lambda: dict(
        data=bias_dgp(n_items=8, n_replicates=2, random_seed=4),
        system="model",
        formula="score ~ model + judge + length + (1|item) + (1|item:model:judge)",
    ),  # fmt: skip
    "cells": lambda: dict(data=_pilot(0.05), **ROLES, method="cells"),
    "augmented": lambda: dict(data=_pilot(0.05), **ROLES, method="augmented"),
    # the same kernels as above, read from the cache
    "categories": lambda: dict(data=_pilot(n_categories=3), **ROLES, category="category"),
    "blocks, unequal categories": lambda: dict(
        data=_pilot(0.05, n_categories=3), **ROLES, category="category"
    ),
    "binomial systems": lambda: dict(data=_systems(outcome="logit"), **SYSTEM_ROLES, family="binomial"),
    "ordinal, judge cutpoints": lambda: dict(
        data=_pilot(0.05, outcome="ordinal"), **ROLES, family="ordinal", thresholds="judge"
    ),
    "ordinal probit, judge spreads": lambda: dict(
        data=_pilot(0.05, outcome="ordinal"), **ROLES, family="ordinal_probit", spread="judge"
    ),
    "ordinal systems": lambda: dict(data=_systems(0.05, outcome="ordinal"), **SYSTEM_ROLES, family="ordinal"),
    "random judges": lambda: dict(data=_pilot(0.05), **ROLES, judge_effect="random"),
    "systems": lambda: dict(data=_systems(), **SYSTEM_ROLES),
    "systems, calls lost": lambda: dict(data=_systems(0.05), **SYSTEM_ROLES),
    "pairwise": lambda: dict(
        data=pairwise_battles(n_items=20, n_prompts=2, n_judges=2, random_seed=3), **PAIRWISE_ROLES
    ),
}

#: How many of :data:`LAYOUTS` compile something of their own. They run before the rest: a
#: layout that reads a kernel another process is still compiling would compile it again
#: (10 s for the ordinal kernel, measured).
COMPILING = 8
#: The layouts that fit through a PyMC model, not a numba kernel: no kernel of theirs ships.
PYMC_LAYOUTS = ("marginal", "cells")


def _warm(name: str) -> tuple[str, float, str]:
    """Fit layout ``name`` once; its seconds and the likelihood it compiled."""
    kw = LAYOUTS[name]()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # ten draws, by design
        warnings.simplefilter("ignore", DesignWarning)
        warnings.simplefilter("ignore", UserWarning)
        post = fit_posterior(kw.pop("data"), **kw, **SHORT)
    return name, time.perf_counter() - t, post.method


def warm_up(layouts: Sequence[str] | None = None, jobs: int = 2, ship: bool = False) -> pd.DataFrame:
    """Compile every kernel layout's likelihood into the on-disk cache (module docstring).

    Parameters
    ----------
    layouts : sequence of str, optional
        Names in :data:`LAYOUTS` (default: all; with ``ship``, all but :data:`PYMC_LAYOUTS`).
    jobs : int
        Processes that compile in parallel (numba compiles on one core each).
    ship : bool
        Compile the kernels for numba's generic CPU into the package's shipped set instead
        (:mod:`~bayes_tee.likelihoods.kernels.precompiled`; emptied first), in new processes; for
        building the package, from a writable source tree.

    Returns
    -------
    pandas.DataFrame
        ``layout, method, seconds`` per fit (a layout whose kernel was cached already takes
        about a second).

    Examples
    --------
    >>> import bayes_tee as bt
    >>> bt.cli.warmup.warm_up(["binomial"], jobs=1)["method"].tolist()  # doctest: +SKIP
    ['binomial']
    """
    default = [n for n in LAYOUTS if not (ship and n in PYMC_LAYOUTS)]
    names = default if layouts is None else list(layouts)
    unknown = [n for n in names if n not in LAYOUTS]
    if unknown:
        raise ArgumentError(f"Unknown warm-up layout(s) {unknown}; choose from {list(LAYOUTS)}.")
    if jobs < 1:
        raise ArgumentError(f"jobs must be at least 1, got {jobs}.")
    if ship:
        rows = _ship(names, jobs)
    elif jobs == 1:
        rows = [_warm(n) for n in names]
    else:
        rows = _pooled(names, jobs)
    return pd.DataFrame(rows, columns=["layout", "seconds", "method"])[["layout", "method", "seconds"]]


def _pooled(names: list[str], jobs: int) -> list[tuple[str, float, str]]:
    """:func:`_warm` of ``names`` in ``jobs`` new processes (they inherit this one's environment)."""
    first = set(list(LAYOUTS)[:COMPILING])
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        # the compiling layouts first, all of them done before any layout that reads their cache
        rows = list(pool.map(_warm, [n for n in names if n in first]))
        rows += list(pool.map(_warm, [n for n in names if n not in first]))
    return rows


def _ship(names: list[str], jobs: int) -> list[tuple[str, float, str]]:
    """The shipped set compiled anew by fitting ``names`` in new processes."""
    shipped = [n for n in names if n in PYMC_LAYOUTS]
    if shipped:
        raise ArgumentError(f"{shipped} fit through a PyMC model: no kernel of theirs ships.")
    if not os.access(precompiled.SHIPPED.parent, os.W_OK):
        raise ArgumentError(
            f"--ship writes into the package ({precompiled.SHIPPED}), which is not writable here: "
            "run it from a source checkout (make venv does), or `bayes-tee warmup` to fill your own cache."
        )
    shutil.rmtree(precompiled.SHIPPED, ignore_errors=True)
    building = {"NUMBA_CPU_NAME": precompiled.CPU, precompiled.BUILD_ENV: "1"}
    saved = {k: os.environ.get(k) for k in building}
    os.environ.update(building)  # the workers inherit it
    try:
        return _pooled(names, jobs)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k)
            else:
                os.environ[k] = v
