"""Every question is a function of a plain :class:`~bayes_tee.posterior.fit.Fit`: it answers from
stored or hand-built draws without sampling and without the ``Posterior`` class, and the facade
gives the same numbers (one delegating line, plus the diagnostics stamp).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee._core.priors import get_prior
from bayes_tee.gstudy.divisors import divisors
from bayes_tee.posterior import (
    budget,
    dstudy,
    gaming,
    leaderboard,
    reliability,
    separation,
    shares,
    simulate,
    theta,
)
from bayes_tee.posterior.components import components_table
from bayes_tee.posterior.fit import Fit
from bayes_tee.posterior.reports import single
from bayes_tee.posterior.reports import systems as systems_report

DEMO = Path(__file__).resolve().parents[2] / "models" / "tee_demo.nc"


@pytest.fixture(scope="module")
def demo():
    post = bt.load(DEMO)
    return post, Fit(post.idata, post.design, post.priors, post.method, post.info)


def test_a_plain_fit_is_not_the_facade(demo):
    post, fit = demo
    assert not isinstance(fit, bt.Posterior)
    assert not hasattr(fit, "shares") and not hasattr(fit, "theta")  # nothing to call back into
    assert type(post) is bt.Posterior


def test_questions_answer_a_plain_fit_as_the_facade_does(demo):
    post, fit = demo
    pd.testing.assert_frame_equal(theta.theta(fit), post.theta(), check_like=True)
    pd.testing.assert_frame_equal(shares.shares(fit, n_items=80), post.shares(n_items=80))
    pd.testing.assert_frame_equal(components_table(fit.component_draws()), post.components())
    pd.testing.assert_frame_equal(dstudy.dstudy(fit, n_items=[20, 80]), post.dstudy(n_items=[20, 80]))
    pd.testing.assert_frame_equal(dstudy.interventions(fit), post.interventions())
    with pytest.warns(bt.DesignWarning, match="judges"):  # E rho^2 depends on the judges' status
        plain = reliability.reliability(fit)
    with pytest.warns(bt.DesignWarning, match="judges"):
        pd.testing.assert_frame_equal(plain, post.reliability())
    plan = budget.allocate(fit, 4000, max_items=120)
    assert plan.best.equals(post.allocate(4000, max_items=120).best)
    g = gaming.gaming_surface(fit, 27, [{"n_prompts": 1}, {"n_prompts": 5}])
    assert g["surface_median"].iloc[1] < g["surface_median"].iloc[0]  # more prompts: less to game
    sim = simulate.simulate_design(fit, n_items=40, n_draws=20, sims_per_draw=20, random_seed=1)
    assert np.isfinite(sim["se_median"]).all()
    assert single.writeup(fit) == post.writeup()
    assert single.summary(fit) == post.summary()


def test_the_facade_stamps_and_the_question_does_not(demo):
    post, fit = demo
    assert "diagnostics_ok" not in theta.theta(fit).attrs
    assert post.theta().attrs["diagnostics_ok"] is True


def test_theta_of_a_plain_fit_matches_its_closed_form(demo):
    _, fit = demo
    c = fit.component_draws()
    labels = [t.label for t in fit.terms]
    facets = {t.label: t.facets for t in fit.terms}
    v = c.values.reshape(-1, len(labels)) / divisors(labels, fit.design.counts, facets=facets)
    se = float(np.sqrt(np.mean(v.sum(axis=1))))
    assert theta.theta(fit)["tee_se"].iloc[0] == pytest.approx(se, rel=1e-12)


# -- a comparison of systems from hand-built draws: known components, closed-form answers -------
SIGMA = {"item": 0.5, "prompt": 0.3, "item:prompt": 0.2, "item:judge": 0.2, "prompt:judge": 0.1,
         "system:item": 0.4, "system:prompt": 0.25, "system:judge": 0.15,
         "item:prompt:judge:system": 0.3, "residual": 0.35}  # fmt: skip
EFFECTS = np.array([0.3, 0.1, -0.1, -0.3])


@pytest.fixture(scope="module")
def systems(hand_built_comparison):
    post = hand_built_comparison(EFFECTS, sigma=SIGMA, jitter=1e-3, n_items=12, shape=(2, 400))
    return post.design, Fit(post.idata, post.design, get_prior(), "balanced")


def test_a_comparison_answers_from_hand_built_draws(systems):
    design, fit = systems
    board = leaderboard.leaderboard(fit)
    levels = list(design.levels["system"])
    expected = [levels[i] for i in np.argsort(-EFFECTS)]
    assert board["system"].tolist() == expected
    assert board["estimate"].to_numpy() == pytest.approx(1.0 + np.sort(EFFECTS)[::-1], abs=0.01)


def test_the_error_of_a_difference_is_its_closed_form(systems):
    design, fit = systems
    c = design.counts
    N, V, M, R = c["item"], c["prompt"], c["judge"], c["replicate"]
    # new items and prompts, this panel of judges: what two systems do not share, over its levels
    own = (
        SIGMA["system:item"] ** 2 / N
        + SIGMA["system:prompt"] ** 2 / V
        + SIGMA["item:prompt:judge:system"] ** 2 / (N * V * M)
        + SIGMA["residual"] ** 2 / (N * V * M * R)
    )
    sep = separation.separation(fit)
    assert sep["se_median"].iloc[0] == pytest.approx(np.sqrt(2 * own), rel=0.01)
    sh = separation.difference_shares(fit)
    assert sh.attrs["var_difference"]["median"] == pytest.approx(2 * own, rel=0.01)
    assert set(sh["component"]) == {"system:item", "system:prompt", "item:prompt:judge:system", "residual"}
    assert systems_report.summary(fit).count("\n") > 10  # the comparison's text, from the plain fit
    doubled = separation.separation(fit, n_items=[2 * N])
    assert doubled["se_median"].iloc[0] < sep["se_median"].iloc[0]
