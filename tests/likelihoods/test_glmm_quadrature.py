"""The GLMM's integrated cell effect: adaptive Gauss-Hermite quadrature against numerical
integration, its exact gradient, and the numba density against the PyMC model it mirrors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from scipy import integrate
from scipy.optimize import minimize_scalar
from scipy.special import expit, gammaln

import bayes_tee as bt
from bayes_tee.likelihoods.logit_glmm.crossed_kernel import crossed_forward
from bayes_tee.likelihoods.logit_glmm.density import BinomialDensity
from bayes_tee.likelihoods.logit_glmm.model import binomial_model, fixed_through_terms, glmm_terms
from bayes_tee.likelihoods.logit_glmm.quadrature import NODES, cell_marginal
from bayes_tee.likelihoods.logit_glmm.quadrature_kernel import cell_quadrature


def _log_integrand(t, k, n, eta, sd):
    return k * t - n * np.logaddexp(0, t) - (t - eta) ** 2 / (2 * sd**2)


def _exact(k, n, eta, sd):
    """Log of the binomial likelihood integrated over t ~ N(eta, sd), by adaptive quadrature
    around the integrand's mode.
    """
    lo, hi = eta - (n - k) * sd**2 - 1, eta + k * sd**2 + 1
    m = minimize_scalar(
        lambda t: -_log_integrand(t, k, n, eta, sd),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    ).x
    top = _log_integrand(m, k, n, eta, sd)
    s = 1 / np.sqrt(n * expit(m) * (1 - expit(m)) + 1 / sd**2)
    v, _ = integrate.quad(
        lambda t: np.exp(_log_integrand(t, k, n, eta, sd) - top),
        m - 60 * s,
        m + 60 * s,
        points=[m],
        limit=500,
        epsabs=0,
        epsrel=1e-13,
    )
    log_binom = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return np.log(v) + top - np.log(np.sqrt(2 * np.pi) * sd) + log_binom


CASES = [
    (k, n, eta)
    for n in (1, 2, 8, 40)
    for k in sorted({0, 1, n // 2, n - 1, n})
    for eta in (-8, -3, 0, 2, 5, 10)
]


@pytest.mark.parametrize(("sd", "tol"), [(0.05, 1e-10), (0.3, 1e-9), (1.0, 3e-5), (2.0, 3e-3)])
def test_quadrature_matches_numerical_integration(sd, tol):
    k, n, eta = (np.array(c, float) for c in zip(*CASES))
    ll, _ = cell_marginal(pt.as_tensor(eta), k.astype(int), n, pt.as_tensor(sd))
    exact = np.array([_exact(*c, sd) for c in CASES])
    err = np.abs(ll.eval() - exact)
    assert err.max() < tol, CASES[int(np.argmax(err))]
    # the numba kernel computes the same rule (it leaves the binomial coefficient out)
    x, w = np.polynomial.hermite.hermgauss(NODES)
    log_binom = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    kern = np.array([cell_quadrature(*c, sd, np.sqrt(2) * x, np.log(w) + x**2)[0] for c in zip(k, n, eta)])
    np.testing.assert_allclose(kern + log_binom, ll.eval(), rtol=0, atol=1e-8)


@pytest.mark.parametrize("sd", [1e-6, 1e-12, 1e-19, 1e-150])
def test_a_vanishing_cell_sd_leaves_the_binomial_likelihood_smooth(sd):
    """As the cell SD goes to zero the marginal likelihood is the binomial one at eta, smoothly:
    a node's offset from eta is kept to its own precision (a sampler once sat at a step size of
    1e-5 where log sigma_cell reached -43 and the offsets were rounding noise).
    """
    x, w = np.polynomial.hermite.hermgauss(NODES)
    nodes, lw = np.sqrt(2) * x, np.log(w) + x**2
    for k, n, eta in CASES:
        ll, d_eta, d_sd, p = cell_quadrature(k, n, eta, sd, nodes, lw)
        binomial = k * eta - n * np.logaddexp(0.0, eta)
        assert ll == pytest.approx(binomial, abs=1e-9), (k, n, eta)
        assert d_eta == pytest.approx(k - n * expit(eta), abs=1e-8), (k, n, eta)
        assert p == pytest.approx(expit(eta), abs=1e-9)
        # d loglik / d log sd is O(sd^2): the log-scale gradient a sampler sees vanishes
        assert abs(sd * d_sd) < 1e-6, (k, n, eta, sd * d_sd)
        near = [cell_quadrature(k, n, eta + h, sd, nodes, lw)[0] for h in (-1e-5, 1e-5)]
        assert (near[1] - near[0]) / 2e-5 == pytest.approx(d_eta, abs=1e-5)


def test_more_nodes_converge_and_the_posterior_mean_probability_is_right():
    eta, sd = np.array([2.0, -1.0]), 1.5
    k, n = np.array([8, 3]), np.array([8.0, 8.0])
    ll9, p9 = (v.eval() for v in cell_marginal(pt.as_tensor(eta), k, n, pt.as_tensor(sd), nodes=9))
    ll31, p31 = (v.eval() for v in cell_marginal(pt.as_tensor(eta), k, n, pt.as_tensor(sd), nodes=31))
    np.testing.assert_allclose(ll9, ll31, atol=1e-3)
    # E[p | k]: the ratio of two integrals, by brute force on a grid
    t = np.linspace(-25, 25, 200_001)
    for j in range(2):
        dens = np.exp(
            _log_integrand(t, k[j], n[j], eta[j], sd) - _log_integrand(t, k[j], n[j], eta[j], sd).max()
        )
        assert p31[j] == pytest.approx(np.sum(dens * expit(t)) / np.sum(dens), abs=1e-6)
        assert p9[j] == pytest.approx(p31[j], abs=1e-3)


def test_the_gradient_follows_the_moving_nodes():
    """The autodiff gradient of the PyTensor rule equals finite differences of its value, also at
    a large cell SD where the nodes' dependence on eta and sigma matters.
    """
    eta = pt.dvector("eta")
    sd = pt.dscalar("sd")
    k, n = np.array([0, 3, 8, 8]), np.array([8.0, 8.0, 8.0, 40.0])
    total = cell_marginal(eta, k, n, sd)[0].sum()
    f = pytensor.function([eta, sd], [total, *pytensor.grad(total, [eta, sd])])
    e0, s0 = np.array([-2.0, 0.5, 4.0, -6.0]), 2.5
    _, g_eta, g_sd = f(e0, s0)
    h = 1e-6
    for j in range(4):
        d = np.zeros(4)
        d[j] = h
        assert g_eta[j] == pytest.approx((f(e0 + d, s0)[0] - f(e0 - d, s0)[0]) / (2 * h), rel=1e-6, abs=1e-8)
    assert g_sd == pytest.approx((f(e0, s0 + h)[0] - f(e0, s0 - h)[0]) / (2 * h), rel=1e-6)


def _binary(seed: int, drop: float = 0.0, replicates: int = 3, categories: bool = True) -> pd.DataFrame:
    df = bt.simulate.tee_dgp(
        n_items=24,
        n_prompts=3,
        n_judges=2,
        n_temperatures=1,
        n_replicates=replicates,
        n_categories=4 if categories else None,
        components={"item": 2.0, "item:judge": 1.0, "cell": 0.5, "prompt": 0.1},
        judge_effects=[-0.5, 0.5],
        mu=2.5,
        outcome="logit",
        random_seed=seed,
    )
    if drop:
        df = df.sample(frac=1 - drop, random_state=seed)
    return df


def _crossed(seed: int = 6, replicates: int = 6, cell: float = 0.3) -> pd.DataFrame:
    """Rates near one half and a strong prompt x judge term: every prompt x judge level pinned."""
    return bt.simulate.tee_dgp(
        n_items=20,
        n_prompts=3,
        n_judges=2,
        n_temperatures=1,
        n_replicates=replicates,
        n_categories=4,
        components={"item": 1.0, "item:judge": 0.5, "cell": cell, "prompt": 0.3, "prompt:judge": 1.0},
        judge_effects=[-0.5, 0.5],
        mu=0.0,
        outcome="logit",
        random_seed=seed,
    )


LAYOUTS = {
    "balanced": lambda: _binary(1),
    "prompt x judge centred on its main effects": _crossed,
    "calls lost and cells empty": lambda: _binary(2, drop=0.3),
    "no categories": lambda: _binary(3, categories=False),
    "one call per cell": lambda: _binary(4, replicates=1),
}


def _design(df):
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
    if "category" in df and df["category"].notna().all():
        roles["category"] = "category"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.validate_design(df, **roles, family="binomial")


@pytest.mark.parametrize("quadrature", [None, NODES], ids=["cell sampled", "cell integrated"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_numba_density_is_the_pymc_model(layout, quadrature):
    """The kernel's log density is the PyMC model's (at the point the kernel reads, plus the map's
    log Jacobian) at three points, and its gradient is its value's slope in every coordinate
    (central differences), so it is the model's gradient.
    """
    d = _design(LAYOUTS[layout]())
    priors = bt.priors.get_prior("half_normal" if quadrature else None)
    model = binomial_model(d, priors, quadrature=quadrature)
    dens = BinomialDensity(d, priors, quadrature=quadrature)
    # the Python linker, no rewrites: nothing compiled for three evaluations, and no gradient
    # graph (building it was most of this test's time)
    logp = model.compile_logp(mode=Mode(linker="py", optimizer=None))
    shapes = {k: np.shape(v) for k, v in model.initial_point().items()}
    names = {v.name: v.name.removesuffix("_log__").removesuffix("_zerosum__") for v in model.value_vars}
    assert set(names.values()) == {n for n, _, _ in dens.layout.parameters}
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = dens.initial_point(rng)
        value, grad = dens.logp_grad(x)
        # the model at the point the kernel reads (a crossed term's totals and main effects),
        # plus the map's log Jacobian (crossed_kernel)
        mapped, log_jac = crossed_forward(x, *dens._crossed)
        point = {k: mapped[dens.layout.slices[nm]].reshape(shapes[k]) for k, nm in names.items()}
        assert value == pytest.approx(logp(point) + log_jac, rel=1e-9)
        fd = np.empty_like(x)
        for j in range(x.size):
            e = np.zeros_like(x)
            e[j] = 1e-6
            fd[j] = (dens.logp_grad(x + e)[0] - dens.logp_grad(x - e)[0]) / 2e-6
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)


def test_levels_are_adapted_to_their_data_and_boundary_levels_plainly_non_centred():
    """No level is centred outright (a few-level interaction crossed on its main effects holds
    their totals, sampled in crossed_kernel's coordinates): levels seen with both outcomes get
    adapted coordinates, levels at a boundary (all successes) plainly non-centred ones, few-level
    terms are swept into the intercept, all alike, and the cell effect is non-centred throughout.
    """
    d = _design(_binary(5))
    k = np.round(d.cells["mean"] * d.cells["n"]).to_numpy()
    for g in glmm_terms(d):
        assert not g.centred.any() or (g.crossed and g.centred.all())
        if g.term.label == "cell":
            assert g.level_info is None
            continue
        if g.swept:
            assert len(g.labels) <= 30 and g.level_info is None
            continue
        k_l = np.bincount(g.cell_level, k, minlength=len(g.labels))
        n_l = np.bincount(g.cell_level, d.cells["n"].to_numpy(), minlength=len(g.labels))
        boundary = (k_l == 0) | (k_l == n_l)
        if not g.in_eta:  # told by its children: see the next tests
            continue
        assert boundary.any() and (~boundary).any()
        assert np.all(g.level_info[boundary] == 0.0) and np.all(g.level_info[~boundary] > 0.0)
    names = [g.name for g in glmm_terms(d)]
    assert names.index("u_category") < names.index("u_item")  # parents first
    assert "u_cell" in names and "u_cell" not in [g.name for g in glmm_terms(d, sample_cell=False)]


def _judged(n_judges: int, item_judge: float) -> pd.DataFrame:
    """Items of 10 replicates under 3 prompts per judge, rates near one half: levels pinned."""
    return bt.simulate.tee_dgp(
        n_items=60 if n_judges > 2 else 40,
        n_prompts=3,
        n_judges=n_judges,
        n_temperatures=1,
        n_replicates=10,
        n_categories=4,
        components={"item": 9.0, "item:judge": item_judge, "cell": 0.1},
        judge_effects=list(np.linspace(-0.3, 0.3, n_judges)),
        mu=0.0,
        outcome="logit",
        random_seed=7,
    )


def test_items_reach_the_data_through_their_widest_interaction():
    """The item x judge effects are drawn around their item's, their adapted coordinates sit
    around each level's rough total (item plus interaction, the sum the data pin down), and the
    item effect enters no cell directly.
    """
    d = _design(_judged(n_judges=2, item_judge=9.0))
    terms = glmm_terms(d)
    at = {g.term.label: j for j, g in enumerate(terms)}
    item, pairs = terms[at["item"]], terms[at["item:judge"]]
    assert not item.in_eta and pairs.in_eta and pairs.parent == at["item"] < at["item:judge"]
    # each item x judge level points at its own item
    np.testing.assert_array_equal(pairs.parent_index[pairs.cell_level], item.cell_level)
    # rough totals: the item's share (SD 3) and the interaction's (SD 3) both in them
    total = item.v_hat[pairs.parent_index]
    assert 0.5 < np.corrcoef(pairs.v_hat, total)[0, 1] < 0.9
    assert np.std(pairs.v_hat - total) > 1.5
    assert all(terms[at[t]].parent == -1 for t in ("item:prompt", "prompt:judge") if t in at)


def test_an_item_reached_through_its_judges_counts_their_spread():
    """An item reached through its item x judge effects is adapted with its calls' precision
    less what its children's spread adds; one judge always flagging it and the others never
    leaves both outcomes in its calls but each child at a boundary, plainly non-centred.
    """
    df = _judged(n_judges=4, item_judge=0.1)
    split = df["item"].isin(df["item"].unique()[:3])
    df.loc[split, "score"] = (df.loc[split, "judge"] == df["judge"].unique()[0]).astype(int)
    d = _design(df)
    terms = glmm_terms(d)
    at = {g.term.label: j for j, g in enumerate(terms)}
    item, pairs = terms[at["item"]], terms[at["item:judge"]]
    labels = np.asarray(item.labels)
    k = np.round(d.cells["mean"] * d.cells["n"]).to_numpy()
    k_i = np.bincount(item.cell_level, k, minlength=len(labels))
    n_i = np.bincount(item.cell_level, d.cells["n"].to_numpy(), minlength=len(labels))
    is_split = np.isin(labels, df.loc[split, "item"].astype(str).unique())
    assert ((k_i > 0) & (k_i < n_i))[is_split].all()  # both outcomes in every split item's calls
    assert np.all(pairs.level_info[np.isin(pairs.parent_index, np.flatnonzero(is_split))] == 0.0)
    adapted = item.level_info > 0.0  # items of SD 3: some all one outcome
    assert adapted[is_split].all() and adapted.mean() > 0.5
    n = d.cells["n"].to_numpy()
    p = (k + 0.5) / (n + 1.0)
    calls = np.bincount(item.cell_level, n * p * (1 - p), minlength=len(labels))  # logit precision
    assert np.all(item.level_info[adapted] < calls[adapted])


def test_a_few_level_interaction_is_centred_on_its_main_effects_where_it_crosses_them():
    """Prompt x judge is centred on the judge's fixed effect plus the prompt's, whatever its data
    (crossed_kernel samples it where the main effects integrate out: its totals centred where its
    data pin every level, adapted otherwise); with a prompt x judge pair never called the crossing
    is incomplete and it stays non-centred around zero.
    """
    d = _design(_crossed())
    terms = glmm_terms(d)
    at = {g.term.label: j for j, g in enumerate(terms)}
    pj = terms[at["prompt:judge"]]
    assert pj.swept and pj.centred.all() and pj.pinned  # every level pinned: its totals centred
    kinds = {kind: (p, index) for kind, p, index in pj.crossed}
    assert set(kinds) == {"fixed", "random"} and kinds["random"][0] == at["prompt"]
    assert not terms[at["prompt"]].in_eta and fixed_through_terms(terms) == {0}
    # each level points at its own prompt and judge
    cells = d.cells
    np.testing.assert_array_equal(kinds["random"][1][pj.cell_level], cells["prompt"].to_numpy())
    np.testing.assert_array_equal(kinds["fixed"][1][pj.cell_level], cells["judge"].to_numpy())
    weak = [g for g in glmm_terms(_design(_binary(5))) if g.crossed]
    assert weak and not any(g.pinned for g in weak)  # weakly informed: crossed, its totals adapted
    df = _crossed()
    gap = (df["prompt"] == df["prompt"].iloc[0]) & (df["judge"] == df["judge"].iloc[0])
    assert not any(g.crossed for g in glmm_terms(_design(df[~gap])))


def test_the_cell_effect_is_never_centred():
    """Even cells of many calls with both outcomes, which pin their effect, stay non-centred."""
    d = _design(_crossed(replicates=40, cell=3.0))
    k, n = np.round(d.cells["mean"] * d.cells["n"]).to_numpy(), d.cells["n"].to_numpy()
    p = (k + 0.5) / (n + 1)
    assert ((k > 0) & (k < n) & (n * p * (1 - p) * 3.0 > 5)).sum() > 20  # precise cells exist
    cell = next(g for g in glmm_terms(d) if g.term.label == "cell")
    assert not cell.centred.any()
