"""Every public fitting entry point speaks PyMC's sampler vocabulary."""

import inspect

import pytest

import bayes_tee as bt
from bayes_tee.noise import bayes as noise_bayes

PYMC_NAMES = {"draws", "tune", "chains", "target_accept", "random_seed", "progressbar"}


@pytest.mark.parametrize(
    "fn",
    [bt.fit_posterior, bt.calibrate, noise_bayes.fit, bt.simulate.coverage_study],
    ids=lambda f: f.__qualname__,
)
def test_fitting_functions_take_pymc_sampler_names(fn):
    params = inspect.signature(fn).parameters
    assert PYMC_NAMES <= set(params), PYMC_NAMES - set(params)
    assert "progress_bar" not in params


@pytest.mark.parametrize(
    "fn",
    [bt.prior_sensitivity, bt.leave_one_out, bt.compare_links, bt.noise.PairedNoise.bayes],
    ids=lambda f: f.__qualname__,
)
def test_refitting_functions_pass_sampler_names_to_fit_posterior(fn):
    params = inspect.signature(fn).parameters
    assert any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert "progress_bar" not in params
