"""Every public Posterior method on a small fit of every likelihood and layout (scikit-learn's
``check_estimator`` idea): each works, or raises one clear error from bayes_tee's own code that
names the limitation, never a traceback from deep inside a library.
"""

from __future__ import annotations

import traceback
import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.cli.warmup import LAYOUTS as WARMED
from bayes_tee.studies.verdicts_dgp import PAIRWISE_ROLES

pytestmark = pytest.mark.slow  # one compile per layout

SMALL = dict(draws=100, tune=100, chains=2, random_seed=1, progressbar=False)
ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)


def _pilot(loss=0.0, **kw):
    df = bt.simulate.tee_dgp(
        n_items=12, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3, random_seed=4, **kw
    )
    return df[np.random.default_rng(5).random(len(df)) >= loss]


SYSTEM_ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")


def _systems(loss=0.0, outcome="gaussian"):
    df = bt.simulate.systems_dgp(n_systems=4, n_items=12, n_replicates=2, outcome=outcome, random_seed=4)
    return df[np.random.default_rng(5).random(len(df)) >= loss]


def _fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(df, **{**SMALL, **kw})


def _warmed(name):
    """The warm-up's own fit of layout ``name`` (``bayes-tee warmup``, run by ``make venv``): its
    PyMC model was compiled at install, so this fit loads it from the disk cache.
    """
    kw = WARMED[name]()
    return _fit(kw.pop("data"), **kw)


def _biased(family="gaussian", systems=2, **kw):
    df = bt.simulate.bias_dgp(
        family, 12, effects=(0.0, 0.2)[:systems], longer=(0.0, 1.0)[:systems], random_seed=4, **kw
    )
    return df.assign(model=df["model"].str.replace("m", "s"))


LAYOUTS = {
    "balanced": lambda: _fit(_pilot(), **ROLES),
    "blocks": lambda: _fit(_pilot(0.05), **ROLES),
    "augmented": lambda: _fit(_pilot(0.05), **ROLES, method="augmented"),
    "marginal": lambda: _warmed("marginal"),
    "cells": lambda: _warmed("cells"),
    "random judges": lambda: _fit(_pilot(0.05), **ROLES, judge_effect="random"),
    "categories": lambda: _fit(_pilot(n_categories=3), **ROLES, category="category"),
    "unequal categories, calls lost": lambda: _fit(
        _pilot(0.05, n_categories=5), **ROLES, category="category"
    ),
    "binomial": lambda: _fit(_pilot(outcome="bernoulli"), **ROLES, family="binomial"),
    "ordinal": lambda: _fit(_pilot(outcome="ordinal"), **ROLES, family="ordinal"),
    "ordinal, judge cutpoints, calls lost": lambda: _fit(
        _pilot(0.05, outcome="ordinal"), **ROLES, family="ordinal", thresholds="judge"
    ),
    "ordinal probit, judge spreads, calls lost": lambda: _fit(
        _pilot(0.05, outcome="ordinal"), **ROLES, family="ordinal_probit", spread="judge"
    ),
    "single facet": lambda: _fit(
        _pilot()[
            lambda d: (
                (d["prompt"] == d["prompt"].iloc[0])
                & (d["judge"] == d["judge"].iloc[0])
                & (d["temperature"] == d["temperature"].iloc[0])
            )
        ],
        outcome="score",
        item="item",
        replicate="replicate",
    ),
    "systems": lambda: _fit(_systems(), **SYSTEM_ROLES),
    "systems, calls lost": lambda: _fit(_systems(0.05), **SYSTEM_ROLES),
    # the logit GLMM's comparison is checked in tests/posterior/test_latent_systems.py
    "systems, ordinal, judge cutpoints, calls lost": lambda: _fit(
        _systems(0.05, outcome="ordinal"), **SYSTEM_ROLES, family="ordinal", thresholds="judge"
    ),
    "covariates: per-judge slopes varying within cells": lambda: _fit(
        _biased(n_replicates=2, within_sd=0.5),
        formula="score ~ model + judge + length + length:judge + (1|item)",
        system="model",
    ),
    "covariates, binomial, random slope": lambda: _fit(
        _biased("binomial"),
        formula="score ~ model + length + (1|item) + (1|judge) + (0 + length|judge)",
        system="model",
        family="binomial",
    ),
    "covariates, ordinal, one system": lambda: _fit(
        _biased("ordinal", systems=1, n_replicates=2),
        formula="score ~ judge + length + (1|item)",
        family="ordinal",
    ),
    "pairwise": lambda: _fit(
        bt.simulate.pairwise_battles(n_items=40, n_prompts=2, n_judges=2, random_seed=3), **PAIRWISE_ROLES
    ),
}

