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
    for level in (2, 0, "x", True):
        with pytest.raises(bt.ArgumentError, match="level must be a number between 0 and 1"):
            demo_post.theta(level=level)
    with pytest.raises(bt.ArgumentError, match="level must be a number between 0 and 1"):
        demo_post.components(level="x")
    with pytest.raises(bt.ArgumentError, match="n_items takes numbers"):
        demo_post.dstudy(n_items="ten")
    with pytest.raises(bt.ArgumentError, match="n_items must be an integer of at least 1"):
        bt.simulate.tee_dgp(n_items=0)
    with pytest.raises(bt.ArgumentError, match="Expected a file, a folder or a list"):
        bt.read_inspect(None)


def test_fit_arguments_and_output_paths_are_checked_first(demo_post, demo_df, tmp_path):
    roles = dict(outcome="score", item="item", prompt="prompt")
    for bad in (dict(random_seed="x"), dict(random_seed=-1), dict(draws="100"), dict(draws=float("nan"))):
        with pytest.raises(bt.ArgumentError, match=f"{next(iter(bad))} must be"):
            bt.fit_posterior(demo_df, **roles, **bad, progressbar=False)
    with pytest.raises(bt.DesignError, match="Column 'prompt' holds list values.*astype\\(str\\)"):
        bt.build_design(demo_df.assign(prompt=[[1]] * len(demo_df)), **roles)
    with pytest.raises(bt.FileError, match="is a folder: give a file name"):
        demo_post.report(tmp_path)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(bt.FileError, match="Cannot write"):
        demo_post.report(blocked / "report.html")  # a folder that is a file


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
