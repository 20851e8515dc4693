"""Comparing systems: the system role, the leaderboard, paired differences and ranks, checked
against closed forms on balanced data, hand-computed error variances and simulated truth.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

import bayes_tee as bt
from bayes_tee.posterior import leaderboard as board
from bayes_tee.posterior import separation as sep

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")
FIT = dict(draws=600, tune=400, progressbar=False)


def _fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(df, **{**ROLES, **kw}, **FIT)


@pytest.fixture(scope="module")
def data():
    return bt.simulate.systems_dgp(n_systems=5, n_items=40, n_prompts=3, n_replicates=2, random_seed=3)


@pytest.fixture(scope="module")
def post(data):
    return _fit(data, random_seed=1)


def test_the_system_role_writes_the_comparison_formula(post):
    assert post.design.system == "system" and post.method == "balanced"
    assert post.formula == (
        "score ~ model + judge + (1|item) + (1|prompt) + (1|item:prompt) + (1|item:judge) + "
        "(1|prompt:judge) + (1|model:item) + (1|model:prompt) + (1|model:judge) + "
        "(1|item:prompt:judge:model)"
    )
    labels = {t.label: t.kind for t in post.terms}
    assert labels["system"] == "fixed" and labels["system:item"] == "random"


def test_estimates_are_the_system_means_without_shrinkage(post, data):
    """Balanced data: the estimate is the system's raw mean; the wide prior on the system
    effects pulls no system in (slope of estimated on raw differences within 0.2% of 1).
    """
    est = board.system_estimates(post)
    raw = data.groupby("model")["score"].mean().loc[est.index]
    d_est, d_raw = est - est.mean(), raw - raw.mean()
    slope = float((d_est * d_raw).sum() / (d_raw**2).sum())
    assert slope == pytest.approx(1.0, abs=0.01)
    assert np.abs(d_est - d_raw).max() < 0.02


def test_error_variances_are_the_closed_form(post):
    """panel_own of one system = sigma2(system:item)/N + sigma2(cell)/(N V M) + sigma2(res)/(N V M R)."""
    var = board.error_variances(post)
    comp = post.component_draws().stack(sample=("chain", "draw"))
    keep = np.linspace(0, comp.sizes["sample"] - 1, var["panel_own"].shape[1]).round().astype(int)
    c = {str(k): comp.sel(component=k).values[keep] for k in comp["component"].values}
    N, V, M, R = 40, 3, 3, 2
    panel_own = (
        c["system:item"] / N + c["item:prompt:judge:system"] / (N * V * M) + c["residual"] / (N * V * M * R)
    )
    np.testing.assert_allclose(var["panel_own"][0], panel_own, rtol=1e-10)
    # new adds the prompts' interaction with the system; the fixed judges' stays out
    np.testing.assert_allclose(var["new_own"][0], panel_own + c["system:prompt"] / V, rtol=1e-10)
    # one system's mean, panel: every item-sampled term, shared ones included
    shared = c["item"] / N + c["item:prompt"] / (N * V) + c["item:judge"] / (N * M)
    np.testing.assert_allclose(var["panel"][0], panel_own + shared, rtol=1e-10)


def test_leaderboard_columns_order_and_ranks(post):
    board_ = post.leaderboard()
    assert list(board_.columns) == [
        "system", "estimate", "panel_low", "panel_high", "new_low", "new_high",
        "rank_median", "rank_low", "rank_high", "p_best", "group",
    ]  # fmt: skip
    assert board_["estimate"].is_monotonic_decreasing
    assert (board_["new_low"] <= board_["panel_low"]).all() and (
        board_["new_high"] >= board_["panel_high"]
    ).all()
    assert board_["p_best"].sum() == pytest.approx(1.0)
    assert (board_["rank_low"] <= board_["rank_median"]).all() and (
        board_["rank_median"] <= board_["rank_high"]
    ).all()
    assert "fixed panel" in board_.attrs["note"]
    worst_first = post.leaderboard(higher_is_better=False)
    assert worst_first["system"].tolist() == board_["system"].tolist()[::-1]


def test_tie_groups_are_the_simultaneous_pair_intervals(post, letters_match_pairs):
    """Balanced data: the letters agree with every pair's simultaneous interval, on both readings."""
    for over in ("new", "panel"):
        table = letters_match_pairs(post, over=over)
        assert table["group"].iloc[0].startswith("a")
    assert post.tie_groups() == post.leaderboard().attrs["groups"]


