"""``fit_posterior(df, ...)``: the front door, as named stages.

lme4's ``lmer`` is four stages (``lFormula -> mkLmerDevfun -> optimizeLmer -> mkMerMod``); so is
this: :func:`~bayes_tee.design.build.build_design` (data -> validated design), the family
(:func:`~bayes_tee.families.get_family`), :func:`choose_likelihood` (the fastest exact
likelihood for the layout), :func:`sample_posterior` (the draws on the user's scale) and
:func:`make_posterior` (the :class:`~bayes_tee.posterior.facade.Posterior`, whose summaries carry
a visible warning when the diagnostics fail). Each stage can be called and tested alone.

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
import time
import warnings
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from .._core import diagnostics as diag
from .._core.exceptions import ArgumentError, DesignWarning
from .._core.priors import PriorSpec, get_prior
from .._core.sampling import sample
from .._core.trees import draws_tree
from .._core.warm import SamplerState, usable
from ..design.build import build_design
from ..design.design import Design
from ..families import Family, get_family
from ..families.binomial import DRAWS as GLMM_DRAWS
from ..families.binomial import TUNE as GLMM_TUNE
from ..families.gaussian import DRAWS, TUNE
from ..likelihoods import Likelihood, build_model, choose_method, get_likelihood, method_note
from ..likelihoods.registry import GLMM_COORDINATES
from ..posterior.facade import Posterior, posterior_for
from ..posterior.fit import Fit, convergence_vars

__all__ = [
    "DRAWS",
    "EXTEND",
    "GLMM_DRAWS",
    "GLMM_TUNE",
    "TUNE",
    "Settings",
    "choose_likelihood",
    "fit_posterior",
    "layout_key",
    "make_posterior",
    "sample_posterior",
    "sampler_settings",
    "standardize",
    "unstandardize",
]


def standardize(design: Design, spec: PriorSpec | None = None) -> tuple[Design, float, float]:
    """The design with its scores on the scale the sampler sees, and the location and scale
    (the family's :meth:`~bayes_tee.families.base.Family.standardize`: Gaussian scores are
    standardised to mean 0 and SD 1, the GLMM's 0/1 outcomes left as they are).

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> std, loc, scale = standardize(d)
    >>> std.y_mean, std.y_sd, loc == d.y_mean
    (0.0, 1.0, True)
    """
    return get_family(design.family).standardize(design, None if spec is None else spec.reference)


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
        elif v.startswith(("sigma_", "re_", "beta_")) or v.endswith("_effect"):
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
        "scale_use": (design.thresholds, design.spread),
        "extra": extra,
    }
    if design.covariates is not None:  # their values are data containers (covariate_data)
        parts["covariates"] = design.covariates.structure
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Settings:
    """How to sample: the sampler, its tuning and draws per chain, and the seed."""

    sampler: Literal["nutpie", "pymc"]
    chains: int
    tune: int
    draws: int
    target_accept: float
    random_seed: int
    progressbar: bool
    #: Draws per chain at which a run may stop early (``sample``'s ``checkpoints``): from
    #: :data:`FIRST_CHECKPOINT` every :data:`CHECKPOINT_STEP` below ``draws``, when the caller
    #: gives no ``draws``; none when they do.
    checkpoints: tuple[int, ...] = ()
    #: The default draws, from which a checkpoint stops the run once the draws pass the
    #: diagnostics' own checks (``sample``'s ``settled``); ``draws`` is then :data:`EXTEND`
    #: times as many. ``None`` when the caller gives ``draws``.
    settled: int | None = None
    #: Whether the caller gave ``tune`` (a refit's shorter warm-up then does not apply).
    tune_given: bool = False
    #: Whether the caller gave ``target_accept`` (a warm start's higher one then does not apply).
    accept_given: bool = False

    def refit(self, started: bool, least_accept: float | None = None) -> Settings:
        """These settings for a refit of an earlier fit on more calls (``fit_posterior``'s
        ``warm_start``): :data:`WARM_TUNE` warm-up steps, a target acceptance of at least
        ``least_accept`` (or :data:`WARM_TARGET_ACCEPT`) and checkpoints from :data:`WARM_FIRST_CHECKPOINT`
        when its chains start at that fit's draws (``started``), else at most :data:`REFIT_TUNE`
        warm-up steps; the caller's ``tune``, ``target_accept`` and ``draws`` whatever.
        """
        if not started:
            return self if self.tune_given else replace(self, tune=min(self.tune, REFIT_TUNE))
        tune = self.tune if self.tune_given else WARM_TUNE
        least = WARM_TARGET_ACCEPT if least_accept is None else least_accept
        accept = self.target_accept if self.accept_given else max(self.target_accept, least)
        looks = range(WARM_FIRST_CHECKPOINT, self.draws, WARM_CHECKPOINT_STEP) if self.checkpoints else ()
        return replace(self, tune=tune, target_accept=accept, checkpoints=tuple(looks))


#: The first checkpoint of a run at the default draws, and the draws between checkpoints.
FIRST_CHECKPOINT, CHECKPOINT_STEP = 1000, 500
#: A warm start's warm-up steps per chain: its chains start inside the earlier posterior with
#: that fit's step size, so the warm-up only re-estimates the mass matrix and fits the step to
#: the new data. 14 systems x 100 items x 3 random judges x 2 prompts, 4,975 scattered calls
#: (``blocks``, 82 coordinates), four seeds: 100 warm-up steps gave bulk ESS 530-900 over 4 x
#: 500 draws with no divergence, against 300 cold ones before.
WARM_TUNE = 100
#: A warm start's least target acceptance: its step size adapts in the last 15 warm-up steps
#: and lands at 0.34-0.52 (cold: 0.40-0.47). 30 items x 2 prompts x 3 judges, calls lost, 12
#: seeds: at 0.9 two refits diverged (then ran to 4,000 draws a chain), at 0.95 none did.
WARM_TARGET_ACCEPT = 0.95
#: A refit's warm-up steps per chain when its chains cannot start at the earlier fit's draws
#: (its coordinates changed, or it was not sampled through a kernel): the posterior moves little
#: between refits on a few more calls (the adaptive loop's steps; 14 systems x 3 judges, 5,020
#: scattered calls: 300 gave bulk ESS 2,640 and R-hat 1.003).
REFIT_TUNE = 300
#: A warm start's first checkpoint and the draws between: it stops at the first look where the
#: draws pass with margin (as a cold run does from :data:`FIRST_CHECKPOINT` on).
WARM_FIRST_CHECKPOINT = WARM_CHECKPOINT_STEP = 250
#: At the default draws (nutpie) a fit that fails its checks at the family's (or likelihood's)
#: draws goes on to at most this many times as many, and stops at the first checkpoint that
#: passes. Five of the 135 small-facet GLMM fits had an R-hat of 1.011-1.017 at 4,000 (binary)
#: or 3,000 (ordinal) draws, their SDs mixing at 0.02-0.06 ESS a draw, and pass at 3,500-6,000;
#: 8 of the 45 ``cells`` fits failed a check at 2,000 and pass at 2,500-3,000. A fit that
#: passes at the default draws keeps exactly what it kept before.
EXTEND = 2


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _is_integer(value: object) -> bool:
    """An int, or a float or NumPy number holding a whole number (``1000.0``); not text or bools."""
    return _is_number(value) and bool(np.isfinite(value)) and float(value) == int(value)


def sampler_settings(
    family: Family,
    *,
    sampler: Literal["nutpie", "pymc"] = "nutpie",
    chains: int = 4,
    tune: int | None = None,
    draws: int | None = None,
    target_accept: float | None = None,
    random_seed: int | None = None,
    progressbar: bool = True,
    likelihood_accept: float | None = None,
    likelihood_draws: int | None = None,
    likelihood_tune: int | None = None,
) -> Settings:
    """The sampler's settings: the family's defaults where the caller gives none (the
    likelihood's ``target_accept``, ``draws`` and ``tune`` for the layout, ``likelihood_accept``,
    ``likelihood_draws`` and ``likelihood_tune``, before the family's),
    and a drawn seed (recorded in the posterior) when ``random_seed`` is ``None``. At the
    default draws (nutpie) the run may stop at a checkpoint once its diagnostics pass with
    margin (``Settings.checkpoints``), or from the default draws on once they pass
    (``Settings.settled``), at most :data:`EXTEND` times the default draws; ``draws=`` fixes
    the draws.

    >>> from bayes_tee.families import get_family
    >>> s = sampler_settings(get_family("binomial"), random_seed=1)
    >>> s.tune, s.settled, s.draws, s.target_accept
    (500, 4000, 8000, 0.9)
    """
    for name, value, least in (("chains", chains, 1), ("tune", tune, 0), ("draws", draws, 1)):
        if value is not None and not (_is_integer(value) and int(value) >= least):
            raise ArgumentError(f"{name} must be an integer of at least {least}, got {value!r}.")
    if target_accept is not None and not (_is_number(target_accept) and 0 < target_accept < 1):
        raise ArgumentError(f"target_accept must be between 0 and 1, got {target_accept!r}.")
    if sampler not in ("nutpie", "pymc"):
        raise ArgumentError(f"sampler must be 'nutpie' or 'pymc', got {sampler!r}.")
    if random_seed is not None and not (_is_integer(random_seed) and int(random_seed) >= 0):
        raise ArgumentError(f"random_seed must be a non-negative integer or None, got {random_seed!r}.")
    d_tune, d_draws, d_accept = family.sampler_defaults()
    d_accept = d_accept if likelihood_accept is None else likelihood_accept
    d_draws = d_draws if likelihood_draws is None else likelihood_draws
    d_tune = d_tune if likelihood_tune is None else likelihood_tune
    seed = int(np.random.default_rng().integers(2**31)) if random_seed is None else int(random_seed)
    looks = draws is None and sampler == "nutpie"  # PyMC's sampler runs the default draws
    most = EXTEND * d_draws if looks else (d_draws if draws is None else int(draws))
    return Settings(
        sampler=sampler,
        chains=int(chains),
        tune=d_tune if tune is None else int(tune),
        draws=most,
        target_accept=d_accept if target_accept is None else float(target_accept),
        random_seed=seed,
        progressbar=progressbar,
        checkpoints=tuple(range(FIRST_CHECKPOINT, most, CHECKPOINT_STEP)) if looks else (),
        settled=d_draws if looks else None,
        tune_given=tune is not None,
        accept_given=target_accept is not None,
    )


def choose_likelihood(design: Design, method: str = "auto") -> Likelihood:
    """The likelihood a fit uses: ``method``, or under ``"auto"`` the fastest exact one for the
    design's layout and family (:func:`bayes_tee.likelihoods.registry.choose_method`).

    >>> import bayes_tee as bt
    >>> choose_likelihood(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")).name
    'balanced'
    """
    return get_likelihood(choose_method(design) if method == "auto" else method, design)


def sample_posterior(
    design: Design,
    lk: Likelihood,
    spec: PriorSpec,
    settings: Settings,
    refit: bool = False,
    warm: SamplerState | None = None,
) -> tuple[xr.DataTree, dict]:
    """Sample the likelihood on the sampler's scale and return the draws on the user's scale,
    with what the posterior records of the run (settings, timings, free parameters) and, under
    ``"sampler_state"``, where its chains were (:mod:`bayes_tee._core.warm`; ``None`` unless
    sampled through a C callback). A ``refit`` of an earlier fit samples with
    :meth:`Settings.refit`'s settings; ``warm``, that fit's state, starts the chains when the
    density has the same coordinates.
    """
    t0 = time.perf_counter()
    std, loc, scale = standardize(design, spec)
    # nutpie samples a likelihood written in NumPy without compiling; the PyMC model is built
    # only when a sampler needs it (sampling.sample)
    # a design with covariates samples the PyMC model (the kernels have no slopes), unless the
    # likelihood's density takes them
    numpy_density = (
        lk.density is not None
        and settings.sampler == "nutpie"
        and (design.covariates is None or lk.density_covariates)
    )
    density = lk.density(std, spec) if numpy_density else None
    built: list = []

    def model():
        if not built:
            built.append(build_model(std, spec, method=lk.name))
        return built[0]

    reuse = None
    if lk.data is not None:
        reuse = (layout_key(std, spec, lk.name, lk.key(std) if lk.key else None), lk.data(std))
    warm = warm if usable(warm, density) and hasattr(density, "callback") else None
    s = settings.refit(warm is not None, getattr(density, "warm_accept", None)) if refit else settings
    idata, timing = sample(
        model, s.sampler, s.chains, s.tune, s.draws, s.target_accept, s.random_seed, s.progressbar, reuse,
        density=density, checkpoints=s.checkpoints,
        diagnosed=convergence_vars(design.terms, design.family, design.covariates),
        settled=s.settled, warm=warm,
    )  # fmt: skip
    state = timing["durations"].pop("state", None)
    posterior = idata["posterior"].to_dataset()
    posterior = posterior[[v for v in posterior.data_vars if not str(v).endswith("__")]]
    posterior = unstandardize(posterior, loc, scale)
    if lk.postprocess is not None:
        posterior = lk.postprocess(posterior)
    info = {
        "sampler": s.sampler,
        "chains": s.chains,
        "tune": s.tune,
        "draws": timing["durations"].pop("draws_kept", s.draws),
        "draws_max": s.draws,
        "target_accept": s.target_accept,
        "random_seed": s.random_seed,
        "glmm_coordinates": GLMM_COORDINATES,
        "build_s": round(timing["start"] - t0, 3),
        **timing["durations"],
        "n_free_parameters": (
            int(sum(np.size(v) for v in built[0].initial_point().values())) if built else density.layout.ndim
        ),
        "standardized": {"location": loc, "scale": scale},
        "method_note": method_note(design, lk.name),
        "warm_start": timing["durations"].pop("warm_start", 0.0),
    }
    return draws_tree(posterior, idata), info | {"sampler_state": state}


def make_posterior(
    idata: xr.DataTree, design: Design, spec: PriorSpec, lk: Likelihood, info: dict, *, stacklevel: int = 3
) -> Posterior:
    """The :class:`~bayes_tee.posterior.facade.Posterior`, said to fail its diagnostics (a
    :class:`~bayes_tee.DiagnosticWarning` at the caller's call) when it does.
    """
    post = posterior_for(idata, design, spec, lk.name, info)
    diag.warn_if_failed(post.diagnostics(), stacklevel=stacklevel)
    return post


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
    system: str | None = None,
    position: str | None = None,
    swapped: object = None,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: str = "gaussian",
    overdispersion: bool | None = None,
    thresholds: Literal["common", "judge"] = "common",
    spread: Literal["common", "judge"] = "common",
    priors: str | PriorSpec | dict | None = None,
    method: str = "auto",
    chains: int = 4,
    tune: int | None = None,
    draws: int | None = None,
    target_accept: float | None = None,
    sampler: Literal["nutpie", "pymc"] = "nutpie",
    random_seed: int | None = None,
    progressbar: bool = True,
    client: object = None,
    warm_start: Fit | SamplerState | None = None,
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
    system : str, optional
        The column of the compared systems (models, agents, pipelines): one joint fit in which
        the systems are a fixed factor (a wide prior, so an extreme system is not pulled in) and
        their interactions with every random facet are variance components; then
        ``post.leaderboard()``, ``post.pairs()`` and ``post.compare(a, b)``. A frame from a
        log reader holding several models fits them jointly with ``system="model"``. Gaussian
        family (the linear probability model for 0/1 scores).
    position : str, optional
        Pairwise data: the presentation-order column, a fixed factor whose sensitivity index is
        the squared order bias (Messing 2026 App. H); shares, D-studies (``n_positions``) and the
        gaming surface include it. The outcome may hold verdict labels (A / B / tie).
    swapped : optional
        The ``position`` level whose verdicts are in the swapped slot frame: those rows are
        recoded to "the pair's first system wins" (Messing 2026 App. R ``true_order``; ties 0.5).
    judge_effect : {"fixed", "random"}
        Judges as a fixed panel (sensitivity index, the paper's default) or a random facet.
    family : {"gaussian", "binomial", "ordinal", "ordinal_probit"}
        ``gaussian`` (default, Messing (2026)'s linear probability model for 0/1 scores);
        ``binomial``: the logit GLMM for 0/1 outcomes, components on the logit scale with the
        logistic residual pi^2/3 (``theta()`` and ``shares(scale="probability")`` answer on
        the probability scale); ``ordinal`` (``ordinal_probit``): the cumulative-logit (probit)
        GLMM for integer scores in three or more ordered categories (Likert scales), the same
        crossed effects on the latent scale, residual pi^2/3 (1).
    overdispersion : bool, optional
        Binomial and ordinal: include the cell-level (observation-level) random effect;
        default on when cells repeat.
    thresholds : {"common", "judge"}
        Ordinal: one set of cutpoints for the whole panel, or each judge its own (scale-use
        heterogeneity: a judge who uses only 3-5 and one who uses 1-5).
    spread : {"common", "judge"}
        Ordinal: each fixed judge its own latent spread, ``P(y <= k) = F((c_k - eta) / s_judge)``
        (compression: a judge with ``s > 1`` separates items less), or the link's for all.
    priors : str, PriorSpec or dict, optional
        A preset name from :data:`bayes_tee._core.priors.PRESETS` or a spec; default half-t(3).
    method : str
        ``"auto"``, ``"balanced"``, ``"blocks"``, ``"augmented"``, ``"marginal"``, ``"cells"``,
        ``"rows"``, ``"binomial"`` or ``"binomial_quadrature"``.
        The likelihood form, a name in :data:`bayes_tee.likelihoods.registry.METHODS`
        (:func:`bayes_tee.likelihoods.registry.build_model`); ``auto`` takes ``balanced``
        when every cell holds the same calls (categories of any size), else ``blocks`` (each
        item's short and empty cells integrated out exactly, one Woodbury step per item;
        :mod:`bayes_tee.likelihoods.blocks.density`) while each item's block is small
        (:data:`~bayes_tee.likelihoods.registry.MAX_BLOCK_FLOPS_PER_ITEM`), else
        ``marginal`` (every random effect integrated out exactly) unless its per-evaluation
        cost is large, else ``cells`` (``rows`` is the slow textbook form, for benchmarks).
        ``augmented`` (the balanced likelihood with one latent value per short cell) is kept
        by name. ``balanced``, ``blocks`` and ``augmented`` compile nothing per layout: their
        kernels are C callbacks compiled once per machine, which nutpie calls without Python.
        The GLMM (``family="binomial"``) is ``binomial`` (every effect sampled, the cell
        effect non-centred) or
        ``binomial_quadrature`` (the cell effect integrated out by adaptive Gauss-Hermite
        quadrature: exact and funnel-free whatever the calls per cell, about 10x the cost per
        evaluation at 8 calls per cell); neither compiles anything per layout
        (:mod:`bayes_tee.likelihoods.logit_glmm.density`).
    chains : int
        Chains (4).
    tune, draws : int, optional
        Tuning steps and draws per chain: 1000 and 2000 by default; the GLMM's are 500 and 4000
        (:data:`GLMM_TUNE`, :data:`GLMM_DRAWS`: its logit SDs mix slowly near separation, and
        nutpie needs no more tuning there), the ordinal family's 600 and 2000 (3000 with a cell
        effect). At the default draws (nutpie) the chains run side by side and stop at the
        first checkpoint (1000 draws, then every 500) where every SD, fixed effect and the grand
        mean have R-hat <= 1.01, bulk and tail ESS >= 600 and no transition diverged; from the
        default draws on, where they pass the checks themselves (ESS >= 400). A fit that fails
        them at the default draws goes on, to at most :data:`EXTEND` (2) times as many.
        ``info["draws"]`` says how many were kept, ``info["checkpoints"]`` what each look found.
        What a seeded fit keeps does not depend on how fast the chains ran. ``draws=`` fixes the
        draws; PyMC's sampler runs the default draws.
    target_accept : float, optional
        NUTS target acceptance rate; default 0.9, and 0.95 where few-level shared terms need
        it (:mod:`bayes_tee.likelihoods.levels`: ``balanced`` and the logit GLMM).
    sampler : {"nutpie", "pymc"}
        nutpie (fastest) or PyMC's own NUTS (on the PyMC model, compiled by PyTensor).
    random_seed : int, optional
        Same seed, same draws.
    progressbar : bool
        Show sampling progress.
    client : distributed.Client, optional
        With a dask frame or a parquet path: compute the per-cell statistics on this
        ``dask.distributed`` cluster, so the rows stay on its workers; the sampler then runs
        here on the cells (:func:`~bayes_tee.design.out_of_core.validate_dask`).
    warm_start : Posterior or SamplerState, optional
        An earlier fit of the same model on fewer calls (the adaptive loop's last step), or its
        ``sampler_state``. When the likelihood is sampled through its kernel (Gaussian,
        binomial or ordinal) with the same variance components, each chain starts at one of
        that fit's draws with its step size (:mod:`bayes_tee._core.warm`), warms up for
        :data:`WARM_TUNE` steps at a target acceptance of at least :data:`WARM_TARGET_ACCEPT`
        (the ``blocks`` likelihood's ``warm_accept``: 0.9), and may stop from
        :data:`WARM_FIRST_CHECKPOINT` draws on, at the first look that passes the checks above. A
        sampled term that gained levels (the GLMMs' item or cell effects after calls on new items or
        cells) starts as in any fit; ``info["warm_start"]`` is the share of coordinates started from
        the draws (0 when the warm start did not apply).
        Otherwise the fit starts as any fit does, with at most :data:`REFIT_TUNE` warm-up steps
        (the posterior moves little between refits). The caller's ``tune``, ``target_accept``
        and ``draws`` hold whatever. The draws are diagnosed as any fit's.

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
    design = build_design(
        df, formula=formula, outcome=outcome, item=item, prompt=prompt, judge=judge,
        temperature=temperature, replicate=replicate, category=category, position=position,
        swapped=swapped, judge_effect=judge_effect, system=system, family=family,
        overdispersion=overdispersion, thresholds=thresholds, spread=spread, warn=False, client=client,
    )  # fmt: skip
    for note in design.notes:  # said here, so the warning points at the user's call
        warnings.warn(note, DesignWarning, stacklevel=2)
    fam = get_family(design.family)
    lk = choose_likelihood(design, method)
    spec = get_prior(priors)
    settings = sampler_settings(
        fam, sampler=sampler, chains=chains, tune=tune, draws=draws, target_accept=target_accept,
        random_seed=random_seed, progressbar=progressbar,
        likelihood_accept=lk.accept(design, sampler),
        likelihood_draws=lk.draws(design) if lk.draws else None,
        likelihood_tune=lk.tune(design) if lk.tune else None,
    )  # fmt: skip
    if warm_start is not None and not isinstance(warm_start, Fit | SamplerState):
        raise ArgumentError(
            "warm_start takes an earlier fit (a Posterior) or its sampler_state, got "
            f"{type(warm_start).__name__}."
        )
    warm = warm_start.sampler_state if isinstance(warm_start, Fit) else warm_start
    idata, info = sample_posterior(design, lk, spec, settings, refit=warm_start is not None, warm=warm)
    state = info.pop("sampler_state")
    post = make_posterior(idata, design, spec, lk, info)
    post.sampler_state = state
    return post
