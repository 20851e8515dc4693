"""Level effects of GLMM fits: the unconstrained layout inverts exactly, binomial fits rank their
items on every layout (calls lost, categories), and a Gaussian fit says why it has none.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.logit_glmm.density import BinomialDensity


def verdicts(n_items=40, n_categories=0, lost=0.0, seed=0):
    """Binary verdicts from the logit GLMM with known item effects (nested in categories)."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, n_categories, n_items) if n_categories else np.zeros(n_items, int)
    item = rng.normal(0, 1.2, n_items) + (
        rng.normal(0, 0.6, max(n_categories, 1))[cat] if n_categories else 0
    )
    i, v, j, r = (
        a.ravel() for a in np.meshgrid(np.arange(n_items), range(3), range(3), range(3), indexing="ij")
    )
    prompt, judge = rng.normal(0, 0.3, 3), np.array([-0.3, 0.0, 0.3])
    eta = 0.4 + item[i] + prompt[v] + judge[j]
    y = (rng.random(eta.size) < 1 / (1 + np.exp(-eta))).astype(int)
    df = pd.DataFrame({"item": [f"i{k:02d}" for k in i], "category": [f"c{c}" for c in cat[i]],
                       "prompt": v, "judge": j, "rep": r, "y": y})  # fmt: skip
    keep = rng.random(len(df)) >= lost
    return df[keep].reset_index(drop=True), item


def test_flatten_inverts_expand():
    df, _ = verdicts(n_items=12, n_categories=3)
    d = bt.validate_design(df, outcome="y", item="item", prompt="prompt", judge="judge", category="category",
                           family="binomial")  # fmt: skip
    dens = BinomialDensity(d, bt.priors.get_prior())
    x = np.random.default_rng(0).normal(size=(3, dens.layout.ndim))
    values = [dens.layout.expand(row) for row in x]
    stacked = {k: np.stack([v[k] for v in values]) for k in values[0]}
    np.testing.assert_allclose(dens.layout.flatten(stacked, 3), x, atol=1e-12)


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
@pytest.mark.parametrize(("n_categories", "lost"), [(0, 0.0), (4, 0.1)], ids=["balanced", "categories-lost"])
def test_binomial_item_effects_follow_the_truth(n_categories, lost):
    df, item = verdicts(n_categories=n_categories, lost=lost, seed=3)
    roles = dict(category="category") if n_categories else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(
            df, outcome="y", item="item", prompt="prompt", judge="judge", family="binomial",
            draws=300, tune=300, chains=2, random_seed=2, progressbar=False, **roles,
        )  # fmt: skip
    tab = post.level_effects("item")
    assert abs(tab["mean"].sum()) < 1e-9
    # the item's total effect (its category's share included), relative to the average item
    assert np.corrcoef(tab["mean"], item)[0, 1] > 0.8  # about 0.93 expected (27 calls per item)
    assert tab.attrs["scale"] == post.scale


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
def test_gaussian_fits_rank_fixed_facets_but_not_random_ones():
    df = bt.datasets.load("tee_demo")
    post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
                            draws=100, tune=100, chains=2, progressbar=False)  # fmt: skip
    with pytest.raises(bt.ArgumentError, match="GLMM fit"):
        post.level_effects("item")
    with pytest.raises(bt.UnknownNameError, match="choose one of"):
        post.level_effects("item:judge")
    # fixed judges: their drawn effects, in the order of the judges' mean scores (balanced data)
    judges = post.level_effects("judge")
    means = df.groupby("judge")["score"].mean()
    assert list(judges.sort_values("rank")["judge"]) == list(means.sort_values(ascending=False).index)
    assert abs(judges["mean"].sum()) < 1e-9


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # short chains
@pytest.mark.filterwarnings("ignore::bayes_tee.DesignWarning")
def test_likert_systems_of_a_formula_fit_are_ranked_on_the_latent_scale():
    df = bt.simulate.systems_dgp(n_systems=4, n_items=30, n_prompts=2, n_replicates=1, random_seed=3)
    df["y"] = np.digitize(df["score"], np.quantile(df["score"], [0.2, 0.4, 0.6, 0.8])) + 1
    post = bt.fit_posterior(
        df, formula="y ~ model + judge + (1|item) + (1|item:model) + (1|prompt)", family="ordinal",
        draws=300, tune=300, chains=2, random_seed=1, progressbar=False,
    )  # fmt: skip
    tab = post.level_effects("model").set_index("model")
    means = df.groupby("model")["y"].mean()
    assert tab["rank"].idxmin() == means.idxmax() and tab["rank"].idxmax() == means.idxmin()
