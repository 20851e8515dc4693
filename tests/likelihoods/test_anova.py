import numpy as np
import pytensor.tensor as pt
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods import anova
from bayes_tee.likelihoods.anova import anova_estimates, strata

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
    category="category",
)


@pytest.fixture(scope="module")
def big():
    df = bt.simulate.tee_dgp(
        n_items=300, n_categories=6, n_prompts=8, n_judges=3, n_temperatures=3, n_replicates=4, random_seed=3
    )
    return df, bt.validate_design(df, **ROLES)


def test_strata_partition_the_degrees_of_freedom(big):
    df, d = big
    st = strata(d)
    fixed_df = sum(fs.df for fs in st.fixed)
    assert st.df.sum() + fixed_df + 1 == len(df)
    # total sum of squares is split exactly
    total = ((df["score"] - df["score"].mean()) ** 2).sum()
    fixed_ss = sum(fs.weight * np.sum(fs.deviations**2) for fs in st.fixed)
    assert st.ss.sum() + fixed_ss == pytest.approx(total, rel=1e-9)


def test_moment_estimates_recover_the_truth_on_a_large_design(big):
    df, d = big
    est, truth = anova_estimates(d), df.attrs["truth"]
    for k in ("item", "item:prompt", "item:temperature", "item:judge", "cell", "replicate"):
        assert est[k] == pytest.approx(truth[k], rel=0.12), k
    # few-level terms: realised variance of 8 prompts / 6 categories scatters; stay in range
    for k in ("prompt", "category", "judge", "temperature"):
        assert 0.3 * truth[k] < est[k] < 2.5 * truth[k], k


def test_swapped_truth_would_fail(big):
    df, d = big
    est, truth = anova_estimates(d), df.attrs["truth"]
    # the check above is not vacuous: item:prompt and item:judge are told apart
    assert est["item:prompt"] != pytest.approx(truth["item:judge"], rel=0.12)


@pytest.mark.parametrize("category", [None, "category"])
def test_strata_statistics_equal_the_inclusion_exclusion_sums_of_squares(category):
    """The rotated block sums (numpy and PyTensor) equal strata()'s effects, to rounding, also
    far from zero (the shift keeps the digits).
    """
    df = bt.datasets.load("tee_demo")
    d = bt.validate_design(
        df,
        outcome="score",
        item="item",
        prompt="prompt",
        judge="judge",
        temperature="temperature",
        replicate="replicate",
        category=category,
    )
    arr = 1e4 + np.random.default_rng(0).normal(size=[len(d.levels[f]) for f in d.facets])
    old = anova._strata_parts(arr, d, 3.0)
    groups = anova._pooled_groups([e[3] for e in old["entries"]])
    # the category stratum is left to the category means' own term
    expected = [sum(old["entries"][i][2] for i in g) for g in groups if old["entries"][g[0]][0] != "category"]
    new = anova.strata_statistics(arr, d, 3.0, shift=1e4)
    if category:
        means = anova.category_means(arr, d, old["terms"]).means
        np.testing.assert_allclose(new["category_means"], means, rtol=1e-12)
    np.testing.assert_allclose(new["ss"], expected, rtol=1e-9)
    assert new["grand_mean"] == pytest.approx(old["grand_mean"], rel=1e-12)
    x = pt.tensor("x", shape=arr.shape)
    sym = anova.strata_statistics(x, d, 3.0, shift=1e4)
    np.testing.assert_allclose([float(v.eval({x: arr})) for v in sym["ss"]], expected, rtol=1e-9)
    for f, dev, *_ in old["fixed"]:
        np.testing.assert_allclose(sym["deviations"][f].eval({x: arr}), dev, atol=1e-9)
