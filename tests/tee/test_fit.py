"""Recovery, closed form, small facets, geometry: real fits with few draws."""

import warnings

import numpy as np
import pytest
from scipy import stats

import bayes_tee as bt
from bayes_tee.gstudy.divisors import divisors
from bayes_tee.likelihoods.anova import anova_estimates, strata

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)
FAST = dict(progressbar=False)  # balanced fits sample in < 1 s: default 4 x (1000 + 1000)


def covered(post, truth, level=0.9):
    table = post.components(level=level).set_index("component")
    return {k: bool(table.loc[k, "low"] <= v <= table.loc[k, "high"]) for k, v in truth.items()}


def true_top_two(post, truth):
    labels = list(truth)
    div = divisors(labels, post.design.counts, facets={t.label: t.facets for t in post.terms})
    contrib = np.array([truth[k] for k in labels]) / div
    return [labels[i] for i in np.argsort(-contrib)[:2]]


def simulate_and_fit(n_items, n_prompts, n_replicates, data_seed, fit_seed):
    """M=3 judges with a clear effect, H=3 temperatures with a small one (a clear true ranking)."""
    df = bt.simulate.tee_dgp(
        n_items=n_items,
        n_prompts=n_prompts,
        n_judges=3,
        n_temperatures=3,
        n_replicates=n_replicates,
        judge_effects=[-0.3, 0.05, 0.25],
        temperature_effects=[-0.05, 0.0, 0.05],
        random_seed=data_seed,
    )
    return df, bt.fit_posterior(df, **ROLES, random_seed=fit_seed, **FAST)


@pytest.fixture(scope="module")
def pilot():
    """Near the paper's pilot (Messing 2026 App. I): N=30, V=3, M=3, H=3, R=3, 2,430 calls."""
    return simulate_and_fit(30, 3, 3, data_seed=11, fit_seed=1)


@pytest.fixture(scope="module")
def larger():
    """N=100, V=5, M=3, H=3, R=5 (22,500 calls)."""
    return simulate_and_fit(100, 5, 5, data_seed=12, fit_seed=2)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["pilot", "larger"])
def test_parameter_recovery(which, request):
    df, post = request.getfixturevalue(which)
    truth = df.attrs["truth"]
    hits = covered(post, truth)
    # 90% intervals: with 11 components, 8 or more inside is what a calibrated posterior gives
    # with probability > 0.98; a model with two terms swapped misses both by a wide margin.
    assert sum(hits.values()) >= 8, hits
    shares = post.shares().set_index("component")["share_median"]
    assert list(shares.sort_values(ascending=False).index[:2]) == true_top_two(post, truth)
    assert post.diagnostics()["ok"], post.diagnostics()


def test_recovery_check_fails_for_a_swapped_model(larger):
    df, post = larger
    truth = dict(df.attrs["truth"])
    truth["item:prompt"], truth["item:judge"] = truth["item:judge"], truth["item:prompt"]
    truth["cell"], truth["replicate"] = truth["replicate"], truth["cell"]
    hits = covered(post, truth)
    assert not any(hits[k] for k in ("item:prompt", "item:judge", "cell", "replicate"))


def test_posterior_medians_match_the_anova_ems_estimates(larger):
    _, post = larger
    est = anova_estimates(post.design)
    st = strata(post.design)
    own_df = dict(zip(st.names, st.df))
    table = post.components().set_index("component")
    checked = 0
    for k, v in est.items():
        if v > 0 and own_df.get(k, 0) >= 30:
            assert table.loc[k, "median"] == pytest.approx(v, rel=0.1), k
            checked += 1
    assert checked >= 4


@pytest.mark.slow
def test_small_facet_where_reml_is_singular_gets_a_proper_posterior():
    # V=3, M=3 pilot with no true prompt variance: pick the first seed whose ANOVA/EMS estimate
    # of the prompt variance is negative, i.e. where REML reports exactly zero.
    for seed in range(50):
        df = bt.simulate.tee_dgp(
            n_items=30,
            n_prompts=3,
            n_judges=3,
            n_temperatures=1,
            n_replicates=3,
            components={"prompt": 0.0},
            random_seed=seed,
        )
        d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", judge="judge")
        if anova_estimates(d)["prompt"] < 0:
            break
    else:
        pytest.fail("no singular data set found")
    # an SD at the zero boundary has a long thin tail: sample longer for a tail ESS >= 400
    post = bt.fit_posterior(
        df, outcome="score", item="item", prompt="prompt", judge="judge", random_seed=3, draws=2500, **FAST
    )
    assert post.diagnostics()["ok"], post.diagnostics()
    row = post.components().set_index("component").loc["prompt"]
    prior_q95 = (stats.t(3, scale=d.y_sd).ppf(0.975)) ** 2  # 95% quantile of sigma^2 under half-t
    assert row["low"] < 0.02 * row["high"]  # reaches down to zero
    assert 0 < row["high"] < 0.1 * prior_q95  # finite and bounded by the data, not the prior
    assert row["median"] > 0


