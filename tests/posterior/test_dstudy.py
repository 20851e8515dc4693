"""D-study projections, interventions and budget allocation on the saved demo posterior."""

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.gstudy.weights import summarize_designs
from bayes_tee.posterior import dstudy as ds

DEMO = Path(__file__).resolve().parents[2] / "models" / "tee_demo.nc"


@pytest.fixture(scope="module")
def post():
    return bt.load(DEMO)


def scaled(post, factors):
    """The demo posterior with chosen components multiplied (SDs by sqrt(factor))."""
    out = copy.copy(post)
    out.idata = copy.deepcopy(post.idata)
    names = {t.label: t.var_name for t in post.terms}
    for label, f in factors.items():
        out.idata.posterior[names[label]] = out.idata.posterior[names[label]] * np.sqrt(f)
    return out


def test_weights_follow_seed_000_eq_10():
    labels = ["item", "prompt", "judge", "item:prompt", "item:judge", "prompt:judge", "cell", "replicate"]
    facets = {
        "item": ("item",),
        "prompt": ("prompt",),
        "judge": ("judge",),
        "item:prompt": ("item", "prompt"),
        "item:judge": ("item", "judge"),
        "prompt:judge": ("prompt", "judge"),
        "cell": ("item", "prompt", "judge"),
        "replicate": ("item", "prompt", "judge", "replicate"),
    }
    w = ds.design_weights(
        labels, facets, pd.DataFrame([dict(n_items=100, n_prompts=5, n_judges=3, n_replicates=2)])
    )
    N, V, M, R = 100, 5, 3, 2
    expected = [
        1 / N,
        1 / V,
        1 / M,
        1 / (N * V),
        1 / (N * M),
        1 / (V * M),
        1 / (N * V * M),
        1 / (N * V * M * R),
    ]
    np.testing.assert_allclose(w[0], expected)
    rel = ds.design_weights(labels, facets, pd.DataFrame([dict(n_items=100)]), decision="relative")[0]
    assert [lab for lab, x in zip(labels, rel) if x == 0] == ["prompt", "judge", "prompt:judge"]
    fin = ds.design_weights(labels, facets, pd.DataFrame([dict(n_items=100)]), estimand="finite")[0]
    assert fin[0] == 0 and fin[1] > 0


def test_dstudy_at_the_observed_design_is_the_shares_total(post):
    d = post.dstudy()
    assert len(d) == 1
    assert d["var_ratio_median"].iloc[0] == pytest.approx(1.0)
    var = post.shares().attrs["var_theta"]["median"]
    assert d["se_median"].iloc[0] == pytest.approx(
        np.sqrt(var), rel=1e-6
    )  # median of 4000 draws: interpolated


def test_dstudy_grid_is_monotone_and_complete(post):
    d = post.dstudy(
        n_items=[50, 100, 200], n_prompts=[1, 3, 5], n_judges=[1, 2, 3], n_replicates=[1, 3], target_se=0.2
    )
    assert len(d) == 3 * 3 * 3 * 2
    assert {"calls", "se_median", "se_low", "se_high", "var_ratio_median", "p_below_target"} <= set(d)
    assert (d["se_low"] <= d["se_median"]).all() and (d["se_median"] <= d["se_high"]).all()
    # more of anything never increases any draw's variance, so the medians are monotone too
    for field in ("n_items", "n_prompts", "n_judges", "n_replicates"):
        others = [c for c in ("n_items", "n_prompts", "n_judges", "n_replicates") if c != field]
        for _, g in d.groupby(others):
            assert np.all(np.diff(g.sort_values(field)["se_median"].to_numpy()) <= 1e-15)
    assert d["p_below_target"].between(0, 1).all()
    assert d["calls"].iloc[0] == 50 * 1 * 1 * 2 * 1


def test_relative_decision_is_smaller_and_judge_insensitive(post):
    rel = post.dstudy(n_judges=[1, 3], decision="relative")
    ab = post.dstudy(n_judges=[1, 3])
    assert (rel["se_median"] < ab["se_median"]).all()
    # the judge main effect cancels; only item:judge and finer terms still depend on M
    gain_rel = rel["se_median"].iloc[0] / rel["se_median"].iloc[1]
    gain_abs = ab["se_median"].iloc[0] / ab["se_median"].iloc[1]
    assert gain_rel < gain_abs


def test_new_judges_with_a_fixed_panel_warn(post):
    with pytest.warns(UserWarning, match="fixed panel"):
        post.dstudy(n_judges=[5])


def test_interventions_signs_and_single_judge(post):
    iv = post.interventions().set_index("intervention")
    assert iv.loc["items x2", "change_median"] < 0 < iv.loc["items x1/2", "change_median"]
    assert iv.loc["single judge", "p_reduces"] == 0.0
    # single judge: the judge and prompt:judge, item:judge terms lose their 1/M
    sh = post.shares().set_index("component")
    d1 = post.dstudy(n_judges=1)["var_ratio_median"].iloc[0]
    assert 100 * (d1 - 1) == pytest.approx(iv.loc["single judge", "change_median"], rel=1e-9)
    assert d1 > 1 + sh.loc["judge", "share_low"]


