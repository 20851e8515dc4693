"""The ordinal (cumulative-link) GLMM: its numba density equals its PyMC model, its inputs are
checked, and a fit recovers known cutpoints and latent components.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.logit_glmm.crossed_kernel import N_INT, crossed_forward


def likert(
    n_items=24,
    n_prompts=3,
    n_judges=3,
    reps=2,
    K=5,
    judge_cuts=False,
    seed=0,
    drop=0.0,
    sd_item=1.2,
    spreads=None,
):
    """Likert scores from the cumulative-logit model: items, prompts, judges (fixed offsets),
    item x judge, and cutpoints common or per judge; returns the frame and the truth.
    """
    rng = np.random.default_rng(seed)
    item = rng.normal(0, sd_item, n_items)
    prompt = rng.normal(0, 0.4, n_prompts)
    judge = np.linspace(-0.5, 0.5, n_judges)
    ij = rng.normal(0, 0.5, (n_items, n_judges))
    base = np.linspace(-2.0, 2.0, K - 1)
    cuts = [base * (1.0 + 0.5 * j) if judge_cuts else base for j in range(n_judges)]
    rows = []
    for i in range(n_items):
        for v in range(n_prompts):
            for j in range(n_judges):
                for r in range(reps):
                    noise = rng.logistic() * (1.0 if spreads is None else spreads[j])
                    latent = 0.2 + item[i] + prompt[v] + judge[j] + ij[i, j] + noise
                    rows.append((f"i{i:02d}", f"p{v}", f"j{j}", r, 1 + int(np.sum(latent > cuts[j]))))
    df = pd.DataFrame(rows, columns=["item", "prompt", "judge", "rep", "y"])
    if drop:
        df = df[rng.random(len(df)) >= drop].reset_index(drop=True)
    truth = {"sigma_item": sd_item, "cuts": np.array([c - c.mean() for c in cuts]), "item": item}
    return df, truth


def design(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.build_design(df, outcome="y", item="item", prompt="prompt", judge="judge", **kw)


@pytest.mark.parametrize(
    ("family", "thresholds", "drop", "spread"),
    [
        ("ordinal", "common", 0.0, "common"),
        ("ordinal", "judge", 0.0, "common"),
        ("ordinal_probit", "common", 0.1, "common"),
        ("ordinal_probit", "judge", 0.1, "common"),
        ("ordinal", "common", 0.1, "judge"),
        ("ordinal_probit", "judge", 0.0, "judge"),
    ],
)
def test_ordinal_density_equals_the_pymc_model(family, thresholds, drop, spread, same_density):
    df, _ = likert(n_items=10, K=4, drop=drop, judge_cuts=True)
    d = design(df, family=family, thresholds=thresholds, spread=spread)
    same_density(d, family, n_points=2)


@pytest.mark.parametrize("judge_effect", ["fixed", "random"])
def test_a_crossed_interaction_samples_its_totals_and_main_effects_given_them(judge_effect, same_density):
    """Prompt x judge crosses the prompts and the judges (fixed or random): the density samples
    crossed_kernel's coordinates, which are the PyMC model's at the mapped point with the map's
    Jacobian, and reports the model's own (the judges' effects, the totals).
    """
    df, _ = likert(n_items=10, K=4, drop=0.1)
    d = design(df, family="ordinal", judge_effect=judge_effect)
    dens = bt.likelihoods.LIKELIHOODS["ordinal"].density(d, bt.priors.get_prior())
    pj = next(g for g in dens.terms if g.term.label == "prompt:judge")
    assert {kind for kind, _, _ in pj.crossed} == (
        {"fixed", "random"} if judge_effect == "fixed" else {"random"}
    )
    assert len(dens._crossed[0]) == N_INT
    same_density(d, "ordinal", n_points=2)
    # reported draws: every row mapped as one point is, and only the crossed term's coordinates
    # and its main effects' move
    rng = np.random.default_rng(1)
    X = np.stack([dens.initial_point(rng) for _ in range(3)])
    mapped = dens.report(X)
    np.testing.assert_array_equal(mapped[1], crossed_forward(X[1], *dens._crossed)[0])
    o, L, _, oa, La, _, ob, Lb = dens._crossed[0][:8]
    moved = np.zeros(X.shape[1], dtype=bool)
    moved[o + 1 : o + L] = moved[oa : oa + La - 1] = moved[ob : ob + Lb - 1] = True
    assert np.all(mapped[:, ~moved] == X[:, ~moved]) and np.all(mapped[:, moved] != X[:, moved])


def test_ordinal_gradient_matches_finite_differences():
    df, _ = likert(n_items=10, K=4, drop=0.1, judge_cuts=True)
    for family, kw in [("ordinal", {}), ("ordinal_probit", {}), ("ordinal", {"spread": "judge"})]:
        dens = bt.likelihoods.LIKELIHOODS[family].density(
            design(df, family=family, **kw), bt.priors.get_prior()
        )
        rng = np.random.default_rng(0)
        x = dens.initial_point(rng) + rng.normal(scale=0.3, size=dens.layout.ndim)
        grad = dens.logp_grad(x)[1]
        for k in rng.choice(dens.layout.ndim, 25, replace=False):
            step = np.zeros_like(x)
            step[k] = 1e-5
            fd = (dens.logp_grad(x + step)[0] - dens.logp_grad(x - step)[0]) / 2e-5
            assert abs(fd - grad[k]) <= 1e-7 * max(1.0, abs(fd)), (family, kw, k, fd, grad[k])
        if kw:  # every spread coordinate too
            for k in range(
                dens.layout.slices["judge_log_spread"].start, dens.layout.slices["judge_log_spread"].stop
            ):
                step = np.zeros_like(x)
                step[k] = 1e-5
                fd = (dens.logp_grad(x + step)[0] - dens.logp_grad(x - step)[0]) / 2e-5
                assert abs(fd - grad[k]) <= 1e-7 * max(1.0, abs(fd)), ("spread", k, fd, grad[k])


def test_ordinal_design_counts_and_checks():
    df, _ = likert(n_items=8, K=5)
    d = design(df, family="ordinal")
    counts = d.cells[d.count_columns].to_numpy()
    assert d.outcome_levels == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert (counts.sum(axis=1) == d.cells["n"]).all() and counts.sum() == len(df)
    first = df[(df["item"] == "i00") & (df["prompt"] == "p0") & (df["judge"] == "j0")]["y"]
    assert counts[0].tolist() == [int((first == k).sum()) for k in range(1, 6)]
    with pytest.raises(bt.DesignError, match="needs integer scores"):
        design(df.assign(y=df["y"] + 0.5), family="ordinal")
    with pytest.raises(bt.DesignError, match="3 or more categories.*family='binomial'"):
        design(df.assign(y=(df["y"] > 3).astype(int)), family="ordinal")
    with pytest.warns(bt.DesignWarning, match=r"Score\(s\) \[3\] of column 'y' were never given"):
        bt.build_design(df[df["y"] != 3], outcome="y", item="item", judge="judge", family="ordinal")
    with pytest.raises(bt.DesignError, match="thresholds='judge' gives each judge"):
        bt.build_design(df, outcome="y", item="item", family="ordinal", thresholds="judge")
    with pytest.raises(bt.DesignError, match="family='gaussian' has none"):
        design(df, thresholds="judge")
    with pytest.raises(bt.DesignError, match="family='gaussian' has none"):
        bt.build_design(df, formula="y ~ (1|item) + (1|judge)", thresholds="judge")
    # a formula's judge facet takes its own cutpoints too
    d = bt.build_design(df, formula="y ~ judge + (1|item)", family="ordinal", thresholds="judge")
    assert d.thresholds == "judge" and d.facets == ("item", "judge")
    with pytest.raises(bt.DesignError, match="thresholds='judge' gives each judge"):
        bt.build_design(df, formula="y ~ (1|item)", family="ordinal", thresholds="judge")
    with pytest.raises(bt.ArgumentError, match="method='rows'"):
        bt.fit_posterior(df, outcome="y", item="item", family="ordinal", method="rows", progressbar=False)
    with pytest.raises(bt.DesignError, match="spread='judge' gives each judge"):
        bt.build_design(df, outcome="y", item="item", family="ordinal", spread="judge")
    with pytest.raises(bt.DesignError, match="latent spread per judge; family='binomial' has none"):
        design(df.assign(y=(df["y"] > 3).astype(int)), family="binomial", spread="judge")
    with pytest.raises(bt.DesignError, match="judge_effect='fixed'"):
        design(df, family="ordinal", spread="judge", judge_effect="random")
    with pytest.raises(bt.DesignError, match="spread='per judge'|must be 'common' or 'judge'"):
        design(df, family="ordinal", spread="per judge")


def fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(
            df, outcome="y", item="item", prompt="prompt", judge="judge", progressbar=False, **kw
        )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains, checked below
@pytest.mark.parametrize("K", [3, 5, 7])
def test_recovery_of_judge_cutpoints_and_latent_components(K):
    """Simulated Likert data with known truth: each judge its own cutpoints (spread 1, 1.5, 2
    times the first's), items, prompts, judges, item x judge on the latent logit scale.
    """
    df, truth = likert(n_items=60, K=K, judge_cuts=True, seed=K)
    # 4 x 500 draws: R-hat 1.019-1.022, the cutpoints' intervals and sigma_item's as at 4 x 1000
    post = fit(df, family="ordinal", thresholds="judge", random_seed=K, draws=500, tune=300)
    diag = post.diagnostics()
    assert diag["max_rhat"] < 1.05 and diag["divergences"] <= 4
    cuts = post.cutpoints(level=0.95)
    inside = (cuts["low"].to_numpy() <= truth["cuts"].ravel()) & (
        truth["cuts"].ravel() <= cuts["high"].to_numpy()
    )
    assert inside.mean() >= 0.8, cuts.assign(truth=truth["cuts"].ravel())
    # the judges' spreads are ordered as simulated (1 : 1.5 : 2)
    spread = cuts.groupby("set")["spread"].first().to_numpy()
    assert spread[0] < spread[1] < spread[2]
    comp = post.components(level=0.95).set_index("component")
    assert comp.loc["item", "low"] <= truth["sigma_item"] ** 2 <= comp.loc["item", "high"]
    assert comp.loc["replicate", "median"] == pytest.approx(np.pi**2 / 3)
    # the panel's expected score is the calls' mean score
    theta = post.theta()
    assert theta["estimate"].iloc[0] == pytest.approx(df["y"].mean(), abs=0.05)
    assert theta["tee_se"].iloc[0] > theta["naive_se"].iloc[0]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_scale_use_and_category_probabilities():
    """Judges who share their cutpoints: the scale-use share's interval covers zero. Judges who
    spread them 1 : 1.5 : 2: the widest gives the middle score most often.
    """
    df, _ = likert(n_items=50, K=5, judge_cuts=False, seed=11)
    # 4 x 400 draws: the share's interval (-4.9, 0.85) as at 4 x 800 (-4.7, 0.86)
    common = fit(df, family="ordinal", random_seed=1, draws=400, tune=300)
    own = fit(df, family="ordinal", thresholds="judge", random_seed=1, draws=400, tune=300)
    table = bt.posterior.ordinal.scale_use(common, own)
    assert table["scale_use_low"].iloc[0] <= 0.0 <= table["scale_use_high"].iloc[0], table
    with pytest.raises(bt.ArgumentError, match="thresholds='common' fit and a thresholds='judge' fit"):
        bt.posterior.ordinal.scale_use(own, common)
    spread, _ = likert(n_items=50, K=5, judge_cuts=True, seed=12)
    probs = fit(spread, family="ordinal", thresholds="judge", random_seed=2, draws=400, tune=300)
    probs = probs.category_probabilities()
    assert probs.shape == (3, 5) and np.allclose(probs.sum(axis=1), 1.0, atol=0.02)
    assert probs["3"].idxmax() == "j2"


@pytest.mark.parametrize("family", ["ordinal", "binomial"])
def test_formula_fits_take_every_glmm_family(family):
    """A formula route for binary and Likert data: the roles API's TEE model written as a
    formula gives the same design (terms, cells, counts) and, seeded, the same draws.
    """
    df, _ = likert(n_items=10, K=5)
    data = df if family == "ordinal" else df.assign(y=(df["y"] > 3).astype(int))
    formula = "y ~ (1|item) + (1|prompt) + (1|judge) + (1|item:prompt) + (1|item:judge) + (1|prompt:judge)"
    roles = design(data, family=family, judge_effect="random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        written = bt.build_design(data, formula=formula, family=family)
    key = [(t.label, t.facets, t.kind) for t in roles.terms]
    assert [(t.label, t.facets, t.kind) for t in written.terms] == key
    assert key[-2:] == [
        ("cell", ("item", "prompt", "judge"), "random"),
        ("replicate", (*roles.facets, "replicate"), "residual"),
    ]
    pd.testing.assert_frame_equal(written.cells, roles.cells)
    assert written.outcome_levels == roles.outcome_levels and written.family == family
    lk = bt.likelihoods.LIKELIHOODS[family]
    a, b = (lk.density(d, bt.priors.get_prior()) for d in (roles, written))
    assert a.layout.parameters == b.layout.parameters
    x = a.initial_point(np.random.default_rng(3))
    np.testing.assert_array_equal(np.concatenate([[a.logp_grad(x)[0]], a.logp_grad(x)[1]]),
                                  np.concatenate([[b.logp_grad(x)[0]], b.logp_grad(x)[1]]))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        post = bt.fit_posterior(
            data,
            formula=formula,
            family=family,
            draws=60,
            tune=60,
            chains=1,
            random_seed=3,
            progressbar=False,
        )
        assert post.formula == formula and np.isfinite(post.components()["median"]).all()
    with pytest.raises(bt.DesignError, match="overdispersion=True needs repeated calls"):
        bt.build_design(data[data["rep"] == 0], formula=formula, family=family, overdispersion=True)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains, checked below
def test_recovery_of_judge_spreads():
    """Each judge its own latent spread (0.6, 1, 1.67: geometric mean 1) on common cutpoints."""
    truth = np.array([0.6, 1.0, 1 / 0.6])
    df, _ = likert(n_items=60, K=5, seed=11, spreads=truth)
    post = fit(df, family="ordinal", spread="judge", random_seed=3, draws=1000, tune=500)
    diag = post.diagnostics()
    # three prompts: their SD's prior tail funnels a few transitions (3-13 of 4,000 measured at
    # two seeds; the fit warns), the few-level funnel of the GLMM's swept terms
    assert diag["max_rhat"] < 1.05 and diag["divergences"] <= 40
    tab = post.judge_spreads(level=0.95)
    assert ((tab["low"] <= truth) & (truth <= tab["high"])).all(), tab
    assert tab["median"].is_monotonic_increasing
    # the compressed judge puts more of a typical item's mass in the middle category
    probs = post.category_probabilities()
    assert list(probs.index) == ["j0", "j1", "j2"] and probs.loc["j2", "3"] < probs.loc["j0", "3"]
    theta = post.theta(n_draws=100, sims_per_draw=20, random_seed=1)
    assert theta["estimate"].iloc[0] == pytest.approx(df["y"].mean(), abs=0.1)
    with pytest.raises(bt.ArgumentError, match="spread='judge'"):
        fit(df, family="ordinal", draws=50, tune=50, chains=1).judge_spreads()


@pytest.fixture(scope="module")
def judge_fit():
    df, truth = likert(n_items=24, K=5, judge_cuts=True, seed=5)
    post = fit(df, family="ordinal", thresholds="judge", random_seed=4, draws=300, tune=300, chains=2)
    post.truth = truth
    return post


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_item_effects_rank_the_items_and_need_their_draws(judge_fit, tmp_path):
    tab = judge_fit.level_effects("item", level=0.8)
    item = judge_fit.truth["item"]
    assert list(tab["item"]) == [f"i{i:02d}" for i in range(len(item))]
    # 18 scores per item and item x judge noise: the expected correlation is about 0.92
    assert np.corrcoef(tab["mean"], item)[0, 1] > 0.8
    # relative to the average item, 80% intervals cover the centred truth at most levels
    centred = item - item.mean()
    assert ((tab["low"] <= centred) & (centred <= tab["high"])).mean() >= 0.6
    assert sorted(tab["rank"]) == list(range(1, len(item) + 1))
    assert tab.loc[tab["mean"].idxmax(), "rank"] == 1
    prompts = judge_fit.level_effects("prompt")
    assert len(prompts) == 3 and abs(prompts["mean"].sum()) < 1e-9
    with pytest.raises(bt.UnknownNameError, match="item:judge|random main effect"):
        judge_fit.level_effects("item:judge")
    with pytest.raises(bt.ArgumentError, match="keep_effects"):
        bt.load(judge_fit.save(tmp_path / "slim.nc")).level_effects("item")
    kept = bt.load(judge_fit.save(tmp_path / "kept.nc", keep_effects=True)).level_effects("item", level=0.8)
    pd.testing.assert_frame_equal(kept, tab)


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_answers_on_the_score_scale_agree_and_survive_a_round_trip(judge_fit, tmp_path):
    post = judge_fit
    # the expected score's variance two ways over the same draws: Jansen's decomposition and
    # simulated studies (their means agree to 6% at three fit seeds; a median over a short fit's
    # skewed draws sat 10-36% below them)
    shares = post.shares(scale="probability", n_draws=100, sims_per_draw=50, random_seed=1)
    theta = post.theta(n_draws=100, sims_per_draw=50, random_seed=1)
    var = shares.attrs["var_theta"]
    assert var["mean"] == pytest.approx(theta["tee_se"].iloc[0] ** 2, rel=0.2)
    assert var["low"] <= var["median"] <= var["high"]
    assert shares["share_median"].between(0, 1).all()
    assert "cumulative-logit GLMM" in post.writeup()
    again = bt.load(post.save(tmp_path / "likert.nc"))
    pd.testing.assert_frame_equal(again.cutpoints(), post.cutpoints())
    assert again.design.outcome_levels == post.design.outcome_levels
    assert again.theta(n_draws=50, sims_per_draw=20)["estimate"].iloc[0] == pytest.approx(
        theta["estimate"].iloc[0]
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_linear_model_against_the_ordinal_one():
    """compare_links fits the linear model and the ordinal GLMM to the same Likert scores and
    ranks their shares side by side; a non-GLMM family is refused, not ignored.
    """
    df, _ = likert(n_items=20, K=5, seed=8)
    roles = dict(outcome="y", item="item", prompt="prompt", judge="judge")
    cmp = bt.compare_links(df, family="ordinal", **roles, draws=200, tune=200, chains=2, progressbar=False)
    assert cmp.glmm.family == "ordinal" and cmp.lpm.family == "gaussian"
    assert set(cmp.table["component"]) >= {"item", "prompt", "judge", "item:judge"}
    assert -1.0 <= cmp.spearman["median"] <= 1.0 and "cumulative-logit GLMM" in cmp.table.attrs["note"]
    with pytest.raises(bt.ArgumentError, match="family= names the GLMM"):
        bt.compare_links(df, family="gaussian", **roles)
