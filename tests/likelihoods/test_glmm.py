"""Logit GLMM: recovery at two base rates, probability-scale answers, degenerate cells, the
LPM/GLMM comparison and input errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.design.terms import model_terms
from bayes_tee.tee import fit as tee_fit

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
    category="category",
)
LOGIT_COMPONENTS = {
    "item": 1.5,
    "category": 0.3,
    "prompt": 0.05,
    "item:prompt": 0.15,
    "item:temperature": 0.05,
    "prompt:temperature": 0.02,
    "item:judge": 0.4,
    "prompt:judge": 0.05,
    "cell": 0.2,
}
SAMPLER = dict(tune=600, draws=600, progressbar=False)
# short test fits of sampled random effects: the tests assert their own diagnostic bounds
pytestmark = pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")


def _logit_data(base: float, seed: int):
    return bt.simulate.tee_dgp(
        n_items=48,
        n_prompts=3,
        n_judges=3,
        n_temperatures=2,
        n_replicates=4,
        n_categories=4,
        components=LOGIT_COMPONENTS,
        judge_effects=[-0.6, 0.0, 0.6],
        temperature_effects=[-0.2, 0.2],
        mu=float(np.log(base / (1 - base))),
        outcome="logit",
        random_seed=seed,
    )


def _fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)  # asserted per test
        return bt.fit_posterior(df, **ROLES, **{**SAMPLER, **kw})


@pytest.fixture(scope="module")
def half():
    # at the default draws: the chains stop at the first checkpoint whose diagnostics pass (at
    # 4 x 600 draws the slowest SDs, item x prompt, item x temperature and the cell's, had a bulk
    # ESS of 71-340 over eight seeds of the sampler, old layout and new, and R-hat up to 1.064)
    df = _logit_data(0.5, 3)
    return df, _fit(df, family="binomial", random_seed=1, draws=None)


@pytest.fixture(scope="module")
def high():
    # near separation (94% successes): sigma_cell mixes slowly, more so since the few-level
    # terms' data-adapted coordinates (bulk ESS 36 at 4 x 600 draws, R-hat 1.084; 117 and
    # 1.025 before), so this fit samples longer: 4 x 1500 draws, R-hat 1.025, ESS 199
    df = _logit_data(0.94, 5)
    return df, _fit(df, family="binomial", random_seed=2, draws=1500)


def _covered(post, truth):
    c = post.components(level=0.9)
    c = c[c["component"].isin([k for k in truth if k != "replicate"])]
    return {r.component: bool(r.low <= truth[r.component] <= r.high) for r in c.itertuples()}


@pytest.mark.slow
@pytest.mark.parametrize("which", ["half", "high"])
def test_recovery_on_the_logit_scale(which, request):
    df, post = request.getfixturevalue(which)
    truth = df.attrs["truth"]
    d = post.diagnostics()
    # short fits of sampled effects: the geometry must not be broken (the warning shows the rest)
    assert d["divergences"] <= 0.01 * d["n_draws"] and d["max_rhat"] < 1.05, d
    hits = _covered(post, truth)
    assert len(hits) == 11
    assert sum(hits.values()) >= 9, hits
    # the two largest Var(theta_hat) shares on the latent scale rank as in the truth
    sh = post.shares().set_index("component")["share_median"]
    facets = {t.label: t.facets for t in post.terms}
    div = bt.components.divisors(list(truth), post.design.counts, facets=facets)
    contrib = {k: v / dv for (k, v), dv in zip(truth.items(), div)}
    assert (
        list(sh.sort_values(ascending=False).index[:2]) == sorted(contrib, key=contrib.get, reverse=True)[:2]
    )
    assert post.components().attrs.get("scale", post.scale) == "latent (logit)"
    rep = post.components().set_index("component").loc["replicate"]
    assert rep["median"] == pytest.approx(np.pi**2 / 3)


@pytest.mark.slow  # two GLMM fits, about 45 s each
@pytest.mark.parametrize("which", ["half", "high"])
def test_probability_scale_theta_matches_the_data(which, request):
    df, post = request.getfixturevalue(which)
    th = post.theta(n_draws=150, sims_per_draw=40).iloc[0]
    ybar = df["score"].mean()
    assert th["panel_low"] <= ybar <= th["panel_high"]
    assert abs(th["estimate"] - ybar) < 0.01
    assert th["tee_low"] < th["panel_low"] and th["tee_high"] > th["panel_high"]
    assert th["tee_se"] > 3 * th["naive_se"]  # judges and prompts add far more than call noise


@pytest.mark.slow
def test_probability_shares_agree_with_the_lpm_near_one_half(half):
    df, glmm = half
    lpm = _fit(df, random_seed=3)
    p = glmm.shares(scale="probability", n_draws=150, sims_per_draw=60, random_seed=1).set_index("component")
    q = lpm.shares().set_index("component")
    assert p.attrs["scale"] == "probability"
    top = q["share_median"].sort_values(ascending=False).index[:2]
    assert set(p["share_median"].sort_values(ascending=False).index[:2]) == set(top)
    common = q.index.intersection(p.index)
    assert np.max(np.abs(p.loc[common, "share_median"] - q.loc[common, "share_median"])) < 0.12
    # on the latent scale the ranking is the same story; the comparison object says so
    cmp = lpm.link_comparison(glmm)
    assert {"lpm_share_median", "glmm_share_median", "lpm_rank", "glmm_rank"} <= set(cmp.table.columns)
    assert 0.6 < cmp.spearman["at_medians"] <= 1.0
    assert -1 <= cmp.spearman["low"] <= cmp.spearman["median"] <= cmp.spearman["high"] <= 1
    with pytest.raises(ValueError, match="gaussian"):
        glmm.link_comparison(glmm)
    with pytest.warns(DeprecationWarning, match="link_comparison"):  # the old spelling still works
        assert lpm.compare(glmm).table.equals(cmp.table)


def test_glmm_projection_by_simulation(half):
    _, post = half
    sim = post.simulate_design(n_items=[48, 200], n_draws=80, sims_per_draw=40, random_seed=2)
    assert np.isnan(sim["closed_form_se_median"]).all()
    assert (sim["se_median"] > 0).all() and sim["se_median"].iloc[1] < sim["se_median"].iloc[0]
    assert (np.abs(sim["bias"]) < 4 * sim["bias_mcse"]).all()
    assert (sim["coverage_naive"] < 0.6).all()


@pytest.mark.slow
def test_degenerate_cells_and_a_category_always_one():
    df = bt.simulate.tee_dgp(
        n_items=16,
        n_prompts=2,
        n_judges=2,
        n_temperatures=1,
        n_replicates=3,
        n_categories=4,
        components={"item": 2.0},
        mu=1.0,
        outcome="logit",
        random_seed=9,
    )
    df.loc[df["category"] == "c0", "score"] = 1  # a category whose items are always 1
    df.loc[df["item"] == "i001", "score"] = 0  # an item always 0: all-zero cells
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        post = bt.fit_posterior(
            df,
            **{k: v for k, v in ROLES.items() if k != "temperature"},
            family="binomial",
            random_seed=4,
            **SAMPLER,
        )
    comp = post.components()
    assert np.isfinite(comp[["median", "low", "high"]].to_numpy()).all()
    th = post.theta(n_draws=100, sims_per_draw=20)
    assert np.isfinite(th.drop(columns=["level"]).to_numpy(float)).all()
    d = post.diagnostics()
    if not d["ok"]:
        assert any(issubclass(w.category, bt.DiagnosticWarning) for w in caught)


def test_binomial_input_errors():
    df = bt.simulate.tee_dgp(
        n_items=6, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=1
    )
    with pytest.raises(bt.DesignError, match="'score'.*0/1"):
        bt.validate_design(df, outcome="score", item="item", family="binomial")
    with pytest.raises(bt.DesignError, match="family"):
        bt.validate_design(df, outcome="score", item="item", family="poisson")


def test_the_glmm_samples_longer_and_tunes_shorter_by_default(monkeypatch):
    seen = []

    def fake_sample(model, sampler, chains, tune, draws, *args, **kwargs):
        seen.append((tune, draws, kwargs["settled"]))
        raise RuntimeError("sampler reached")

    monkeypatch.setattr(tee_fit, "sample", fake_sample)
    df = _logit_data(0.8, seed=3)
    roles = dict(outcome="score", item="item", prompt="prompt")
    for kw in ({"family": "binomial"}, {}, {"family": "binomial", "draws": 300, "tune": 200}):
        with pytest.raises(RuntimeError, match="sampler reached"):
            bt.fit_posterior(df, **roles, progressbar=False, **kw)
    assert seen == [  # at the default draws a fit that fails its checks there goes on
        (tee_fit.GLMM_TUNE, tee_fit.EXTEND * tee_fit.GLMM_DRAWS, tee_fit.GLMM_DRAWS),
        (tee_fit.TUNE, tee_fit.EXTEND * tee_fit.DRAWS, tee_fit.DRAWS),
        (200, 300, None),
    ]
    assert (tee_fit.TUNE, tee_fit.DRAWS) == (1000, 2000)  # checkpoints stop most at 1000
    assert (tee_fit.GLMM_TUNE, tee_fit.GLMM_DRAWS) == (500, 4000)


def test_binomial_terms():
    labels = [
        t.label
        for t in model_terms(
            ("item", "prompt", "judge"), replicates=False, family="binomial", overdispersion=False
        )
    ]
    assert labels[-1] == "replicate" and "cell" not in labels
    labels = [t.label for t in model_terms(("item", "prompt", "judge"), replicates=True, family="binomial")]
    assert "cell" in labels and labels[-1] == "replicate"


def test_glmm_save_and_load_round_trip(half, tmp_path):
    _, post = half
    back = bt.load(post.save(tmp_path / "glmm.nc"))
    assert back.family == "binomial"
    assert back.components()["median"].tolist() == pytest.approx(post.components()["median"].tolist())


@pytest.mark.slow
def test_reliability_of_a_glmm_is_on_the_latent_scale(half):
    _, post = half
    with pytest.warns(bt.DesignWarning, match="judges fixed"):  # fixed or random judges: E rho^2 moves
        rel = post.reliability(n={"judge": [1, 3]})
    assert rel["erho2_median"].is_monotonic_increasing and (rel["phi_median"] <= rel["erho2_median"]).all()
    assert ((rel["erho2_low"] > 0) & (rel["erho2_high"] < 1)).all()
