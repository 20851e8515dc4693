"""What to score next and when to stop: the closed-form call values, the decision metrics
against the leaderboard's own numbers, the choice of calls from a pool, and its refusals.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

import bayes_tee as bt
from bayes_tee.gstudy.divisors import divisors
from bayes_tee.posterior import decision as dc
from bayes_tee.posterior import leaderboard as board
from bayes_tee.posterior import next_calls as nc
from bayes_tee.posterior.call_values import CallState, pair_error

ROLES = dict(outcome="score", item="item", judge="judge", system="model")


@pytest.fixture(scope="module")
def data():
    df = bt.simulate.systems_dgp(
        n_systems=5, n_items=30, n_judges=2, n_prompts=1, n_replicates=2, system_sd=0.6, random_seed=2
    )
    return df.drop(columns="prompt")


@pytest.fixture(scope="module")
def pilot(data):
    return data[data["item"].isin(data["item"].unique()[:12])]


@pytest.fixture(scope="module")
def pool(data, pilot):
    return data.drop(index=pilot.index).drop(columns="score")


@pytest.fixture(scope="module")
def post(pilot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        return bt.fit_posterior(pilot, **ROLES, replicate="replicate", progressbar=False, random_seed=3)


@pytest.fixture(scope="module")
def demo():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bt.load("models/tee_demo.nc")


# -- the algebra ---------------------------------------------------------------------------------
def test_call_state_is_the_dstudy_on_a_balanced_layout():
    # 6 items x 3 judges, 2 calls per cell, one system: item / N, judge / M, cell / NM, calls / NMR
    item, judge = (g.ravel() for g in np.meshgrid(np.arange(6), np.arange(3), indexing="ij"))
    keys = np.column_stack([item, judge, item * 3 + judge])
    s = CallState.from_cells(np.zeros(18, int), keys, np.full(18, 2.0), n_units=1, shared=np.ones(3, bool))
    counts = {"item": 6, "judge": 3, "replicate": 2}
    labels = ["item", "judge", "item:judge", "replicate"]
    expected = 1 / divisors(labels, counts, facets={"replicate": ("item", "judge", "replicate")})
    np.testing.assert_allclose(s.unit_coefficients(0), expected)


def test_a_call_at_a_level_already_seen_never_raises_a_terms_error():
    # one system, 4 items x 3 cells each: a 4th cell at item 0 would raise the plain cell mean's
    # item x system coefficient (item 0 weighs more); the model's is held, the residual's falls
    item = np.repeat(np.arange(4), 3)
    s = CallState.from_cells(
        np.zeros(12, int), item[:, None], np.ones(12), n_units=1, shared=np.array([False])
    )
    now = s.unit_coefficients(0)
    after = s.after(0, np.array([[3.0]]), np.array([0.0]), [-1])[0, 0]
    plain = np.array([(3 * 9 + 16) / 13**2, 13 / 13**2])  # SS / C^2 and R / C^2 after the call
    assert plain[0] > now[0]  # what the floor is for
    np.testing.assert_allclose(after, [now[0], plain[1]])
    assert after[1] < now[1]


def test_one_more_call_updates_the_sums_as_a_recount_does():
    rng = np.random.default_rng(0)
    unit, item = rng.integers(0, 3, 40), rng.integers(0, 7, 40)
    n = rng.integers(1, 4, 40).astype(float)
    cells = pd.DataFrame({"u": unit, "i": item, "n": n}).groupby(["u", "i"], as_index=False)["n"].sum()
    u, i, nn = (cells[c].to_numpy() for c in ("u", "i", "n"))
    shared = np.array([True, False])  # keys: item (shared), item x system (own)
    s = CallState.from_cells(u, np.column_stack([i, i]), nn, n_units=3, shared=shared)
    counts = np.array([[np.sum((u == 1) & (i == 6))] * 2], float)  # unit 1, item 6
    floor = s.unit_coefficients(1)
    before = s.after(1, counts, np.array([0.0]), [2])[0, 0]
    s.add(1, counts[0], 0)
    u2, i2, n2 = np.append(u, 1), np.append(i, 6), np.append(nn, 1.0)
    fresh = CallState.from_cells(u2, np.column_stack([i2, i2]), n2, n_units=3, shared=shared)
    # the recount's coefficients, each held at the floor it had before the call
    held = np.minimum(fresh.unit_coefficients(1), floor) + fresh.unit_coefficients(2)
    np.testing.assert_allclose(np.where(np.append(shared, False), 0.0, held), before)
    np.testing.assert_allclose(s.unit_coefficients(1), np.minimum(fresh.unit_coefficients(1), floor))
    np.testing.assert_allclose(fresh.SS, s.SS)
    np.testing.assert_allclose(fresh.R, s.R)
    assert before[0] == 0  # the shared item term is adjusted for in a difference


@pytest.mark.parametrize(
    "delta,now,after", [(0.3, 0.2, 0.05), (0.0, 1.0, 0.5), (1.0, 0.2, 0.19), (-0.4, 0.5, 0.25)]
)
def test_the_preposterior_error_is_the_simulated_one(delta, now, after):
    z = np.random.default_rng(1).standard_normal(2_000_000)
    simulated = special.ndtr(-np.abs(delta + np.sqrt(now - after) * z) / np.sqrt(after)).mean()
    got = float(pair_error(np.array(delta), np.array([now]), np.array([after])))
    assert got == pytest.approx(simulated, abs=1e-3)
    assert float(pair_error(np.array(delta), np.array([now]), np.array([now]))) == pytest.approx(
        special.ndtr(-abs(delta) / np.sqrt(now))
    )


# -- the decision --------------------------------------------------------------------------------
def test_decision_is_the_leaderboard_and_pairs_numbers(post):
    lb = board.leaderboard(post)
    best = post.decision("best", target=0.5)
    assert best["metric"] == pytest.approx(lb["p_best"].iloc[0])
    assert best["about"] == lb["system"].iloc[0] and best["met"] == (lb["p_best"].iloc[0] >= 0.5)
    a, b = lb["system"].iloc[1], lb["system"].iloc[2]
    p = board.compare(post, a, b)["p_a_better"]
    assert post.decision("separate", systems=(a, b))["metric"] == pytest.approx(max(p, 1 - p))
    order = list(lb["system"])
    table = board.pairs(post, systems=order)
    adjacent = [max(r.p_a_better, 1 - r.p_a_better) for r in table.itertuples()
                if order.index(r.system_b) == order.index(r.system_a) + 1]  # fmt: skip
    assert post.decision("rank")["metric"] == pytest.approx(min(adjacent))
    row = lb.set_index("system").loc[a]
    assert post.decision("theta", systems=(a,), over="panel")["metric"] == pytest.approx(
        (row["panel_high"] - row["panel_low"]) / 2
    )


def test_decision_on_one_system_is_the_tee_half_width(demo):
    th = demo.theta(level=0.9).iloc[0]
    d = demo.decision("theta", target=0.05)
    assert d["metric"] == pytest.approx((th["tee_high"] - th["tee_low"]) / 2)
    assert d["met"] == (d["metric"] <= 0.05)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(objective="best", target=1.2), "between 0 and 1"),
        (dict(objective="best", target=0.0), "between 0 and 1"),
        (dict(objective="separate"), "two different systems"),
        (dict(objective="separate", systems=("s0", "s0")), "two different systems"),
        (dict(objective="separate", systems=("s0", "zz")), "not among"),
        (dict(objective="theta"), "one system's score"),
        (dict(objective="rank", systems=("s0",)), "drop systems"),
        (dict(objective="winner"), "objective must be one of"),
    ],
)
def test_decision_refuses_what_it_cannot_decide(post, kwargs, match):
    with pytest.raises(bt.DesignError, match=match):
        post.decision(**kwargs)


def test_objectives_about_systems_are_refused_on_one_system(demo):
    for objective in ("best", "rank", "separate"):
        with pytest.raises(bt.DesignError, match="several systems"):
            demo.decision(objective)
    with pytest.raises(bt.DesignError, match="positive number"):
        demo.decision("theta", target=-1.0)


# -- choosing calls ------------------------------------------------------------------------------
def test_chosen_calls_come_from_the_pool_in_order_of_choice(post, pool):
    shuffled = pool.sample(frac=1.0, random_state=0)
    chosen = post.next_calls(shuffled, 40, objective="best")
    assert len(chosen) == 40 and chosen.index.is_unique
    assert set(chosen.index) <= set(shuffled.index)
    pd.testing.assert_frame_equal(chosen.drop(columns=["gain", "cost"]), shuffled.loc[chosen.index])
    assert (chosen["gain"] > 0).all() and chosen.attrs["objective"] == "best"
    assert chosen.attrs["loss_after"] < chosen.attrs["loss"]


def test_best_buys_calls_of_the_contenders_not_of_a_system_far_behind(post, pool):
    lb = board.leaderboard(post)
    assert lb["p_best"].iloc[-1] < 0.01  # the last system is out of the race
    chosen = post.next_calls(pool, 60, objective="best")
    per = chosen["model"].value_counts()
    assert lb["system"].iloc[-1] not in per.index
    assert per.get(lb["system"].iloc[0], 0) > 0


def test_separate_buys_only_the_pair_and_rank_the_unresolved_pairs(post, pool):
    lb = board.leaderboard(post)
    a, b = lb["system"].iloc[1], lb["system"].iloc[2]
    chosen = post.next_calls(pool, 30, objective="separate", systems=(a, b))
    assert set(chosen["model"]) <= {a, b} and len(chosen) == 30
    weakest = post.decision("rank")["about"].split(" > ")
    ranked = post.next_calls(pool, 30, objective="rank")["model"].value_counts()
    assert set(ranked.index[:2]) & set(weakest)


def test_gains_fall_as_a_cell_is_repeated(post, pool):
    one = pool[(pool["model"] == "s0")].iloc[[0]]
    repeats = pd.concat([one] * 6, ignore_index=True)
    chosen = post.next_calls(repeats, 6, objective="theta", systems=("s0",))
    assert len(chosen) == 6
    assert np.all(np.diff(chosen["gain"].to_numpy()) < 0)


def test_new_items_are_candidates_and_costly_judges_are_bought_less(post, pool):
    fresh = pool.assign(item=pool["item"] + "_new")
    chosen = post.next_calls(fresh, 20, objective="best")
    assert chosen["item"].str.endswith("_new").all()
    cheap = post.next_calls(pool, 40, objective="best", cost={"j0": 1.0, "j1": 50.0})
    assert (cheap["judge"] == "j0").mean() > 0.8
    assert np.all(cheap["cost"].isin([1.0, 50.0]))


def test_one_system_pool_for_theta(demo):
    df = bt.datasets.load("tee_demo")
    pool = pd.concat(
        [df.drop(columns="score"), df.drop(columns="score").assign(item=lambda d: d["item"] + "x")]
    )
    chosen = demo.next_calls(pool.reset_index(drop=True), 25, objective="theta")
    assert len(chosen) == 25 and chosen.attrs["loss_after"] < chosen.attrs["loss"]
    # a new item is worth more than another call in a cell already scored three times
    assert chosen["item"].str.endswith("x").all()


def test_a_pool_the_fit_cannot_value_is_refused(post, pool):
    with pytest.raises(bt.DesignError, match="no column"):
        post.next_calls(pool.drop(columns="judge"), 5)
    with pytest.raises(bt.DesignError, match="fixed factor: a new system"):
        post.next_calls(pool.assign(model="new-model"), 5)
    with pytest.raises(bt.DesignError, match="fixed panel"):
        post.next_calls(pool.assign(judge="j9"), 5)
    with pytest.raises(bt.DesignError, match="missing values"):
        post.next_calls(pool.assign(item=None), 5)
    with pytest.raises(bt.DesignError, match="no cost for judge"):
        post.next_calls(pool, 5, cost={"j0": 1.0})
    with pytest.raises(bt.DesignError, match="not a column"):
        post.next_calls(pool, 5, cost="price")
    with pytest.raises(bt.DesignError, match="positive integer"):
        post.next_calls(pool, 0)
    assert nc.next_calls(post, pool.iloc[:0], 5).empty


def test_objective_and_target_checks_are_shared(post):
    obj = dc.objective_for(post, "theta", systems="s1")
    assert obj.systems == ("s1",) and not obj.is_probability
    assert obj.met(0.01, 0.02) and not obj.met(0.03, 0.02)


def test_a_fixed_panel_of_judges_is_bought_evenly():
    """With a fixed panel the estimand is the mean over all its judges: a pilot scored almost
    only by j0 leaves the systems' j1 effects unknown, so the new items' calls go to j1 (valued
    as a plain cell mean, j0 and j1 would tie and the pool's order would pick j0).
    """
    data = bt.simulate.systems_dgp(
        n_systems=3, n_items=30, n_judges=2, n_prompts=1, n_replicates=2, system_sd=0.1, random_seed=2
    ).drop(columns="prompt")
    items = data["item"].unique()
    j0 = (data["judge"] == "j0") & (data["replicate"] == data["replicate"].min())
    pilot = data[data["item"].isin(items[:12]) & (j0 | data["item"].isin(items[:2]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        fit = bt.fit_posterior(pilot, **ROLES, replicate="replicate", progressbar=False, random_seed=3)
    lb = board.leaderboard(fit)
    a, b = lb["system"].iloc[0], lb["system"].iloc[1]
    first = data["replicate"] == data["replicate"].min()
    pool = data[~data["item"].isin(items[:12]) & first].drop(columns="score")  # new items, both judges
    chosen = fit.next_calls(pool, 20, objective="separate", systems=(a, b))
    assert (chosen["judge"] == "j1").mean() > 0.8
