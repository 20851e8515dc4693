"""Comparing systems on binary verdicts and Likert scores: ``system=`` with the logit and the
ordinal GLMM, the leaderboard and the differences on the score's scale (success probability,
expected score), checked against closed forms, the latent ranks and the raw means.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_tee as bt
from bayes_tee.posterior import leaderboard as board
from bayes_tee.posterior import predictive as pr

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")
FIT = dict(draws=400, tune=400, progressbar=False)
pytestmark = pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains


def _fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(df, **{**ROLES, **kw}, **FIT)


def _data(outcome, seed=3, **kw):
    kw = dict(n_systems=3, n_items=40, n_prompts=2, n_judges=2, n_replicates=2) | kw
    return bt.simulate.systems_dgp(outcome=outcome, mu=0.8, system_sd=0.8, random_seed=seed, **kw)


@pytest.fixture(scope="module")
def binary():
    return _data("logit")


@pytest.fixture(scope="module")
def post(binary):
    return _fit(binary, family="binomial", random_seed=1)


def test_the_truth_of_the_score_is_the_population_mean():
    """systems_dgp's new_score (Gauss-Hermite over new items and prompts, at the realised judge
    x system effects) against the mean of 600,000 simulated verdicts of 1,000 items and 100
    prompts: within 0.02 (the items' and prompts' own sampling error is about 0.01).
    """
    df = bt.simulate.systems_dgp(
        n_systems=3, n_items=1000, n_prompts=100, n_judges=2, outcome="logit", mu=0.8, system_sd=0.8,
        random_seed=3,
    )  # fmt: skip
    mean = df.groupby("model")["score"].mean()
    for s, p in df.attrs["truth"]["new_score"].items():
        assert mean[s] == pytest.approx(p, abs=0.02)


def test_population_scores_match_a_direct_integral():
    """The score curve of a draw: expit averaged over N(0, V) (binomial) and the expected
    ordinal score over N(0, V) with two judges' own cutpoints, against scipy quadrature.
    """
    from scipy import integrate, special

    d = pr._Draws({"item": np.array([0.9])}, {}, np.zeros(1), np.zeros(1), "binomial")
    at = np.array([[-1.0, 0.3, 2.0]])
    want = [
        integrate.quad(lambda u, m=m: special.expit(m + u) * stats.norm.pdf(u, 0, 0.9), -12, 12)[0]
        for m in at[0]
    ]
    np.testing.assert_allclose(pr.population_scores(d, at)[0], want, atol=1e-8)
    cuts = np.array([[[-1.0, 0.5], [-0.5, 1.5]]])  # two judges' cutpoints
    d = pr._Draws(
        {"item": np.array([0.7])}, {"judge": np.array([[0.2, -0.2]])}, np.zeros(1), np.zeros(1), "ordinal",
        cuts, np.array([1.0, 2.0, 4.0]), judge_sets=True,
    )  # fmt: skip

    def score(m, c, b):
        def f(u):
            exceed = special.expit(m + b + u - c)  # P(y > 1), P(y > 2)
            return (1.0 + exceed[0] + 2.0 * exceed[1]) * stats.norm.pdf(u, 0, 0.7)

        return integrate.quad(f, -12, 12)[0]

    want = [np.mean([score(m, cuts[0, j], b) for j, b in enumerate((0.2, -0.2))]) for m in at[0]]
    np.testing.assert_allclose(pr.population_scores(d, at)[0], want, atol=1e-7)


def test_binomial_leaderboard_is_on_the_probability_scale(post, binary, letters_match_pairs):
    table = letters_match_pairs(post)
    assert post.method == "binomial" and table.attrs["scale"] == "success probability"
    assert list(table.columns)[-1] == "latent"
    # the latent order is the score's order, and the ranks are the latent ones
    assert table["latent"].is_monotonic_decreasing and table["estimate"].is_monotonic_decreasing
    assert ((table["new_low"] <= table["panel_low"]) & (table["panel_low"] < table["estimate"])).all()
    assert ((table["estimate"] < table["panel_high"]) & (table["panel_high"] <= table["new_high"])).all()
    # each system's raw share of successes (these prompts) is inside its new interval; the
    # estimate is the population's, pulled towards 1/2 by the prompts' variance (two prompts)
    raw = table["system"].map(binary.groupby("model")["score"].mean())
    assert ((table["new_low"] < raw) & (raw < table["new_high"])).all()
    assert raw.is_monotonic_decreasing
    truth = binary.attrs["truth"]["new_score"]
    inside = (table["new_low"] <= table["system"].map(truth)) & (
        table["system"].map(truth) <= table["new_high"]
    )
    assert inside.all()


def test_binomial_pairs_are_differences_of_probabilities(post):
    est, lat = (post.leaderboard().set_index("system")[k] for k in ("estimate", "latent"))
    pairs = post.pairs()
    assert pairs.attrs["scale"] == "success probability"
    for r in pairs.itertuples():
        assert r.difference == pytest.approx(est[r.system_a] - est[r.system_b])
        assert r.latent_difference == pytest.approx(lat[r.system_a] - lat[r.system_b])
        assert r.simultaneous_low <= r.low < r.difference < r.high <= r.simultaneous_high
        # P(a better) from the same draws: near Phi(difference / SD) for a near-normal posterior
        assert r.p_a_better == pytest.approx(stats.norm.cdf(r.difference / r.se_median), abs=0.05)
    # the posterior SD agrees with the interval's width (90%: +-1.645 SD of a near-normal)
    width = (pairs["high"] - pairs["low"]) / (2 * 1.645)
    np.testing.assert_allclose(width, pairs["se_median"], rtol=0.1)
    # the panel reading keeps item x system and the calls only: narrower
    panel = post.pairs(over="panel")
    assert ((panel["high"] - panel["low"]) < (pairs["high"] - pairs["low"])).all()


def test_separation_takes_a_gap_in_probability(post):
    sep = post.dstudy(n_items=[40, 160], gap=0.1)
    assert sep.attrs["scale"] == "success probability" and 0 < sep.attrs["slope"] < 0.25
    np.testing.assert_allclose(sep["score_se_median"], sep["se_median"] * sep.attrs["slope"])
    assert sep["p_resolved"].is_monotonic_increasing and sep["p_resolved"].iloc[-1] > 0.5


def test_binomial_comparison_text_says_its_units(post):
    text = post.writeup()
    assert "success probability" in text and "latent (logit) scale" in text
    assert "Leaderboard" in post.summary()


def test_ordinal_comparison_with_each_judges_cutpoints_and_lost_calls(letters_match_pairs):
    """Likert scores, each judge its own cutpoints, 15% of the calls lost at random: the
    expected scores lie between the scale's ends, near the raw means, in the latent order.
    """
    df = _data("ordinal", seed=5)
    df = df.sample(frac=0.85, random_state=0)
    post = _fit(df, family="ordinal", thresholds="judge", random_seed=2)
    table = letters_match_pairs(post)
    assert table.attrs["scale"] == "expected score"
    assert ((table["new_low"] > 1) & (table["new_high"] < 5)).all()
    assert table["latent"].is_monotonic_decreasing
    raw = table["system"].map(df.groupby("model")["score"].mean())
    assert ((table["new_low"] < raw) & (raw < table["new_high"])).all()
    truth = table["system"].map(df.attrs["truth"]["new_score"])
    assert ((table["new_low"] < truth) & (truth < table["new_high"])).all()
    probs = (
        post.rank_probabilities() if hasattr(post, "rank_probabilities") else board.rank_probabilities(post)
    )
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert isinstance(post.pairs(over="panel"), pd.DataFrame)
