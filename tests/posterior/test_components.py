import numpy as np
import pytest
import xarray as xr

from bayes_tee.design.terms import model_terms
from bayes_tee.gstudy.divisors import divisors, normal_mixture_quantile, vartheta_contributions
from bayes_tee.posterior.components import components_table, shares_table

TERMS = model_terms(("item", "prompt", "temperature", "judge"), replicates=True, category=True)
LABELS = [t.label for t in TERMS]
COUNTS = {"item": 141, "prompt": 5, "temperature": 3, "judge": 3, "replicate": 8, "category": 12}


def draws(seed=0, n=200):
    rng = np.random.default_rng(seed)
    vals = rng.gamma(2.0, 0.01, size=(2, n, len(LABELS)))
    return xr.DataArray(vals, dims=("chain", "draw", "component"), coords={"component": LABELS})


def test_divisors_follow_the_facets():
    div = dict(zip(LABELS, divisors(LABELS, COUNTS, facets={t.label: t.facets for t in TERMS})))
    assert div["item"] == 141 and div["category"] == 141  # fixed categories: with the items
    assert div["judge"] == 3 and div["temperature"] == 3
    assert div["item:prompt"] == 141 * 5 and div["prompt:judge"] == 15
    assert div["cell"] == 141 * 5 * 3 * 3
    assert div["replicate"] == 141 * 5 * 3 * 3 * 8 == 50760  # Messing (2026) App. C.5
    rnd = divisors(["category"], COUNTS, categories="random")
    assert rnd[0] == 12


def test_shares_sum_to_one_per_draw_and_summaries_are_consistent():
    da = draws()
    out = shares_table(da, TERMS, COUNTS)
    div = out["divisor"].to_numpy()
    per_draw = (da / div) / (da / div).sum("component")
    np.testing.assert_allclose(per_draw.sum("component"), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out["share_median"], per_draw.median(("chain", "draw")), rtol=1e-12)


def test_huge_random_facets_leave_only_the_sensitivity_indices():
    da = draws()
    big = dict(COUNTS, item=141e6, prompt=5e6, replicate=8e6)
    out = shares_table(da, TERMS, big).set_index("component")
    assert out.loc[["judge", "temperature"], "share_median"].sum() == pytest.approx(1.0, abs=1e-5)
    assert out.drop(["judge", "temperature"])["share_high"].max() < 1e-4


def test_finite_estimand_drops_items():
    da = draws()
    out = shares_table(da, TERMS, COUNTS, estimand="finite").set_index("component")
    assert out.loc["item", "share_high"] == 0.0 and out.loc["category", "share_high"] == 0.0
    with pytest.raises(ValueError, match="estimand"):
        vartheta_contributions(np.ones(2), ["item", "judge"], np.ones(2), estimand="nope")


def test_paper_safety_numbers_from_the_closed_form():
    # Messing (2026) App. C.8: judge share 43.8% and Var = 0.000354 imply judge sigma2 = 3 * 0.438 * 0.000354
    judge_var = 3 * 0.438 * 0.000354
    contrib = vartheta_contributions(np.array([judge_var]), ["judge"], np.array([3.0]))
    assert contrib[0] / 0.000354 == pytest.approx(0.438)
    # single judge: the judge term loses its 1/M -> Var grows by 2 * 0.438 = 88% from this term alone
    single = vartheta_contributions(np.array([judge_var]), ["judge"], np.array([1.0]))
    assert (single[0] - contrib[0]) / 0.000354 == pytest.approx(2 * 0.438)


def test_components_table_per_observation_shares():
    da = draws()
    out = components_table(da)
    assert list(out.columns) == [
        "component",
        "mean",
        "median",
        "low",
        "high",
        "share_median",
        "share_low",
        "share_high",
    ]
    assert (out["low"] <= out["median"]).all() and (out["median"] <= out["high"]).all()


def test_normal_mixture_quantile():
    assert normal_mixture_quantile(0.975, np.array([2.0])) == pytest.approx(1.959964 * 2, rel=1e-6)
    mixed = normal_mixture_quantile(0.975, np.array([0.5, 2.0]))
    assert 1.959964 * 0.5 < mixed < 1.959964 * 2.0
    # a scale mixture has heavier tails than the Normal with the same variance
    assert mixed > 1.959964 * np.sqrt((0.25 + 4.0) / 2) * 0.9
