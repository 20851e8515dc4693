"""Priors that do not look at the data (``PriorSpec(reference=(location, scale))``): the scores
are put on the reference's scale instead of their own, a GLMM's grand mean is centred at the
reference's location, and the same prior holds for any data set.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.logit_glmm.density import BinomialDensity
from bayes_tee.likelihoods.ordinal.density import OrdinalDensity
from bayes_tee.tee.fit import standardize

ROLES = dict(item="item", prompt="prompt", judge="judge")
PriorSpec = bt.priors.PriorSpec


def test_gaussian_scores_go_on_the_reference_scale():
    d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", **ROLES)
    std, loc, scale = standardize(d, PriorSpec(reference=(5.0, 2.0)))
    assert (loc, scale) == (5.0, 2.0) and (std.y_mean, std.y_sd) == (0.0, 1.0)
    np.testing.assert_allclose(std.cells["mean"], (d.cells["mean"] - 5.0) / 2.0)
    np.testing.assert_allclose(std.cells["ss"], d.cells["ss"] / 4.0)
    own = standardize(d)
    assert (own[1], own[2]) == (d.y_mean, d.y_sd)
    # the reference, not the data, sets the prior: two data sets, one prior on the sampler's scale
    shifted = bt.validate_design(bt.datasets.load("tee_demo").assign(score=lambda x: 3 * x.score + 7),
                                 outcome="score", **ROLES)  # fmt: skip
    ref = PriorSpec(reference=(0.0, 1.0))
    assert standardize(shifted, ref)[0].cells["mean"].std() == pytest.approx(
        3 * standardize(d, ref)[0].cells["mean"].std()
    )


@pytest.mark.parametrize("family", ["binomial", "ordinal"])
def test_glmm_grand_mean_centred_at_the_reference(family, same_density):
    df = bt.simulate.tee_dgp(8, 2, 3, 1, 2, outcome="bernoulli" if family == "binomial" else "ordinal",
                             random_seed=1)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        d = bt.validate_design(df, outcome="score", family=family, **ROLES)
    spec = PriorSpec(reference=(-1.5, 1.0))
    dens = (BinomialDensity if family == "binomial" else OrdinalDensity)(d, spec)
    assert dens.mu0 == -1.5
    same_density(d, family, priors=spec, n_points=2)  # the PyMC reference model agrees


def test_reference_is_checked_and_saved(tmp_path):
    with pytest.raises(bt.ArgumentError, match="positive scale"):
        PriorSpec(reference=(0.0, -1.0))
    with pytest.raises(bt.ArgumentError, match="location, scale"):
        PriorSpec(reference=(0.0,))
    spec = PriorSpec(reference=(0.5, 2.0))
    assert PriorSpec.from_dict(spec.to_dict()) == spec


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_a_fit_with_a_fixed_prior_keeps_it(tmp_path):
    df = bt.datasets.load("tee_demo")
    spec = PriorSpec(reference=(df["score"].mean() + 1.0, 0.5))
    post = bt.fit_posterior(df, outcome="score", **ROLES, priors=spec, draws=200, tune=200, chains=2,
                            random_seed=1, progressbar=False)  # fmt: skip
    again = bt.load(post.save(tmp_path / "ref.nc"))
    assert again.priors.reference == spec.reference
    # the grand mean's posterior is still near the data's mean (the prior is wide: 2 x 0.5)
    assert post.idata["posterior"]["mu"].mean() == pytest.approx(df["score"].mean(), abs=0.3)
    # power-scaling evaluates the fitted model, priors on the reference scale
    assert np.isfinite(post.sensitivity().select_dtypes("number").to_numpy()).all()
