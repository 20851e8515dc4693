"""Slopes recovered with known truth, one fit per family: a common slope, per-judge slopes and a
random slope over judges (Gaussian, with the covariate varying within cells), and a common slope
for binary and Likert verdicts; the controlled leaderboard removes a length advantage the raw one
rewards; a saved fit keeps its covariates.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt

pytestmark = pytest.mark.slow


def simulate(family, seed, n_items=40, judges=4, reps=1, within=False):
    """Three systems, m2 the verbose one; each judge its own length slope ``0.5 + u_j``,
    ``u`` = -0.2, 0, 0.1, 0.2 (:func:`bayes_tee.studies.bias_designs.bias_dgp`).
    """
    u = np.array([-0.2, 0.0, 0.1, 0.2])[:judges]
    df = bt.simulate.bias_dgp(
        family, n_items, judge_slopes=u, n_replicates=reps, within_sd=0.5 if within else 0.0, random_seed=seed
    )
    return df, u


def fit(df, formula, family="gaussian", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        if "draws" in kw:  # few draws, by design
            warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(
            df, formula=formula, system="model", family=family, random_seed=3, progressbar=False, **kw
        )


FORMULA_JUDGE = "score ~ model + judge + length + length:judge + (1|item)"


def covers(row, truth):
    return row["low"] <= truth <= row["high"]


def test_gaussian_per_judge_slopes_and_the_controlled_board(tmp_path):
    df, u = simulate("gaussian", seed=11, reps=2, within=True)
    post = fit(df, FORMULA_JUDGE)
    assert post.diagnostics()["ok"]
    sd = df["length"].std()
    table = post.coefficients(level=0.99)
    common = table[table["kind"] == "slope"].iloc[0]
    assert covers(common, 0.5)  # per unit: the truth is per unit of x
    levels = table[table["kind"] == "level slope"].set_index("level")
    for j, uj in enumerate(u):
        assert covers(levels.loc[f"j{j}"], 0.5 + uj)
    assert np.isclose(common["per_sd"], common["estimate"] * sd)
    raw = post.leaderboard().set_index("system")["estimate"]
    at = post.leaderboard(control={"length": 0.0}).set_index("system")
    # m2's longer outputs lift its raw score by about 0.5; controlled, it ties with m1 (truth 0.2 each)
    assert raw["m2"] - raw["m1"] > 0.3
    pair = post.compare("m2", "m1", control={"length": 0.0}, level=0.99)
    assert pair["low"] < 0 < pair["high"]
    assert at.attrs["control"] == "controlled at length = 0"
    path = post.save(tmp_path / "cov.nc")
    back = bt.load(path)
    assert back.design.covariates == post.design.covariates
    pd.testing.assert_frame_equal(back.coefficients(), post.coefficients())
    # the items' and cells' random effects only: every coefficient integrated out, two SDs sampled
    # through the kernel compiled once per machine (nothing per layout)
    assert post.method == "collapsed" and post.info["n_free_parameters"] == 2
    assert post.info["compiled_with"] == "callback"
    # the marginal model samples the coefficients: its covariates are data containers, so another
    # study of the layout reuses the compiled model (new lengths, cell means and cross-products
    # swapped in), and swapping back gives the first fit's draws exactly
    short = dict(draws=200, tune=200, chains=2, method="marginal")
    first = fit(df, FORMULA_JUDGE, **short)
    other = fit(simulate("gaussian", seed=21, reps=2, within=True)[0], FORMULA_JUDGE, **short)
    again = fit(df, FORMULA_JUDGE, **short)
    assert other.info["reused_compiled"] and again.info["reused_compiled"]
    for v in ("beta_length", "beta_length_judge", "system_effect"):
        np.testing.assert_array_equal(again.idata.posterior[v].values, first.idata.posterior[v].values)
        assert not np.array_equal(other.idata.posterior[v].values, first.idata.posterior[v].values)


def test_gaussian_random_slope_over_judges():
    df, u = simulate("gaussian", seed=12, judges=4)
    post = fit(df, "score ~ model + length + (1|item) + (1|judge) + (0 + length|judge)")
    table = post.coefficients(level=0.99).set_index(["kind", "level"], drop=False)
    sd = (
        table.loc[("slope SD", None)]
        if ("slope SD", None) in table.index
        else table[table["kind"] == "slope SD"].iloc[0]
    )
    assert sd["low"] > 0 and sd["high"] > np.std(u)  # a four-judge SD: wide, above the truth's 0.15
    levels = table[table["kind"] == "level slope"].set_index("level")
    truth = 0.5 + u
    inside = [(levels.loc[f"j{j}", "low"] <= t <= levels.loc[f"j{j}", "high"]) for j, t in enumerate(truth)]
    assert all(inside)
    assert set(post.covariate_variance()["term"]) == {"length", "length|judge"}


@pytest.mark.parametrize("family", ["binomial", "ordinal"])
def test_glmm_common_slope(family):
    df, _ = simulate(family, seed=13, n_items=60, judges=2)
    post = fit(df, "score ~ model + judge + length + (1|item)", family=family, draws=600, tune=600)
    assert post.diagnostics()["ok"]
    row = post.coefficients(level=0.99).iloc[0]
    # the two judges' slopes 0.3 and 0.5 average 0.4 on the latent scale
    assert covers(row, 0.4)
    # the mean outcome's slope is the latent one times the link's slope where the data are
    # (p(1 - p) <= 1/4 for a success probability; below one score unit per latent unit here)
    ratio = row["outcome_estimate"] / row["estimate"]
    assert 0.1 < ratio < (0.25 if family == "binomial" else 1.0)
    assert row["outcome_low"] < row["outcome_estimate"] < row["outcome_high"]
    board = post.leaderboard(control={"length": 0.0})
    assert board.attrs["control"] == "controlled at length = 0"
    assert {"latent", "estimate"} <= set(board.columns)