def test_pairs_intervals_and_probabilities(post):
    table = post.pairs()
    assert len(table) == 10
    assert (table["simultaneous_low"] < table["low"]).all() and (
        table["simultaneous_high"] > table["high"]
    ).all()
    assert table.attrs["simultaneous_level"] == pytest.approx(0.9 ** (1 / 10))
    assert ((table["difference"] > 0) == (table["p_a_better"] > 0.5)).all()
    panel = post.pairs(over="panel")
    assert (panel["high"] - panel["low"] < table["high"] - table["low"]).all()
    a, b = table.iloc[3][["system_a", "system_b"]]
    one = post.compare(a, b)
    assert one["difference"] == pytest.approx(table.iloc[3]["difference"])
    assert one["low"] == pytest.approx(table.iloc[3]["low"]) and one["simultaneous_low"] == one["low"]
    back = post.compare(b, a)
    assert back["p_a_better"] == pytest.approx(1 - one["p_a_better"])
    m = board.p_better_matrix(post)
    assert m.loc[a, b] == pytest.approx(one["p_a_better"])


def test_bad_requests_name_the_fix(post, demo_post):
    with pytest.raises(bt.DesignError, match="system="):
        demo_post.leaderboard()
    with pytest.raises(bt.DesignError, match="Unknown system"):
        post.compare("s0", "nope")
    with pytest.raises(bt.DesignError, match="two different"):
        post.compare("s0", "s0")
    with pytest.raises(ValueError, match="over"):
        post.pairs(over="everything")


def test_the_system_role_refuses_what_it_cannot_fit(data):
    # the GLMM families compare systems too (tests/posterior/test_latent_systems.py); a
    # per-judge option of the ordinal family is refused on 0/1 verdicts
    binary = data.assign(score=(data["score"] > 0).astype(int))
    d = bt.build_design(binary, **ROLES, family="binomial")
    assert d.system == "system" and d.family == "binomial"
    with pytest.raises(bt.DesignError, match="family='binomial' has none"):
        bt.build_design(binary, **ROLES, family="binomial", thresholds="judge")
    with pytest.raises(bt.DesignError, match="Did you mean 'model'"):
        bt.build_design(data, **{**ROLES, "system": "modle"})
    with pytest.raises(bt.DesignError, match="two or more systems"):
        bt.build_design(data[data["model"] == "s0"], **ROLES)
    with pytest.raises(bt.DesignError, match="fixed factor"):
        bt.build_design(data, formula="score ~ (1|item) + (1|model)", system="model")


def test_a_formula_names_the_systems_as_a_fixed_factor(data):
    d = bt.build_design(data, formula="score ~ model + (1|item) + (1|model:item)", system="model")
    assert d.system == "system" and [t.label for t in d.terms][:2] == ["item", "system"]


def test_a_reader_frame_with_several_models_fits_them_jointly(data):
    frame = data.copy()
    frame.attrs["bayes_tee_roles"] = {
        "outcome": "score",
        "item": "item",
        "judge": "judge",
        "prompt": "prompt",
    }
    with pytest.raises(bt.DesignError, match="system='model'"):
        bt.build_design(frame)
    d = bt.build_design(frame, system="model")
    assert d.system == "system" and len(d.levels["system"]) == 5


