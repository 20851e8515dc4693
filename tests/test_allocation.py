"""Judge allocation (Zhu et al. 2026): call plans, strategy variances, simulation check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee import allocation

ROOT = Path(__file__).resolve().parents[1]
# Zhu et al. (2026), Table 2
QWEN = {"scenario": 1.530, "generation": 0.266, "judge": 0.947, "residual": 1.486}


def test_schedules_have_the_promised_structure():
    judges = ["a", "b", "c", "d", "e"]
    cyc = allocation.schedule(12, judges, generations=10, strategy="cyclic", random_seed=1)
    assert len(cyc) == 120 and set(cyc.columns) == {"call", "item", "generation", "judge"}
    counts = cyc.groupby(["item", "judge"]).size().unstack()
    assert (counts == 2).all().all()  # every item sees every judge equally often
    assert cyc.groupby(["item", "generation"]).size().eq(1).all()
    everyone = allocation.schedule(3, judges, generations=2, strategy="all", random_seed=1)
    assert everyone.groupby(["item", "generation"])["judge"].nunique().eq(5).all()
    rnd = allocation.schedule(400, judges, generations=1, strategy="random", random_seed=1)
    assert rnd["judge"].value_counts().min() > 50
    # execution order is shuffled: judge is not a function of the call index
    assert abs(np.corrcoef(cyc["call"], cyc["judge"].map({j: i for i, j in enumerate(judges)}))[0, 1]) < 0.2
    # the same seed gives the same plan
    pd.testing.assert_frame_equal(cyc, allocation.schedule(12, judges, 10, "cyclic", random_seed=1))


def test_cyclic_divisibility_rule():
    """n*m not a multiple of K: judge counts differ by at most one, and the user is told."""
    with pytest.warns(bt.DesignWarning, match="14 calls is not a multiple of 3 judges.*12 or 15"):
        plan = allocation.schedule(7, 3, generations=2, strategy="cyclic", random_seed=3)
    per_item = plan.groupby("item")["judge"].nunique()
    assert (per_item == 2).all()  # two generations, two different judges
    assert np.ptp(plan["judge"].value_counts().to_numpy()) <= 1
    with pytest.raises(bt.DesignError, match="strategy"):
        allocation.schedule(3, 3, 1, strategy="round robin")
    with pytest.raises(bt.DesignError, match="repeated"):
        allocation.schedule(3, ["a", "a"], 1)


@pytest.mark.parametrize("budget", [5, 7])
def test_formula_matches_simulated_evaluations(budget):
    """Empirical Var(mean) over 3000 simulated evaluations planned with the scheduler agrees
    with the closed form for every strategy (Zhu et al. 2026 Fig. 2), items held fixed as there.
    """
    comp = {**QWEN, "scenario": 0.0}
    t = allocation.simulate(
        comp,
        budget_per_item=budget,
        n_items=16,
        pool=5,
        n_sims=3000,
        strategies=("all", "random", "cyclic", "single", "panel:2"),
        random_seed=budget,
    )
    assert (abs(t["ratio"] - 1) < 3.5 * t["mc_se"]).all(), t
    v = t.set_index("strategy")["formula"]
    assert v["cyclic"] < v["random"] and v["cyclic"] < v["all"] and v["single"] > 10 * v["cyclic"]


def test_dominance_and_seed_002_numbers():
    cmp = allocation.strategy_variances(
        QWEN, budget_per_item=[5, 10, 20, 50], n_items=80, pool=5, include_scenario=False
    )
    t = cmp.table().set_index(["budget_per_item", "strategy"])
    # Zhu et al. (2026) Sec. 4.4: at B=5 cycling cuts the variance of random judging by 30-35%
    cut = 1 - t.loc[(5, "cyclic"), "variance"] / t.loc[(5, "random"), "variance"]
    assert cut == pytest.approx(1 - (0.266 + 1.486) / (0.266 + 0.947 + 1.486), rel=1e-9)
    assert 0.30 <= cut <= 0.36
    for b in (5, 10, 20, 50):
        assert t.loc[(b, "cyclic"), "variance"] <= min(
            t.loc[(b, "all"), "variance"], t.loc[(b, "random"), "variance"]
        )
    # for Qwen, generation variance is large: random single judge beats all judges (Eq. 8)
    assert t.loc[(5, "random"), "variance"] < t.loc[(5, "all"), "variance"]
    p = cmp.probabilities().set_index(["budget_per_item", "better", "than"])
    assert p.loc[(5, "cyclic", "random"), "probability"] == 1.0


def test_compare_from_a_fitted_posterior_per_draw():
    post = bt.load(ROOT / "models" / "tee_demo.nc")
    cmp = allocation.strategy_variances(post, budget_per_item=[3, 6, 12], n_items=40)
    assert cmp.pool == 3
    comp, k = allocation.components_from(post)
    draws = post.component_draws().stack(s=("chain", "draw"))
    np.testing.assert_allclose(comp["judge"], draws.sel(component="judge"))  # pool = fitted panel
    np.testing.assert_allclose(comp["generation"], draws.sel(component="replicate"))
    total = sum(draws.sel(component=c).to_numpy() for c in draws["component"].values)
    np.testing.assert_allclose(sum(comp.values()), total)  # nothing lost in the folding
    t = cmp.table()
    assert (t["variance_low"] < t["variance"]).all() and (t["variance"] < t["variance_high"]).all()
    p = cmp.probabilities().set_index(["budget_per_item", "better", "than"])
    assert p.loc[(6, "cyclic", "random"), "probability"] == 1.0
    assert 0 <= p.loc[(6, "all", "random"), "probability"] <= 1
    # a larger pool of which the 3 fitted judges are a sample: the judge term is rescaled
    comp10, k10 = allocation.components_from(post, pool=10)
    np.testing.assert_allclose(comp10["judge"], comp["judge"] * 3 / 2 * 9 / 10)
    with pytest.raises(bt.DesignError, match="No 'nonesuch' component"):
        allocation.components_from(post, generation="nonesuch")
    fig = cmp.plot()
    assert len(fig.axes[0].lines) == 4


def test_compare_needs_pool_for_explicit_components():
    with pytest.raises(bt.DesignError, match="pool="):
        allocation.strategy_variances(QWEN, budget_per_item=5, n_items=10)
    with pytest.raises(bt.DesignError, match="Unknown strategy"):
        allocation.strategy_variances(QWEN, budget_per_item=5, n_items=10, pool=5, strategies=("best",))


def test_the_old_name_compare_still_works_with_a_warning():
    comps = {"scenario": 1.5, "generation": 0.27, "judge": 0.95, "residual": 1.49}
    new = allocation.strategy_variances(comps, budget_per_item=5, n_items=80, pool=5).table()
    with pytest.warns(DeprecationWarning, match="strategy_variances"):
        old = allocation.compare(comps, budget_per_item=5, n_items=80, pool=5).table()
    assert old.equals(new)
