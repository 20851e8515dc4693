"""Gaussian fits at the default draws stop at a checkpoint as the GLMMs do, on both of nutpie's
other paths (a NumPy density, a PyMC model compiled by nutpie): the draws kept are exactly a
fixed run's of that length, and a fit records what it kept.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee._core import sampling
from bayes_tee.families import get_family
from bayes_tee.likelihoods import build_model, get_likelihood
from bayes_tee.tee.fit import CHECKPOINT_STEP, EXTEND, FIRST_CHECKPOINT, sampler_settings, standardize


def _df(lost: float = 0.0):
    df = bt.simulate.tee_dgp(
        n_items=15, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=3
    )
    return df.sample(frac=1 - lost, random_state=1) if lost else df


def _design(lost: float = 0.0):
    return bt.validate_design(
        _df(lost), outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate"
    )


@pytest.mark.parametrize("stop_ess", [1.0, np.inf])
@pytest.mark.parametrize(
    "method", ["augmented", pytest.param("marginal", marks=pytest.mark.slow)]
)  # a NumPy density; a PyMC model nutpie compiles
def test_a_checkpointed_gaussian_run_keeps_a_fixed_runs_draws(monkeypatch, method, stop_ess):
    monkeypatch.setattr(sampling, "STOP_ESS", stop_ess)
    monkeypatch.setattr(sampling, "MAX_RHAT", np.inf)  # 30 draws: only the ESS decides
    spec = bt.priors.get_prior()
    std, _, _ = standardize(_design(lost=0.1 if method == "augmented" else 0.0), spec)
    lk = get_likelihood(method, std)
    density = lk.density(std, spec) if lk.density is not None else None
    model = build_model(std, spec, method=method) if density is None else None
    common = {"chains": 2, "tune": 60, "target_accept": 0.9, "seed": 7, "progressbar": False}
    if density is None:  # one native compile for every run of this test (a seeded run's draws
        # do not depend on whether its compiled model is fresh: test_predictive.py)
        common["reuse"] = ("test_checkpoints marginal", {})
    idata, timing = sampling.sample(
        model, "nutpie", draws=90, density=density, checkpoints=(30, 60), **common
    )
    kept, looks = timing["durations"]["draws_kept"], timing["durations"]["checkpoints"]
    expected = "native" if density is None else ("callback" if hasattr(density, "callback") else "none")
    assert timing["durations"]["compiled_with"] == expected
    if stop_ess == 1.0:
        assert kept == 30 and len(looks) == 1
    else:
        assert kept == 90 and [c["draws"] for c in looks] == [30, 60]
    assert idata["posterior"].sizes["draw"] == idata["sample_stats"].sizes["draw"] == kept
    fixed, _ = sampling.sample(model, "nutpie", draws=kept, density=density, **common)
    assert set(fixed["posterior"].data_vars) == set(idata["posterior"].data_vars)
    for name in fixed["posterior"].data_vars:
        np.testing.assert_allclose(idata["posterior"][name], fixed["posterior"][name], rtol=1e-10)


@pytest.mark.parametrize("settled", [None, 60])
def test_from_the_default_draws_a_look_stops_once_the_checks_pass(monkeypatch, settled):
    # every look sees R-hat 1.0 and an ESS between the diagnostics' threshold and the margin
    between = (sampling.MIN_ESS + sampling.STOP_ESS) / 2
    diag = {"max_rhat": 1.0, "min_ess_bulk": between, "min_ess_tail": between, "divergences": 0}
    monkeypatch.setattr(sampling, "check", lambda tree, names: diag)
    spec = bt.priors.get_prior()
    std, _, _ = standardize(_design(lost=0.1), spec)
    density = get_likelihood("augmented", std).density(std, spec)
    _, timing = sampling.sample(
        None, "nutpie", chains=2, tune=30, draws=120, target_accept=0.9, seed=7, progressbar=False,
        density=density, checkpoints=(30, 60, 90), settled=settled,
    )  # fmt: skip
    looks = [c["draws"] for c in timing["durations"]["checkpoints"]]
    # below ``settled`` only the margin stops a run; from it on, the checks themselves
    assert (timing["durations"]["draws_kept"], looks) == (
        (120, [30, 60, 90]) if settled is None else (60, [30, 60])
    )


def test_gaussian_fits_at_the_default_draws_stop_at_a_checkpoint():
    s = sampler_settings(get_family("gaussian"), random_seed=1)
    assert (s.settled, s.draws) == (2000, EXTEND * 2000)
    assert s.checkpoints == tuple(range(FIRST_CHECKPOINT, s.draws, CHECKPOINT_STEP))
    assert s.checkpoints[:3] == (1000, 1500, 2000)
    assert sampler_settings(get_family("gaussian"), draws=500, random_seed=1).checkpoints == ()
    assert sampler_settings(get_family("gaussian"), draws=500, random_seed=1).settled is None
    pymc = sampler_settings(get_family("gaussian"), sampler="pymc", random_seed=1)
    assert (pymc.draws, pymc.checkpoints, pymc.settled) == (2000, (), None)  # no looks: the default draws
    post = bt.fit_posterior(
        _df(), outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate",
        random_seed=2, progressbar=False,
    )  # fmt: skip
    looks = post.info["checkpoints"]
    assert looks and looks[0]["draws"] == 1000
    assert post.info["draws"] in range(1000, 4001, 500) and post.info["draws_max"] == 4000
    assert post.idata["posterior"].sizes["draw"] == post.info["draws"]
    # it stopped at the first look that passed (with margin below the default 2000), or ran to
    # the most draws
    need = [sampling.STOP_ESS if c["draws"] < 2000 else sampling.MIN_ESS for c in looks]
    passed = [c["max_rhat"] <= 1.01 and c["min_ess"] >= e for c, e in zip(looks, need, strict=True)]
    assert passed[:-1] == [False] * (len(looks) - 1)
    assert passed[-1] == (post.info["draws"] == looks[-1]["draws"])
    if passed[-1]:  # a look diagnoses what the fit's own diagnostics do, the fixed judges too
        d = post.diagnostics()
        assert looks[-1]["max_rhat"] == round(d["max_rhat"], 4)
        assert looks[-1]["min_ess"] == round(min(d["min_ess_bulk"], d["min_ess_tail"]), 1)
