"""``fit_posterior(warm_start=)``: a refit on more calls starts at the earlier fit's draws and step
size, warms up briefly and may stop early, and finds the posterior a cold fit finds; where it
cannot start there (another likelihood, the GLMMs' kernels) it starts as any fit does with a
short warm-up.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.blocks.density import BlocksDensity
from bayes_tee.tee.fit import REFIT_TUNE, WARM_FIRST_CHECKPOINT, WARM_TUNE

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")


def _fit(df, quiet=False, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        if quiet:  # few draws: what is tested is the settings, not the draws
            warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(df, **{**ROLES, "progressbar": False, **kw})


@pytest.fixture(scope="module")
def calls():
    """Calls lost at random (the ``blocks`` likelihood): a pilot and the pilot with more calls."""
    df = bt.simulate.tee_dgp(
        n_items=30, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2, random_seed=3
    )
    u = np.random.default_rng(1).random(len(df))
    return df[u < 0.75], df[u < 0.9]


def test_a_warm_refit_starts_at_the_earlier_draws_and_finds_the_cold_posterior(calls):
    pilot, more = calls
    first = _fit(pilot, random_seed=1)
    assert first.method == "blocks" and first.sampler_state is not None
    warm = _fit(more, random_seed=2, warm_start=first)
    cold = _fit(more, random_seed=2)
    assert warm.info["warm_start"] == 1.0 and cold.info["warm_start"] == 0.0
    assert warm.info["tune"] == WARM_TUNE < cold.info["tune"]
    assert warm.info["target_accept"] == BlocksDensity.warm_accept > cold.info["target_accept"]
    assert warm.info["checkpoints"][0]["draws"] == WARM_FIRST_CHECKPOINT
    assert warm.diagnostics()["ok"] and cold.diagnostics()["ok"]
    # the same posterior: each parameter's means within four Monte Carlo errors of each other
    pw, pc = warm.idata["posterior"].to_dataset(), cold.idata["posterior"].to_dataset()
    for name in ["mu", *[v for v in pw.data_vars if str(v).startswith("sigma_")]]:
        mw, mc = float(pw[name].mean()), float(pc[name].mean())
        se = np.hypot(float(az.mcse(pw[name])), float(az.mcse(pc[name])))
        assert abs(mw - mc) < 4 * se, (name, mw, mc, se)
    # seeded: the same start, the same draws; from the state alone as from the fit
    again = _fit(more, random_seed=2, warm_start=first.sampler_state)
    np.testing.assert_array_equal(again.idata["posterior"]["mu"], warm.idata["posterior"]["mu"])


def test_a_refit_that_cannot_start_warm_starts_as_any_fit_with_a_short_warm_up(calls):
    pilot, _ = calls
    complete = bt.simulate.tee_dgp(
        n_items=30, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2, random_seed=3
    )
    first = _fit(complete, random_seed=1, draws=200, quiet=True)
    assert first.method == "balanced"
    refit = _fit(pilot, random_seed=2, draws=200, warm_start=first, quiet=True)  # blocks: other coordinates
    assert refit.info["warm_start"] == 0.0 and refit.info["tune"] <= REFIT_TUNE
    given = _fit(pilot, random_seed=2, draws=200, tune=150, warm_start=first, quiet=True)
    assert given.info["tune"] == 150
    with pytest.raises(bt.ArgumentError, match="warm_start"):
        _fit(pilot, warm_start="last fit")


@pytest.mark.slow
@pytest.mark.parametrize("family,outcome", [("binomial", "bernoulli"), ("ordinal", "ordinal")])
def test_the_glmm_kernels_refit_cold_with_a_short_warm_up(family, outcome):
    """The GLMMs' effect coordinates need the full warm-up (bayes_tee._core.warm): a refit of the
    same cells starts as any fit, with at most REFIT_TUNE warm-up steps, and passes its checks.
    """
    df = bt.simulate.tee_dgp(
        n_items=20, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=3, outcome=outcome, random_seed=5
    )
    first = _fit(df[df["replicate"] != df["replicate"].max()], family=family, random_seed=1)
    assert first.sampler_state is not None
    refit = _fit(df, family=family, random_seed=2, warm_start=first)
    assert refit.info["warm_start"] == 0.0 and refit.info["tune"] == REFIT_TUNE
    assert refit.diagnostics()["ok"]