def test_demo_clean_geometry_with_default_settings(demo_post):
    d = demo_post.diagnostics()
    assert d["n_draws"] == 4000
    assert d["divergences"] == 0 and d["max_rhat"] <= 1.01 and d["min_ess_bulk"] >= 400, d
    assert demo_post.method == "balanced"


@pytest.mark.slow
def test_unbalanced_data_use_the_item_blocks_and_recover():
    df = bt.simulate.tee_dgp(
        n_items=40,
        n_prompts=3,
        n_judges=3,
        n_temperatures=2,
        n_replicates=4,
        judge_effects=[-0.2, 0.05, 0.15],
        random_seed=21,
    )
    # Realistic gaps: one replicate fewer from one judge on a quarter of the items, and one
    # prompt never run on four items: 12% of the cells incomplete, so auto integrates them out
    # item by item (its likelihood is checked exactly in test_blocks_density).
    rng = np.random.default_rng(0)
    items = df["item"].unique()
    short, gap = rng.choice(items, 10, replace=False), rng.choice(items, 4, replace=False)
    df = df[
        ~(
            (df["item"].isin(short) & (df["judge"] == "judge3") & (df["replicate"] == 4))
            | (df["item"].isin(gap) & (df["prompt"] == "v2"))
        )
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DiagnosticWarning)  # must pass at default settings
        post = bt.fit_posterior(df, **ROLES, random_seed=4, progressbar=False)
    d = post.diagnostics()
    assert d["ok"] and d["divergences"] == 0, d
    assert post.method == "blocks" and not post.design.balanced
    hits = covered(post, df.attrs["truth"])
    assert sum(hits.values()) >= 8, hits


def test_theta_intervals(demo_post):
    th = demo_post.theta().iloc[0]
    assert th["naive_low"] < th["naive_estimate"] < th["naive_high"]
    assert th["tee_low"] < th["panel_low"] < th["estimate"] < th["panel_high"] < th["tee_high"]
    assert th["se_ratio"] > 3  # the single-number SE hides most of the noise here
    assert th["tee_se"] == pytest.approx(np.sqrt(demo_post.shares().attrs["var_theta"]["median"]), rel=0.6)


@pytest.mark.parametrize("scale, shift", [(1e12, 0.0), pytest.param(1e-9, 5e3, marks=pytest.mark.slow)])
def test_extreme_scales_fit_cleanly_and_answer_on_the_users_scale(demo_df, demo_post, scale, shift):
    """Scores in any units: the likelihood sees standardised scores, the draws come back on the
    user's scale (components times scale^2, theta times scale plus the shift).
    """
    df = demo_df.assign(score=demo_df["score"] * scale + shift)
    post = bt.fit_posterior(df, **ROLES, category="category", random_seed=1, progressbar=False)
    d = post.diagnostics()
    assert d["ok"], d["problems"]
    ours = post.components().set_index("component")["median"] / scale**2
    ref = demo_post.components().set_index("component")
    # within the reference posterior's own spread (Monte Carlo differences only)
    assert ((ours - ref["median"]).abs() <= 0.25 * (ref["high"] - ref["low"])).all(), (ours, ref["median"])
    th = post.theta().iloc[0]
    assert (th["estimate"] - shift) / scale == pytest.approx(demo_post.theta()["estimate"].iloc[0], abs=0.05)


@pytest.mark.parametrize(
    "bad", [dict(draws=0), dict(chains=0), dict(tune=-1), dict(draws=2.5), dict(target_accept=1.5)]
)
def test_sampler_settings_out_of_range_are_refused_before_sampling(bad):
    """draws=0 returned an empty posterior and chains=0 a KeyError from deep inside."""
    with pytest.raises(bt.DesignError, match=next(iter(bad))):
        bt.fit_posterior(bt.datasets.load("tee_demo"), outcome="score", item="item", **bad)


@pytest.mark.slow
def test_unequal_categories_with_calls_lost_pass_their_diagnostics_and_recover():
    """Items in 6 categories of 3 to 12 items and 5% of calls lost at random: ``auto`` takes the
    item blocks (no phantom item, no latent cell), passes every diagnostic at the defaults and
    covers the true components; the same items complete fit the strata likelihood.
    """
    df = bt.simulate.tee_dgp(
        n_items=72, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=4, n_categories=6, random_seed=8
    )
    items = df.drop_duplicates("item").groupby("category")["item"].apply(list)
    keep = [i for k, (_, its) in enumerate(items.items()) for i in its[: [3, 5, 7, 9, 11, 12][k]]]
    df = df[df["item"].isin(keep)]
    complete = bt.validate_design(df, **ROLES, category="category")
    assert complete.complete and not complete.balanced
    lossy = df[np.random.default_rng(1).random(len(df)) > 0.05]
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DiagnosticWarning)  # must pass at default settings
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(lossy, **ROLES, category="category", random_seed=3, progressbar=False)
    d = post.diagnostics()
    assert d["ok"] and d["divergences"] == 0, d
    assert post.method == "blocks"
    truth = {k: v for k, v in df.attrs["truth"].items() if k in set(post.components()["component"])}
    hits = covered(post, truth)
    assert sum(hits.values()) >= len(hits) - 1, hits
