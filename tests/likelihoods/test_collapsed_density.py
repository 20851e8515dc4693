"""The ``collapsed`` likelihood is exact: its log density of the SDs is the dense Gaussian marginal
likelihood of the cell means with every linear effect integrated out (up to a constant), its
gradient is that log density's, its coefficient draws are the exact conditional posterior, its C
callback is its kernel, and a fit through it is the marginal model's fit.
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.design.build import build_design
from bayes_tee.likelihoods import build_model, choose_method, method_note
from bayes_tee.likelihoods.collapsed.density import CollapsedDensity
from bayes_tee.likelihoods.collapsed.kernel import collapsed_coefficients
from bayes_tee.likelihoods.collapsed.layout import collapsed_limitation, design_matrix
from bayes_tee.likelihoods.kernels.prior import sd_prior

_DOUBLE_P = ctypes.POINTER(ctypes.c_double)

FORMULAS = {
    # replicates with calls lost: cells of 1, 2 and 3 calls, a cell term and a residual
    "calls lost": "score ~ model + judge + length + (1|item) + (1|item:model:judge)",
    "per-judge slopes": "score ~ model + judge + length + length:judge + (1|item) + (1|item:model:judge)",
    # one call per cell: the cell term is the residual
    "one call": "score ~ model + length + (1|item)",
    # one system and judge: the items are the cells (their intercept is the cell term)
    "items are cells": "score ~ length + (1|item)",
    # the judges' calls share a cell of item x system: the covariate varies within cells
    "within cells": "score ~ model + length + (1|item)",
}


def _design(case: str):
    df = bt.simulate.bias_dgp(n_items=14, n_replicates=3, random_seed=4)
    rng = np.random.default_rng(2)
    if case == "one call":
        df = df[df["judge"] == "j0"].groupby(["item", "model"], as_index=False).first()
    if case == "within cells":
        df = df.assign(length=df["length"] + rng.normal(scale=0.3, size=len(df)))
    if case == "items are cells":
        df = df[(df["judge"] == "j0") & (df["model"] == "m2")].drop(columns=["judge", "model"])
    df = df[rng.random(len(df)) > 0.2]  # calls lost, a few cells empty
    df = df.assign(score=40.0 + 7.0 * df["score"])  # far from 0 and 1: the centring is exercised
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        system = None if case == "items are cells" else "model"
        return build_design(df, formula=FORMULAS[case], system=system, warn=False)


def _dense(d, dens, x):
    """The log marginal likelihood of the cell means and the within-cell sums, built densely:
    ``y ~ N(X m0, V + X S0 X')`` with ``V`` the random effects' covariance.
    """
    X, m0, s0, _, _ = design_matrix(d, dens.priors)
    cells = d.cells
    y = cells["mean"].to_numpy() - X @ m0
    s2 = np.exp(2 * x)
    i_item, i_cell, i_res = dens._args[4:7]
    n = cells["n"].to_numpy()
    V = np.diag(s2[i_cell] + (s2[i_res] / n if i_res >= 0 else np.zeros(len(n))))
    if i_item >= 0:
        Z = (cells["item"].to_numpy()[:, None] == np.arange(len(d.levels["item"]))).astype(float)
        V += s2[i_item] * Z @ Z.T
    S = V + X @ np.diag(s0**2) @ X.T
    ll = -0.5 * (np.linalg.slogdet(S)[1] + y @ np.linalg.solve(S, y))
    if i_res >= 0:
        dof, ss = float((n - 1).sum()), float(cells["ss"].sum())
        ll += -0.5 * dof * np.log(s2[i_res]) - 0.5 * ss / s2[i_res]
    return ll, V, X, m0, s0, y


@pytest.mark.parametrize("case", [c for c in FORMULAS if c != "within cells"])
def test_the_log_density_is_the_dense_marginal_likelihood_and_its_gradient(case):
    d = _design(case)
    assert collapsed_limitation(d) is None and choose_method(d) == "collapsed"
    dens = CollapsedDensity(d, bt.priors.get_prior())
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(4):
        x = dens.initial_point(rng) + rng.normal(scale=0.7, size=dens.layout.ndim)
        value, grad = dens.logp_grad(x)
        prior = sd_prior(x, *dens._args[:4])[1]
        diffs.append(value - prior - _dense(d, dens, x)[0])
        step = 1e-6
        numeric = [
            (dens.logp_grad(x + e)[0] - dens.logp_grad(x - e)[0]) / (2 * step) for e in step * np.eye(x.size)
        ]
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)
    assert np.ptp(diffs) < 1e-8 * max(1.0, abs(np.mean(diffs))), diffs


@pytest.mark.parametrize("case", ["per-judge slopes", "within cells"])
def test_the_coefficients_integrate_out_of_the_marginal_model(case):
    """The marginal PyMC model (the coefficients sampled) is Gaussian in its coefficients at any
    SDs: integrating them out exactly (its Hessian by differences of its gradient) gives the
    collapsed log density up to a constant, covariates varying within cells included.
    """
    d = _design(case)
    assert d.covariates.within == (case == "within cells") and choose_method(d) == "collapsed"
    spec = bt.priors.get_prior()
    dens = CollapsedDensity(d, spec)
    model = build_model(d, spec, method="marginal")
    logp, dlogp = model.compile_logp(mode="FAST_COMPILE"), model.compile_dlogp(mode="FAST_COMPILE")
    point = model.initial_point()
    sds = [f"{t.var_name}_log__" for t in dens.var_terms]
    coef = [k for k in point if k not in sds]
    sizes = [np.size(point[k]) for k in coef]
    where = np.cumsum([0] + [np.size(point[k]) for k in point])
    at = {k: slice(where[i], where[i + 1]) for i, k in enumerate(point)}
    flat = np.concatenate([np.arange(where[-1])[at[k]] for k in coef])

    def unpack(v):
        return {k: v[at[k]].reshape(np.shape(point[k])) for k in point}

    diffs = []
    for seed in range(3):
        x = dens.initial_point(np.random.default_rng(seed))
        v = np.zeros(where[-1])
        for j, k in enumerate(sds):
            v[at[k]] = x[j]
        g = dlogp(unpack(v))[flat]
        hess = -np.array(
            [(dlogp(unpack(v + e))[flat] - dlogp(unpack(v - e))[flat]) / 2 for e in np.eye(v.size)[flat]]
        )
        hess = 0.5 * (hess + hess.T)
        integral = logp(unpack(v)) + 0.5 * g @ np.linalg.solve(hess, g) - 0.5 * np.linalg.slogdet(hess)[1]
        diffs.append(dens.logp_grad(x)[0] - integral - 0.5 * sum(sizes) * np.log(2 * np.pi))
    assert np.ptp(diffs) < 1e-7 * max(1.0, abs(np.mean(diffs))), diffs


@pytest.mark.parametrize("case", ["calls lost", "one call"])
def test_the_coefficients_are_drawn_from_their_exact_conditional_posterior(case):
    """``m0 + H^-1 r + L^-T zeta``: at ``zeta = 0`` the GLS posterior mean, and its columns over
    unit ``zeta`` the factor of the dense posterior covariance.
    """
    d = _design(case)
    dens = CollapsedDensity(d, bt.priors.get_prior())
    x = dens.initial_point(np.random.default_rng(1))
    _, V, X, m0, s0, y = _dense(d, dens, x)
    Vi = np.linalg.inv(V)
    cov = np.linalg.inv(np.diag(s0**-2) + X.T @ Vi @ X)
    mean = m0 + cov @ X.T @ Vi @ y
    p = X.shape[1]
    Z = np.vstack([np.zeros(p), np.eye(p)])
    beta = collapsed_coefficients(np.tile(x, (p + 1, 1)), Z, m0, *dens._coef_args)
    np.testing.assert_allclose(beta[0], mean, rtol=1e-8, atol=1e-8)
    root = (beta[1:] - beta[0]).T  # column j: L^-T e_j
    np.testing.assert_allclose(root @ root.T, cov, rtol=1e-7, atol=1e-10)
    # the reported coefficients are these, mapped through the zero-sum bases
    out = dens.derive_draws(x[None])
    assert set(out) == {name for name, _ in dens.derived}
    assert abs(float(out["system_effect"].sum())) < 1e-9


def test_the_callback_is_the_kernel():
    dens = CollapsedDensity(_design("per-judge slopes"), bt.priors.get_prior())
    logp_cb, _, table, keep = dens.callback()
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = np.ascontiguousarray(dens.initial_point(rng), dtype=np.float64)
        out, value = np.zeros_like(x), np.zeros(1)
        code = logp_cb.ctypes(
            x.size, x.ctypes.data_as(_DOUBLE_P), out.ctypes.data_as(_DOUBLE_P),
            value.ctypes.data_as(_DOUBLE_P), table.ctypes.data_as(ctypes.c_void_p),
        )  # fmt: skip
        ref, grad = dens.logp_grad(x)
        assert code == 0 and value[0] == pytest.approx(ref, rel=1e-12)
        np.testing.assert_allclose(out, grad, rtol=1e-10, atol=1e-10)
    del keep


def test_designs_it_cannot_fit_are_refused_and_routed_elsewhere():
    df = bt.simulate.bias_dgp(n_items=10, random_seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        crossed = build_design(df, formula="score ~ model + length + (1|item) + (1|judge)", system="model")
        slopes = build_design(
            df, formula="score ~ model + length + (1|item) + (1|judge) + (0 + length|judge)", system="model"
        )
    assert "judge" in collapsed_limitation(crossed) and choose_method(crossed) in ("marginal", "cells")
    assert "random slope" in collapsed_limitation(slopes) or "judge" in collapsed_limitation(slopes)
    with pytest.raises(bt.ArgumentError, match="collapsed"):
        CollapsedDensity(crossed, bt.priors.get_prior())
    d = _design("one call")
    assert "integrated out exactly" in method_note(d, "collapsed")


@pytest.mark.slow
def test_a_collapsed_fit_is_the_marginal_models_fit():
    """The same posterior as the marginal model (which samples the coefficients): every SD,
    slope and system effect agrees to within Monte Carlo error, and the fit is clean.
    """
    d_df = bt.simulate.bias_dgp(n_items=30, random_seed=7)
    fits = {}
    for method in ("collapsed", "marginal"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DesignWarning)
            fits[method] = bt.fit_posterior(
                d_df, formula="score ~ model + judge + length + length:judge + (1|item)", system="model",
                method=method, random_seed=3, progressbar=False, draws=1000,
            )  # fmt: skip
    a, b = fits["collapsed"], fits["marginal"]
    assert a.method == "collapsed" and a.diagnostics()["ok"]
    assert a.info["n_free_parameters"] == 2  # the item's SD and the residual's
    for name in ("sigma_item", "sigma_residual", "mu", "beta_length", "beta_length_judge", "system_effect"):
        x, y = a.idata["posterior"][name], b.idata["posterior"][name]
        sd = float(np.max(x.std(("chain", "draw"))))
        gap = float(np.max(np.abs(x.mean(("chain", "draw")) - y.mean(("chain", "draw")))))
        assert gap < 0.15 * sd, (name, gap, sd)  # MC error of two means of ~4000 draws: ~0.03 SD
        ratio = x.std(("chain", "draw")) / y.std(("chain", "draw"))
        assert np.all(np.abs(ratio - 1) < 0.12), (name, ratio.values)
