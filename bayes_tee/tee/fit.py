"""``fit_posterior(df, ...)``: the front door.

Validates the design, picks the fastest exact likelihood (the balanced-strata shortcut when
every cell is present with equal replicates, the exact marginal model with every random effect
integrated out otherwise, sampled random effects only when that is too costly), samples with
nutpie, and returns a :class:`~bayes_tee.posterior.facade.Posterior` whose summaries carry a visible
warning when the diagnostics fail.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
...                         temperature="temperature", replicate="replicate",
...                         category="category", random_seed=1)  # doctest: +SKIP
>>> post.shares()  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import warnings
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from .._core import diagnostics as diag
from .._core.exceptions import DesignError, DesignWarning
from .._core.priors import PriorSpec, get_prior
from .._core.sampling import sample
from .._core.trees import draws_tree
from ..design.formula import parse_formula
from ..design.from_formula import validate_formula
from ..design.out_of_core import is_out_of_core, validate_dask
from ..design.roles import Design, validate_design
from ..likelihoods import build_model, choose_method, get_likelihood, method_note
from ..posterior.facade import Posterior

#: Default tuning steps and draws per chain.
TUNE, DRAWS = 1000, 1000
#: The GLMM's defaults. Its tuning is short (nutpie adapts within 500 steps there, and the early
#: trees are the deepest, so tuning is the costly part) and its draws many: near separation its
#: global logit SDs have an ESS of 5-6% of the draws (Messing (2026)'s safety data: at 2000
#: draws per chain the least had 386; at 3000 every ESS passed 400 but one seed's R-hat of
#: sigma_item was 1.012, the chance level at that ESS; at 4000 both seeds pass every check).
GLMM_TUNE, GLMM_DRAWS = 500, 4000


def standardize(design: Design) -> tuple[Design, float, float]:
    """The design with its scores standardised (mean 0, SD 1), and the location and scale.

    Every prior is relative to the outcome's mean and SD, so the model on standardised scores is
    the same model; sampling it keeps the sampler's arithmetic near unit scale whatever the
    user's units (scores times 1e12 otherwise overflow the sums of squares and the step size).
    The GLMM's 0/1 outcomes are left as they are.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> std, loc, scale = standardize(d)
    >>> std.y_mean, std.y_sd, loc == d.y_mean
    (0.0, 1.0, True)
    """
    if design.family == "binomial" or not (np.isfinite(design.y_sd) and design.y_sd > 0):
        return design, 0.0, 1.0
    loc, scale = float(design.y_mean), float(design.y_sd)
    cells = design.cells.assign(mean=(design.cells["mean"] - loc) / scale, ss=design.cells["ss"] / scale**2)
    row_y = None if design.row_y is None else (design.row_y - loc) / scale
    return dataclasses.replace(design, cells=cells, y_mean=0.0, y_sd=1.0, row_y=row_y), loc, scale


def unstandardize(posterior: xr.Dataset, loc: float, scale: float) -> xr.Dataset:
    """Draws of a fit to standardised scores on the user's scale: SDs, fixed and centred random
    effects times ``scale``, the grand mean ``mu * scale + loc``; standard-normal (non-centred)
    coordinates stay as they are.
    """
    out = posterior.copy()
    for name in out.data_vars:
        v = str(name)
        if v == "mu":
            out[v] = out[v] * scale + loc
        elif v.startswith(("sigma_", "re_")) or v.endswith("_effect"):
            out[v] = out[v] * scale
    return out


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
        "codes": hashlib.sha1(
            np.ascontiguousarray(cells[list(design.facets)].to_numpy()).tobytes()
        ).hexdigest(),
        "priors": spec.to_dict(),
        "family": design.family,
        "overdispersion": design.overdispersion,
        "extra": extra,
    }
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _formula_design(df, formula, outcome, item, prompt, judge, temperature, category, family) -> Design:
    """The design of a ``formula=`` fit; a role argument that contradicts the formula is refused."""
    if is_out_of_core(df):
        raise DesignError(
            "formula= needs a pandas DataFrame; read parquet or dask data with .compute() first."
        )
    lhs = parse_formula(formula).outcome
    if outcome is not None and outcome != lhs:
        raise DesignError(f"outcome={outcome!r} but the formula's outcome is {lhs!r}; give one of the two.")
    return validate_formula(
        df, formula, item=item, prompt=prompt, judge=judge, temperature=temperature, category=category,
        family=family, warn=False,
    )  # fmt: skip


def fit_posterior(
    df: pd.DataFrame,
    outcome: str | None = None,
    item: str | None = None,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    *,
    formula: str | None = None,
    position: str | None = None,
    swapped: object = None,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: Literal["gaussian", "binomial"] = "gaussian",
    overdispersion: bool | None = None,
    priors: str | PriorSpec | dict | None = None,
    method: Literal[
        "auto", "balanced", "augmented", "marginal", "cells", "rows", "binomial", "binomial_quadrature"
    ] = "auto",
    chains: int = 4,
    tune: int | None = None,
    draws: int | None = None,
    target_accept: float | None = None,
    sampler: Literal["nutpie", "pymc"] = "nutpie",
    random_seed: int | None = None,
    progressbar: bool = True,
) -> Posterior:
    """Fit the Bayesian TEE model to long evaluation data.

    Parameters
    ----------
    df : pandas.DataFrame, dask.dataframe.DataFrame or path
        One row per scored call. A dask DataFrame or a path to parquet data (a file or a
        dataset directory) is reduced to per-cell statistics with dask, never holding the rows
        in memory (:mod:`bayes_tee.design.out_of_core`; needs ``bayes_tee[dask]``).
    outcome, item : str, optional
        Score column and item column; required unless ``df`` comes from a log reader
        (:func:`bayes_tee.read_inspect`, :func:`~bayes_tee.read_promptfoo`,
        :func:`~bayes_tee.read_lm_eval`), whose frame carries its columns' roles.
    prompt, judge, temperature, replicate, category : str, optional
        Facet columns; the model uses only the facets present.
    formula : str, optional
        Any design as an lme4-style formula of fixed factors and random intercepts,
        ``"score ~ judge + (1|item) + (1|prompt) + (1|item:prompt)"`` (``(1|a:b)`` crossed,
        ``(1|a/b)`` nested; the residual implied; :mod:`bayes_tee.design.from_formula`). It
        replaces the TEE formula the roles write (``post.formula`` shows that one); role
        arguments then only say which column plays which role (``item=``, ``judge=``...).
        Gaussian family only.
    position : str, optional
        Pairwise data: the presentation-order column, a fixed factor whose sensitivity index is
        the squared order bias (Messing 2026 App. H); shares, D-studies (``n_positions``) and the
        gaming surface include it. The outcome may hold verdict labels (A / B / tie).
    swapped : optional
        The ``position`` level whose verdicts are in the swapped slot frame: those rows are
        recoded to "the pair's first system wins" (Messing 2026 App. R ``true_order``; ties 0.5).
    judge_effect : {"fixed", "random"}
        Judges as a fixed panel (sensitivity index, the paper's default) or a random facet.
    family : {"gaussian", "binomial"}
        ``gaussian`` (default, Messing (2026)'s linear probability model for 0/1 scores) or
        ``binomial``: the logit GLMM for 0/1 outcomes, components on the logit scale with the
        logistic residual pi^2/3 (``theta()`` and ``shares(scale="probability")`` answer on
        the probability scale).
    overdispersion : bool, optional
        Binomial: include the cell-level (observation-level) random effect; default on when
        cells repeat.
    priors : str, PriorSpec or dict, optional
        A preset name from :data:`bayes_tee._core.priors.PRESETS` or a spec; default half-t(3).
    method : {"auto", "balanced", "augmented", "marginal", "cells", "rows", "binomial", "binomial_quadrature"}
        Likelihood form (:func:`bayes_tee.likelihoods.build_model`); ``auto`` takes ``balanced``
        when the design is balanced, else ``augmented`` (the balanced likelihood with the
        missing calls, cells or items as latent values) when at most
        :data:`~bayes_tee.likelihoods.augment.MAX_LATENT_SHARE` of the completed cells are short, else
        ``marginal`` (every random effect integrated out exactly) unless its per-evaluation
        cost is large, else ``cells`` (``rows`` is the slow textbook form, for benchmarks).
        ``balanced`` and ``augmented`` compile nothing per layout
        (:mod:`bayes_tee.likelihoods.strata_density`). The GLMM (``family="binomial"``)
        is ``binomial`` (every effect sampled, the cell effect non-centred) or
        ``binomial_quadrature`` (the cell effect integrated out by adaptive Gauss-Hermite
        quadrature: exact and funnel-free whatever the calls per cell, about 10x the cost per
        evaluation at 8 calls per cell); neither compiles anything per layout
        (:mod:`bayes_tee.likelihoods.binomial_density`).
    chains : int
        Chains (4).
    tune, draws : int, optional
        Tuning steps and draws per chain: 1000 each by default; the GLMM's are 500 and 4000
        (:data:`GLMM_TUNE`, :data:`GLMM_DRAWS`: its logit SDs mix slowly near separation, and
        nutpie needs no more tuning there).
    target_accept : float, optional
        NUTS target acceptance rate; default 0.9, and 0.95 for the GLMM (sampled random
        effects, measured: fewer divergences and twice the ESS on the propaganda pilot).
    sampler : {"nutpie", "pymc"}
        nutpie (fastest) or PyMC's own NUTS (on the PyMC model, compiled by PyTensor).
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
    if formula is not None:
        if position is not None or replicate is not None:
            raise DesignError(
                "formula= takes no position= or replicate=: the rows of a cell of the formula's facets "
                "are its replicates; write any other facet into the formula as a term."
            )
        design = _formula_design(df, formula, outcome, item, prompt, judge, temperature, category, family)
    elif is_out_of_core(df):
        if outcome is None or item is None:
            raise DesignError("outcome= and item= are required for parquet or dask data.")
        if position is not None or swapped is not None:
            raise DesignError(
                "position=/swapped= (pairwise verdict labels) need a pandas DataFrame; recode the "
                "verdicts to 0/0.5/1 scores first (bt.pairwise.recode) to fit parquet or dask data."
            )
        design = validate_dask(
            df,
            outcome=outcome,
            item=item,
            prompt=prompt,
            judge=judge,
            temperature=temperature,
            replicate=replicate,
            category=category,
            judge_effect=judge_effect,
            family=family,
            overdispersion=overdispersion,
        )
    else:
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
            warn=False,
        )
    if not is_out_of_core(df):
        for note in design.notes:  # said here, so the warning points at the user's call
            warnings.warn(note, DesignWarning, stacklevel=2)
    spec = get_prior(priors)
    if method == "auto":
        method = choose_method(design)
    lk = get_likelihood(method, design)
    glmm = design.family == "binomial"
    if target_accept is None:
        # sampled logit effects: fewer divergences and twice the ESS at 0.95 on the propaganda pilot
        target_accept = 0.95 if glmm else 0.9
    draws = (GLMM_DRAWS if glmm else DRAWS) if draws is None else int(draws)
    tune = (GLMM_TUNE if glmm else TUNE) if tune is None else int(tune)
    seed = int(np.random.default_rng().integers(2**31)) if random_seed is None else int(random_seed)
    t0 = time.perf_counter()
    # the likelihood sees standardised scores; the draws are put back on the user's scale below
    std, loc, scale = standardize(design)
    # nutpie samples a likelihood written in NumPy without compiling; the PyMC model is built
    # only when a sampler needs it (sampling.sample)
    density = lk.density(std, spec) if lk.density is not None and sampler == "nutpie" else None
    built: list = []

    def model():
        if not built:
            built.append(build_model(std, spec, method=method))
        return built[0]

    reuse = None
    if lk.data is not None:
        reuse = (layout_key(std, spec, method, lk.key(std) if lk.key else None), lk.data(std))
    idata, timing = sample(
        model, sampler, chains, tune, draws, target_accept, seed, progressbar, reuse, density=density
    )
    posterior = idata["posterior"].to_dataset()
    posterior = posterior[[v for v in posterior.data_vars if not str(v).endswith("__")]]
    posterior = unstandardize(posterior, loc, scale)
    if lk.postprocess is not None:
        posterior = lk.postprocess(posterior)
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
        "n_free_parameters": (
            int(sum(np.size(v) for v in built[0].initial_point().values())) if built else density.layout.ndim
        ),
        "standardized": {"location": loc, "scale": scale},
        "method_note": method_note(design, method),
    }
    post = Posterior(idata, design, spec, method, info)
    diag.warn_if_failed(post.diagnostics(), stacklevel=2)
    return post
