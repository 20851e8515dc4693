import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.tee.anova import anova_estimates, strata

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
