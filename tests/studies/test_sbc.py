"""Simulation-based calibration, short runs: ranks of the true parameters among the posterior
draws are uniform for the linear model, the logit GLMM and the ordinal GLMM, and a fit with the
wrong prior is caught (the test has power). The long run is benchmarks/sbc.py's.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.studies.sbc import SBC_PRIOR, prior_draw, simulate_scores

#: Smallest p-value allowed over a run's parameters: under uniform ranks the smallest of 7-8
#: chi-square p-values falls below it about 0.8% of the time.
P_FLOOR = 0.001


@pytest.mark.slow
@pytest.mark.parametrize(("method", "n_fits"), [("balanced", 60), ("binomial", 40), ("ordinal", 40)])
def test_ranks_are_uniform(method, n_fits):
    run = bt.simulate.sbc_study(method=method, n_fits=n_fits, random_seed=3)
    table = run.uniformity()
    assert len(table) >= 7  # every SD and the grand mean
    assert table["n_rounds"].min() >= 0.5 * n_fits  # rounds left out for their data: 0-45% measured
    assert table["p_value"].min() > P_FLOOR, table


@pytest.mark.slow
def test_a_wrong_prior_is_caught():
    # simulated from SD priors of scale 1, fitted with scale 5: the ranks pile up
    wide = bt.priors.PriorSpec(name="wide", reference=(0.0, 5.0))
    run = bt.simulate.sbc_study(method="balanced", n_fits=30, random_seed=2, fit_priors=wide)
    table = run.uniformity()
    assert table["p_value"].min() < 0.01
    fig = run.plot()  # one rank histogram per parameter
    assert len([ax for ax in fig.axes if ax.patches]) == len(table)


def test_prior_draws_and_simulated_scores_follow_the_design():
    df = bt.simulate.tee_dgp(5, 2, 2, 1, 2, outcome="ordinal", random_seed=0)
    d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", judge="judge",
                           replicate="replicate", family="ordinal")  # fmt: skip
    rng = np.random.default_rng(0)
    truth = prior_draw(d, SBC_PRIOR, rng)
    assert {t.var_name for t in d.terms if t.kind == "random"} <= set(truth)
    assert np.all(np.diff(truth["cutpoints"]) > 0) and abs(truth["cutpoints"].sum()) < 1e-12
    assert abs(truth["judge_effect"].sum()) < 1e-12
    y = simulate_scores(d, truth, rng)
    assert y.shape == (d.n_rows,) and set(np.unique(y)) <= set(d.outcome_levels)
    with pytest.raises(bt.ArgumentError, match="reference"):
        prior_draw(d, bt.priors.PriorSpec(), rng)