@pytest.mark.parametrize(
    "dominant, field, expected",
    [("judge", "n_judges", 3), ("item", "n_items", None), ("replicate", "n_replicates", None)],
)
def test_allocation_buys_what_dominates(post, dominant, field, expected):
    big = scaled(post, {dominant: 400.0})
    small = scaled(post, {"judge": 1e-4, "item": 1e-4, "replicate": 1e-4})
    # replications average the replicate term no better than new items do, so they only pay
    # once the item pool is exhausted: cap it there
    kw = dict(budget=3000, max_items=40 if dominant == "replicate" else 2000, max_replicates=10)
    plan_big, plan_small = big.allocate(**kw), small.allocate(**kw)
    assert plan_big.best["cost"] <= 3000
    if expected is not None:
        assert plan_big.best[field] == expected
    else:  # it buys strictly more of the dominant facet than when that facet is negligible
        assert plan_big.best[field] > plan_small.best[field], (plan_big, plan_small)


def test_allocation_costs_frontier_and_baselines(post):
    plan = post.allocate(
        budget=5000, cost_per_call={"judge1": 2.5, "judge2": 0.25, "judge3": 1.0}, max_items=200
    )
    b = plan.best
    assert b["cost"] <= 5000
    # a design with M judges pays the M cheapest prices
    prices = np.sort([2.5, 0.25, 1.0])
    per_item = b["n_prompts"] * b["n_temperatures"] * b["n_replicates"] * prices[: int(b["n_judges"])].sum()
    assert b["cost"] == pytest.approx(b["n_items"] * per_item)
    f = plan.frontier
    assert np.all(np.diff(f["cost"]) >= 0) and np.all(np.diff(f["se_median"]) < 0)
    at = plan.candidates[plan.candidates["at_budget"]]
    assert at["p_best"].sum() == pytest.approx(1.0)
    # every at-budget design is near the best whenever it is the best
    assert (at["p_near_best"] >= at["p_best"] - 1e-12).all()
    assert 0.0 < b["p_near_best"] <= 1.0
    assert b["se_median"] <= 1.01 * at["se_median"].min()  # within the tie tolerance, cheapest
    assert not (
        (plan.candidates["cost"] < b["cost"]) & (plan.candidates["se_median"] <= 1.01 * at["se_median"].min())
    ).any()
    assert list(plan.baselines.index) == ["naive (V=1, R=3)", "standard (V=1, R=1)", "TEE-guided"]
    assert plan.baselines.loc["TEE-guided", "se_median"] <= plan.baselines["se_median"].min()
    with pytest.raises(ValueError, match="unknown judge"):
        post.allocate(budget=100, cost_per_call={"gpt-4o": 1.0})


def test_target_se_picks_the_cheapest_design_that_meets_it(post):
    target = float(post.dstudy()["se_median"].iloc[0]) * 1.2
    plan = post.allocate(budget=5000, target_se=target, max_items=200)
    assert plan.best["se_median"] <= target
    ok = plan.candidates[plan.candidates["se_median"] <= target]
    assert plan.best["cost"] == ok["cost"].min()


def test_dstudy_plots_render(post, tmp_path):
    plan = post.allocate(budget=3000, max_items=200)
    for name, fig in (
        ("dstudy", post.plot_dstudy()),
        ("interventions", post.plot_interventions()),
        ("frontier", plan.plot_frontier()),
    ):
        path = tmp_path / f"{name}.png"
        fig.savefig(path, dpi=60)
        assert path.stat().st_size > 5000


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(n_positions=2), "no position facet"),
        (dict(n_prompts=2, n={"prompt": [3]}), "given twice"),
        (dict(n={"prompt": []}), "no counts"),
        (dict(target_se=-1.0), "positive"),
    ],
)
def test_a_request_it_cannot_honour_is_refused_not_ignored(kw, match):
    """A count for a facet the fit lacks changed the calls and left the SE alone; a count given
    twice lost one; an empty list gave an empty table; a negative target was accepted.
    """
    post = bt.load(DEMO)
    with pytest.raises(ValueError, match=match):
        post.dstudy(**kw)


@pytest.mark.parametrize("method", ["shares", "design_counts"])
def test_shares_refuse_a_count_for_a_facet_the_fit_lacks(method):
    """shares(n_positions=2) on a fit with no presentation order took the count and left the
    shares unchanged (the same mechanism as the D-study's, now shared).
    """
    post = bt.load(DEMO)
    with pytest.raises(bt.ArgumentError, match="no position facet"):
        getattr(post, method)(n_positions=2)
    assert getattr(post, method)(n_positions=1) is not None  # one level is what the fit has


@pytest.mark.parametrize("n_designs", [1, 255, 256, 257, 600])
def test_design_summaries_in_blocks_equal_the_whole_table(n_designs):
    """``summarize_designs`` works through the designs in blocks: each statistic is what the
    whole ``(draws, designs)`` table gives, at every block boundary.
    """
    rng = np.random.default_rng(n_designs)
    var, current = rng.gamma(2.0, size=(300, n_designs)), rng.gamma(2.0, size=300)
    out = summarize_designs(var, current, level=0.8, target_se=1.3)
    se, ratio = np.sqrt(var), var / current[:, None]
    for name, x in (("se_", se), ("var_ratio_", ratio)):
        q = (1 - 0.8) / 2  # as the library computes it (0.09999999999999998)
        lo, med, hi = np.quantile(x, [q, 0.5, 1 - q], axis=0)
        for col, want in (("low", lo), ("median", med), ("high", hi)):
            np.testing.assert_array_equal(out[f"{name}{col}"].to_numpy(), want)
    np.testing.assert_array_equal(out["p_below_target"].to_numpy(), (se < 1.3).mean(axis=0))
    assert list(out.index) == list(range(n_designs))
