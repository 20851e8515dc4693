"""Covariates' answers from hand-built draws (no sampling): the slopes per unit, the controlled
leaderboard and pairs against their closed forms, the control's own uncertainty, and the errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayes_tee as bt
from bayes_tee._core.priors import get_prior
from bayes_tee._core.trees import draws_tree
from bayes_tee.design.from_formula import validate_formula
from bayes_tee.posterior import coefficients, controls, leaderboard
from bayes_tee.posterior.facade import posterior_for

EFFECTS = np.array([-0.3, 0.0, 0.3])
LENGTH_SD = 80.0


def design(per_system_length=(400.0, 500.0, 700.0), seed=0):
    """Items x 3 systems x 2 judges; each system writes outputs of its own mean length."""
    rng = np.random.default_rng(seed)
    rows = [
        {"item": f"q{i}", "model": f"m{s}", "judge": f"j{j}",
         "length": per_system_length[s] + LENGTH_SD * rng.standard_normal(), "score": rng.normal()}
        for i in range(20) for s in range(3) for j in range(2)
    ]  # fmt: skip
    df = pd.DataFrame(rows)
    formula = "score ~ model + judge + length + length:judge + (1|item) + (1|item:model)"
    return validate_formula(df, formula, system="model"), df


def fit_from_draws(terms, d, beta=0.2, beta_sd=0.0, dev=(0.05, -0.05), shape=(2, 500), seed=1):
    """Draws (``terms``: the ``hand_built_terms`` fixture) with the system effects
    :data:`EFFECTS`, a common slope ``beta`` per SD (its own posterior SD ``beta_sd``) and judge
    deviations ``dev``.
    """
    rng = np.random.default_rng(seed)
    data = terms(d, EFFECTS, lambda label: 0.3, rng, shape, jitter=0.01, noise=1e-4)
    jitter = 1e-6 * rng.standard_normal(shape)  # draws that vary: the diagnostics are defined
    data["beta_length"] = xr.DataArray(
        beta + beta_sd * rng.standard_normal(shape) + jitter, dims=("chain", "draw")
    )
    data["beta_length_judge"] = xr.DataArray(
        np.asarray(dev) + np.stack([jitter, -jitter], axis=-1), dims=("chain", "draw", "judge"),
        coords={"judge": list(d.levels["judge"])},
    )  # fmt: skip
    return posterior_for(draws_tree(xr.Dataset(data)), d, get_prior(), "marginal")


@pytest.fixture(scope="module")
def sharp(hand_built_terms):
    d, df = design()
    return fit_from_draws(hand_built_terms, d), df


def test_slopes_are_reported_per_unit_and_per_level(sharp):
    post, df = sharp
    table = coefficients.coefficients(post)
    sd = df["length"].std()
    common = table.iloc[0]
    assert common["term"] == "length" and common["kind"] == "slope"
    assert np.isclose(common["estimate"], 0.2 / sd) and np.isclose(common["per_sd"], 0.2)
    levels = table[table["kind"] == "level slope"].set_index("level")
    assert np.allclose(levels["estimate"], (0.2 + np.array([0.05, -0.05])) / sd)


def test_uncontrolled_and_controlled_scores_are_their_closed_forms(sharp):
    post, df = sharp
    d = post.design
    z = (df["length"] - d.covariates.center[0]) / d.covariates.scale[0]
    judge_dev = df["judge"].map({"j0": 0.05, "j1": -0.05})
    # each system's mean of mu + effect + slope(judge) * z over its calls
    own = (
        (1.0 + df["model"].map(dict(zip(["m0", "m1", "m2"], EFFECTS))) + (0.2 + judge_dev) * z)
        .groupby(df["model"])
        .mean()
    )
    raw = leaderboard.leaderboard(post).set_index("system")
    assert np.allclose(raw.loc[own.index, "estimate"], own, atol=1e-3)
    assert raw.attrs["control"].startswith("uncontrolled")
    v = 450.0
    zv = (v - d.covariates.center[0]) / d.covariates.scale[0]
    at = leaderboard.leaderboard(post, control={"length": v}).set_index("system")
    closed = 1.0 + EFFECTS + 0.2 * zv  # the judges' deviations average out over the two judges
    assert np.allclose(at.loc[["m0", "m1", "m2"], "estimate"], closed, atol=1e-3)
    assert at.attrs["control"] == "controlled at length = 450"
    pairs = leaderboard.pairs(post, control={"length": v}).set_index(["system_a", "system_b"])
    assert np.isclose(pairs.loc[("m2", "m0"), "difference"], 0.6, atol=1e-3)
    # the longer writer loses its length advantage when controlled
    assert raw.loc["m2", "estimate"] - raw.loc["m0", "estimate"] > 0.6 + 0.1


def test_the_control_carries_the_slopes_uncertainty(hand_built_terms):
    d, _ = design()
    sure = fit_from_draws(hand_built_terms, d, beta_sd=0.0)
    unsure = fit_from_draws(hand_built_terms, d, beta_sd=0.1)
    for post in (sure, unsure):
        assert leaderboard.leaderboard(post).attrs["control"].startswith("uncontrolled")
    zero = {"length": 0.0}

    def width(post, control):
        p = leaderboard.pairs(post, control=control).set_index(["system_a", "system_b"]).loc[("m2", "m0")]
        return p["high"] - p["low"]

    # uncontrolled: the systems' own means, whatever the slope; controlled: the slope moves them apart
    assert np.isclose(width(sure, None), width(unsure, None), rtol=0.02)
    assert width(unsure, zero) > width(sure, zero) * 1.5
    adj = controls.adjustment(unsure, zero)
    # the shift's variance is Var(beta) times the squared gap of the two systems' mean covariates
    gap = controls._weights(unsure, 0, None, None)
    expected = 0.1**2 * (gap[2] - gap[0]) ** 2
    assert np.isclose(adj.pair_variance(2, 0, "panel"), expected, rtol=0.15)


def test_controls_are_refused_with_the_fix(sharp, hand_built_comparison):
    post, _ = sharp
    with pytest.raises(bt.DesignError, match="is a factor of the model"):
        leaderboard.leaderboard(post, control={"judge": 0})
    with pytest.raises(bt.DesignError, match="not in the model"):
        leaderboard.leaderboard(post, control={"verbosity": 0})
    with pytest.raises(bt.DesignError, match="finite number"):
        leaderboard.pairs(post, control={"length": "long"})
    plain = hand_built_comparison(np.array([0.0, 0.2]), n_items=8, shape=(1, 50))
    with pytest.raises(bt.DesignError, match="has no covariates"):
        leaderboard.leaderboard(plain, control={"length": 0})
    with pytest.raises(bt.DesignError, match="has no covariates"):
        coefficients.coefficients(plain)
    assert "control" not in leaderboard.leaderboard(plain).attrs


def test_variance_explained_sits_beside_the_components(sharp):
    post, _ = sharp
    table = coefficients.covariate_variance(post)
    assert table["term"].tolist() == ["length", "length:judge"]
    row = table.set_index("term").loc["length"]
    assert np.isclose(row["variance"], 0.2**2, rtol=0.05)  # E[z^2] ~ 1 over the calls
    assert 0 < row["share"] < 1


def test_the_command_line_and_the_json_document_take_controls(sharp, tmp_path, capsys):
    from bayes_tee.cli import main
    from bayes_tee.posterior.leaderboard_json import leaderboard_document, read_leaderboard_json

    post, _ = sharp
    doc = leaderboard_document(post, control={"length": 450.0}, pairs="none")
    assert doc["control"] == "controlled at length = 450"
    assert read_leaderboard_json(doc)["leaderboard"].attrs["control"] == doc["control"]
    assert leaderboard_document(post, pairs="none")["control"].startswith("uncontrolled")
    path = post.save(tmp_path / "cov.nc")
    assert main(["leaderboard", str(path), "--control", "length=450"]) == 0
    assert "controlled at length = 450." in capsys.readouterr().out
    assert main(["leaderboard", str(path), "--control", "length"]) == 1
    assert "COLUMN=VALUE" in capsys.readouterr().err
    assert main(["leaderboard", str(path), "--control", "judge=1"]) == 1
    assert "is a factor of the model" in capsys.readouterr().err