@pytest.mark.slow
def test_unbalanced_random_judges_and_a_saved_fit(data, tmp_path, letters_match_pairs):
    """Calls lost at random: the fit leaves the balanced likelihood, each system's interval
    uses its own counts; random judges put judge x system into the new interval; save/load
    keeps the comparison.
    """
    rng = np.random.default_rng(0)
    lost = data[rng.random(len(data)) > 0.05]
    lost = lost[~((lost["model"] == "s4") & lost["item"].isin([f"i{k}" for k in range(20)]))]
    post = _fit(lost, random_seed=2, judge_effect="random")
    assert post.method != "balanced"
    counts = board.system_counts(post)
    assert counts["s4"]["item"] == 20 and counts["s0"]["item"] == 40
    table = post.leaderboard()
    letters_match_pairs(post)
    width = (table["new_high"] - table["new_low"]).set_axis(table["system"])
    assert width["s4"] > width["s0"]
    assert "judges" in table.attrs["note"] and "fixed panel" not in table.attrs["note"]
    again = bt.load(post.save(tmp_path / "systems.nc"))
    assert again.design.system == "system"
    pd.testing.assert_frame_equal(again.leaderboard(), table)


@pytest.mark.slow
def test_difference_intervals_cover_their_truth():
    """12 simulated studies x 6 pairs: the 90% panel and new intervals of a difference cover
    their truth (benchmarks/bench_systems.py, 100 studies of 6 systems: panel 0.885, new 0.943).
    """
    hits = {"new": [], "panel": []}
    for seed in range(12):
        df = bt.simulate.systems_dgp(n_systems=4, n_items=40, random_seed=100 + seed)
        post = _fit(df, random_seed=seed)
        for over in hits:
            with warnings.catch_warnings():  # few draws: a study's R-hat may miss 1.01
                warnings.simplefilter("ignore", bt.DiagnosticWarning)
                table = post.pairs(over=over)
            for r in table.itertuples():
                true = df.attrs["truth"][over][r.system_a] - df.attrs["truth"][over][r.system_b]
                hits[over].append(r.low <= true <= r.high)
    assert 0.75 <= np.mean(hits["panel"]) <= 0.99, np.mean(hits["panel"])
    assert 0.8 <= np.mean(hits["new"]) <= 1.0, np.mean(hits["new"])


def test_simulate_design_names_a_facet_it_cannot_simulate(data):
    """A formula fit with a facet no role names (here the systems as a random facet) is refused
    with the closed-form alternative, not a traceback from inside scipy.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        post = bt.fit_posterior(
            data, formula="score ~ (1|item) + (1|judge) + (1|model)", random_seed=1, **FIT
        )
    with pytest.raises(bt.DesignError, match="'model'.*post.dstudy"):
        post.simulate_design(n_items=[20], n_draws=5, sims_per_draw=5)


def test_rank_allocation_resolves_the_adjacent_gaps_as_the_normal_formula_says(post):
    # p_adjacent_resolved per design: the mean over draws and adjacent gaps of
    # Phi(gap/se - z) + Phi(-gap/se - z), se the design's SE of a difference (computed in chunks)
    plan = post.allocate(budget=3000, objective="rank", max_prompts=3)
    cand = plan.candidates
    designs = cand[["n_items", "n_prompts", "n_judges", "n_temperatures", "n_replicates"]]
    var = sep.difference_variance(post, designs)
    gaps = np.diff(np.sort(board.system_estimates(post).to_numpy()))
    se = np.sqrt(var)[..., None]
    z = special.ndtri(0.95)
    expected = (special.ndtr(gaps / se - z) + special.ndtr(-gaps / se - z)).mean(axis=(0, 2))
    np.testing.assert_allclose(cand["p_adjacent_resolved"].to_numpy(), expected, rtol=1e-12)
    # more items per system resolve more of the gaps
    config = ["n_prompts", "n_judges", "n_temperatures", "n_replicates"]
    for _, same in cand.sort_values("n_items").groupby(config):
        assert np.all(np.diff(same["p_adjacent_resolved"].to_numpy()) >= 0)