CALLS = {
    "components": lambda p, tmp: p.components(),
    "shares": lambda p, tmp: p.shares(n_items=24),
    "shares (probability)": lambda p, tmp: p.shares(
        scale="probability", n_draws=20, sims_per_draw=20, random_seed=1
    ),
    "theta": lambda p, tmp: p.theta(n_draws=20, sims_per_draw=20),
    "dstudy": lambda p, tmp: p.dstudy(n_items=[10, 20]),
    "interventions": lambda p, tmp: p.interventions(),
    "allocate": lambda p, tmp: p.allocate(budget=2000),
    "simulate_design": lambda p, tmp: p.simulate_design(
        n_items=10, n_draws=10, sims_per_draw=10, random_seed=1
    ),
    "sensitivity": lambda p, tmp: p.sensitivity(),
    "gaming_surface": lambda p, tmp: p.gaming_surface(k=5),
    "writeup": lambda p, tmp: p.writeup(),
    "summary": lambda p, tmp: p.summary(),
    "save/load": lambda p, tmp: bt.load(p.save(tmp / "p.nc")).shares(),
    "plots": lambda p, tmp: [p.plot_shares(), p.plot_dstudy(), p.plot_interventions()],
    "report": lambda p, tmp: p.report(tmp / "r.html"),
    "leaderboard": lambda p, tmp: p.leaderboard(),
    "pairs": lambda p, tmp: p.pairs(over="panel"),
    "compare": lambda p, tmp: p.compare("s0", "s1"),
    "reliability (systems)": lambda p, tmp: p.reliability(object="system"),
    "system plots": lambda p, tmp: [p.plot_leaderboard(), p.plot_pairs(), p.plot_ranks()],
    "cutpoints": lambda p, tmp: [p.cutpoints(), p.category_probabilities(), p.judge_spreads()],
    "level effects": lambda p, tmp: p.level_effects("item"),
    "coefficients": lambda p, tmp: [p.coefficients(), p.covariate_variance()],
    "controlled": lambda p, tmp: [
        p.leaderboard(control={"length": 0.0}),
        p.pairs(control={"length": 0.0}),
        p.tie_groups(control={"length": 0.0}),
        bt.posterior.leaderboard.rank_probabilities(p, control={"length": 0.0}),
    ],
}


@pytest.fixture(scope="module", params=list(LAYOUTS))
def fitted(request):
    return request.param, LAYOUTS[request.param]()


@pytest.mark.parametrize("call", list(CALLS))
def test_method_works_or_says_why(fitted, call, tmp_path):
    import matplotlib.pyplot as plt

    layout, post = fitted
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DiagnosticWarning)  # few draws, by design
            warnings.simplefilter("ignore", UserWarning)
            CALLS[call](post, tmp_path)
    except (ValueError, bt.DesignError, NotImplementedError) as err:
        frames = traceback.extract_tb(err.__traceback__)
        assert "bayes_tee" in frames[-1].filename, (
            f"{layout} / {call}: {type(err).__name__} from {frames[-1].filename}: {err}"
        )
        assert len(str(err)) > 20, f"{layout} / {call}: an error that does not say why: {err!r}"
    finally:
        plt.close("all")
