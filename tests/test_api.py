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


def test_every_refusal_is_a_package_error(demo_post):
    """Argument problems are bt.ArgumentError, lookups also KeyError: `except bt.DesignError`
    catches every refusal, and code written against the built-in types still works.
    """
    with pytest.raises(bt.ArgumentError, match="level must be between 0 and 1"):
        demo_post.reliability(level=1.5)
    with pytest.raises(bt.ArgumentError, match="target_se must be positive"):
        demo_post.dstudy(target_se=-1)
    with pytest.raises(bt.UnknownNameError, match="No data set 'nope'") as err:
        bt.datasets.load("nope")
    assert isinstance(err.value, KeyError) and isinstance(err.value, bt.DesignError)
    assert str(err.value).startswith("No data set")  # a sentence, not a quoted key
    with pytest.raises(bt.ArgumentError, match="family must be one of"):
        bt.families.get_family("poisson")
    assert issubclass(bt.FileError, bt.DesignError) and issubclass(bt.MissingFileError, FileNotFoundError)


def test_a_sampler_failure_is_one_sampling_error(monkeypatch):
    nutpie = pytest.importorskip("nutpie")

    def fails(*args, **kwargs):
        raise RuntimeError(
            "All initialization points failed\n\nCaused by:\n  BadLogp\nStack backtrace:\n 0: x"
        )

    monkeypatch.setattr(nutpie, "sample", fails)
    df = bt.simulate.gstudy_dgp({"item": 8, "prompt": 3}, {"item": 1.0}, random_seed=0)
    with pytest.raises(
        bt.SamplingError, match=r"nutpie\) stopped: All initialization points failed\."
    ) as err:
        bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", progressbar=False)
    assert "backtrace" not in str(err.value) and isinstance(err.value, RuntimeError)
