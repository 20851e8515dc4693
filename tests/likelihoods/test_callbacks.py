"""The kernels as C callbacks: the same log density and gradient as the kernels called from
Python, the same draws as the Python-callback path, and a run at the default draws that stops at
a checkpoint keeps exactly the draws a fixed run of that length gives.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayes_tee as bt
from bayes_tee._core import sampling
from bayes_tee._core.compile import compile_density
from bayes_tee.families import get_family
from bayes_tee.likelihoods.kernels.callbacks import NOT_FINITE, ORDINAL_KINDS, RAISED, callback, pack
from bayes_tee.likelihoods.logit_glmm.density import BinomialDensity
from bayes_tee.likelihoods.ordinal.density import OrdinalDensity
from bayes_tee.likelihoods.registry import LIKELIHOODS
from bayes_tee.tee.fit import CHECKPOINT_STEP, FIRST_CHECKPOINT, sampler_settings

_DOUBLE_P = ctypes.POINTER(ctypes.c_double)


def _likert(n_items=12, reps=2, drop=0.0, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    i, p, j, r = (a.ravel() for a in np.meshgrid(np.arange(n_items), np.arange(3), np.arange(3),
                                                  np.arange(reps), indexing="ij"))  # fmt: skip
    latent = rng.normal(0, 1, n_items)[i] + rng.normal(0, 0.3, 3)[p] + 0.3 * j + rng.logistic(size=i.size)
    df = pd.DataFrame({"item": i, "prompt": p, "judge": j, "rep": r,
                       "y": 1 + (latent[:, None] > np.array([-1.5, 0.0, 1.5])).sum(1)})  # fmt: skip
    df = df.astype({"item": str, "prompt": str, "judge": str})
    return df[rng.random(len(df)) >= drop].reset_index(drop=True)


def _design(df, **kw):
    return bt.build_design(df, outcome="y", item="item", prompt="prompt", judge="judge", warn=False, **kw)


def _call(density, x) -> tuple[int, float, np.ndarray]:
    """The C callback at ``x`` through ctypes: its return code, log density and gradient."""
    logp_cb, _, table, keep = density.callback()
    x = np.ascontiguousarray(x, dtype=np.float64)
    out, value = np.zeros_like(x), np.zeros(1)
    code = logp_cb.ctypes(
        x.size, x.ctypes.data_as(_DOUBLE_P), out.ctypes.data_as(_DOUBLE_P), value.ctypes.data_as(_DOUBLE_P),
        table.ctypes.data_as(ctypes.c_void_p),
    )  # fmt: skip
    del keep
    return int(code), float(value[0]), out


def _densities():
    df = _likert(drop=0.1)
    binary = df.assign(y=(df.y >= 3).astype(int))
    priors = bt.priors.get_prior()
    return {
        "ordinal": OrdinalDensity(_design(df, family="ordinal"), priors),
        "ordinal judge cutpoints, probit, spread": OrdinalDensity(
            _design(df, family="ordinal_probit", thresholds="judge", spread="judge"), priors
        ),
        "binomial": BinomialDensity(_design(binary, family="binomial"), priors),
        "binomial quadrature": BinomialDensity(_design(binary, family="binomial"), priors, quadrature=9),
        # the Gaussian kernels: the strata kernel's balanced specialization (its completion
        # code pruned) and its augmented one, and the item blocks
        "balanced": LIKELIHOODS["balanced"].density(_design(_likert()), priors),
        "augmented": LIKELIHOODS["augmented"].density(_design(df), priors),
        "blocks": LIKELIHOODS["blocks"].density(_design(df), priors),
    }


def test_the_callbacks_give_the_kernels_log_density_and_gradient():
    rng = np.random.default_rng(3)
    for name, dens in _densities().items():
        for _ in range(3):
            x = dens.initial_point(rng) + rng.normal(scale=0.5, size=dens.layout.ndim)
            value, grad = dens.logp_grad(x)
            code, c_value, c_grad = _call(dens, x)
            assert code == 0, name
            assert c_value == pytest.approx(value, rel=1e-12, abs=1e-9), name
            np.testing.assert_allclose(c_grad, grad, rtol=1e-10, atol=1e-10, err_msg=name)


def test_the_callbacks_free_what_they_allocate():
    """Every array a callback's kernel allocates is freed: numba's allocator counts balance over
    repeated calls (a reference too many on ``x`` in an argument reader leaks it every gradient,
    one too few frees it twice).
    """
    from numba.core.runtime import _nrt_python as nrt

    was_on = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        rng = np.random.default_rng(4)
        for name, dens in _densities().items():
            x = dens.initial_point(rng)
            _call(dens, x)  # compiled and warm
            before = nrt.memsys_get_stats_alloc() - nrt.memsys_get_stats_free()
            for _ in range(50):
                assert _call(dens, x)[0] == 0, name
            assert nrt.memsys_get_stats_alloc() - nrt.memsys_get_stats_free() == before, name
    finally:
        if not was_on:
            nrt.memsys_disable_stats()


def test_a_point_without_mass_is_rejected_not_fatal():
    dens = _densities()["ordinal"]
    x = dens.initial_point(np.random.default_rng(0))
    x[dens.layout.slices["cutpoint_gaps"]] = 800.0  # the gaps overflow: the density is not finite
    code, _, _ = _call(dens, x)
    assert code == NOT_FINITE  # positive: nutpie rejects the point and goes on


def test_a_kernel_that_raises_is_a_rejected_point_through_its_callback():
    """Where a kernel raises (an SD underflowed to zero divides), its callback returns
    ``RAISED``: the exception crosses the call by address (``invoker``) as a direct call's does.
    """
    df = bt.simulate.tee_dgp(n_items=12, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2,
                             random_seed=2)  # fmt: skip
    df = df[np.random.default_rng(1).random(len(df)) > 0.1]
    binary = df.assign(score=(df["score"] > df["score"].median()).astype(int))
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
    raised = 0
    for name in ("blocks", "binomial", "augmented"):
        lk = LIKELIHOODS[name]
        dens = lk.density(
            bt.validate_design(binary if lk.family == "binomial" else df, **roles, family=lk.family),
            bt.priors.get_prior(),
        )
        x = dens.initial_point(np.random.default_rng(0))
        for sd in [n for n, kind, _ in dens.layout.parameters if kind == "log"]:
            y = x.copy()
            y[dens.layout.slices[sd]] = -800.0  # exp(-800) == 0.0
            try:
                dens.logp_grad(y)
                expected = 0
            except ZeroDivisionError:
                expected, raised = RAISED, raised + 1
            assert _call(dens, y)[0] == expected, (name, sd)
    assert raised >= 3


def test_pack_refuses_arguments_the_callback_would_misread():
    dens = _densities()["ordinal"]
    table, keep = pack(dens._args + dens._crossed, ORDINAL_KINDS)
    assert table.shape == (len(ORDINAL_KINDS) + 1, 4) and len(keep) == len(ORDINAL_KINDS)
    assert table[-1, 0] != 0 and not table[-1, 1:].any()  # the last row: the kernel's address
    wrong = list(dens._args + dens._crossed)
    wrong[0] = wrong[0].astype(np.int32)
    with pytest.raises(TypeError, match="argument 0"):
        pack(tuple(wrong), ORDINAL_KINDS)
    with pytest.raises(TypeError, match="kinds"):
        pack(dens._args, ORDINAL_KINDS)
    assert callback("ordinal") is callback("ordinal")  # compiled once per process


def test_the_callback_path_samples_the_python_paths_draws():
    dens = _densities()["ordinal"]
    settings = {"chains": 2, "tune": 60, "draws": 40, "target_accept": 0.9, "seed": 5, "progressbar": False}
    idata, timing = sampling.sample(None, "nutpie", **settings, density=dens)
    assert timing["durations"]["compiled_with"] == "callback"
    ref = sampling._run_nutpie(
        compile_density(dens), settings["chains"], settings["tune"], settings["draws"],
        settings["target_accept"], settings["seed"], False, 0.0, False, "none",
    )[0]  # fmt: skip
    post, ref_post = idata["posterior"], ref["posterior"]
    assert set(post.data_vars) == set(ref_post.data_vars)
    for name in ref_post.data_vars:
        assert post[name].dims == ref_post[name].dims, name
        np.testing.assert_allclose(post[name], ref_post[name], rtol=1e-8, atol=1e-10, err_msg=name)
    assert idata["sample_stats"].sizes["draw"] == settings["draws"]


@pytest.mark.parametrize("stop_ess", [1.0, np.inf])
def test_a_checkpointed_run_keeps_a_fixed_runs_draws(monkeypatch, stop_ess):
    # a run passes its first checkpoint (any ESS will do) or none (no ESS will): either way its
    # draws are those of a fixed run of the length it kept
    monkeypatch.setattr(sampling, "STOP_ESS", stop_ess)
    monkeypatch.setattr(sampling, "MAX_RHAT", np.inf)  # 30 draws: only the ESS decides
    dens = _densities()["binomial"]
    common = {"chains": 2, "tune": 60, "target_accept": 0.9, "seed": 7, "progressbar": False}
    idata, timing = sampling.sample(None, "nutpie", draws=90, density=dens, checkpoints=(30, 60), **common)
    kept = timing["durations"]["draws_kept"]
    looks = timing["durations"]["checkpoints"]
    if stop_ess == 1.0:
        assert kept == 30 and len(looks) == 1
    else:
        assert kept == 90 and [c["draws"] for c in looks] == [30, 60]
    assert idata["posterior"].sizes["draw"] == idata["sample_stats"].sizes["draw"] == kept
    fixed, _ = sampling.sample(None, "nutpie", draws=kept, density=dens, **common)
    for name in fixed["posterior"].data_vars:
        np.testing.assert_allclose(idata["posterior"][name], fixed["posterior"][name], rtol=1e-10)


def test_fits_at_the_default_draws_record_what_they_kept():
    fam = get_family("ordinal")
    s = sampler_settings(fam, random_seed=1)
    assert s.checkpoints == tuple(range(FIRST_CHECKPOINT, s.draws, CHECKPOINT_STEP))
    assert sampler_settings(fam, draws=3000, random_seed=1).checkpoints == ()  # draws= fixes them
    assert sampler_settings(get_family("gaussian"), draws=1000, random_seed=1).checkpoints == ()


def test_a_look_waits_for_every_chain():
    # nutpie pads a chain behind the others with NaN: such a prefix is not a checkpoint's draws
    x = np.zeros((2, 5, 3))
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw", "unconstrained"), x)})})
    assert sampling._complete(tree, 5) and not sampling._complete(tree, 6)
    x[1, 4] = np.nan
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw", "unconstrained"), x)})})
    assert not sampling._complete(tree, 5)


def test_every_draws_derived_quantities_at_once_equal_one_at_a_time():
    rng = np.random.default_rng(4)
    for name, dens in _densities().items():
        if not hasattr(dens, "derive_draws"):  # the Gaussian kernels derive nothing
            continue
        X = np.stack([dens.initial_point(rng) for _ in range(5)])
        many = dens.derive_draws(X)
        for i in range(len(X)):
            one = dens.derive(X[i])
            for key, value in one.items():
                np.testing.assert_allclose(many[key][i], value, rtol=1e-12, atol=1e-12, err_msg=name + key)
