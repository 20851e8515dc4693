"""The augmented model is exact: integrating its latent cell means out gives the marginal
likelihood of the observed data (the dense Gaussian, checked in test_linalg), at any parameters.
"""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods import build_model, choose_method
from bayes_tee.likelihoods.strata.augment import augment_layout


def unbalanced(case):
    kw = dict(n_items=12, n_prompts=3, n_judges=2, n_temperatures=2, n_replicates=3, random_seed=5)
    roles = dict(
        outcome="score",
        item="item",
        prompt="prompt",
        judge="judge",
        temperature="temperature",
        replicate="replicate",
    )
    if case == "categories":  # unequal category sizes
        kw["n_categories"] = 3
        roles["category"] = "category"
    if case == "no_replicates":
        kw["n_replicates"] = 1
    df = bt.simulate.tee_dgp(**kw)
    rng = np.random.default_rng(0)
    df = df.drop(index=rng.choice(df.index, size=len(df) // 12, replace=False))
    if case == "categories":
        df = df[~df["item"].isin(df["item"].unique()[:2])]
    if case == "missing_cells":
        cell = df[["item", "prompt", "judge", "temperature"]].drop_duplicates().iloc[[3, 17]]
        df = df.merge(cell, how="left", indicator=True).query("_merge == 'left_only'").drop(columns="_merge")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.validate_design(df, **{k: v for k, v in roles.items() if v in df})


def potentials(model):
    total = pt.sum([pt.sum(p) for p in model.replace_rvs_by_values(model.potentials)])
    return total


@pytest.mark.parametrize("case", ["replicates", "categories", "missing_cells", "no_replicates"])
def test_augmented_likelihood_integrates_to_the_marginal(case):
    design = unbalanced(case)
    aug = augment_layout(design)
    assert not design.complete and aug.design.complete and aug.n_latent > 0
    assert aug.shape[0] == len(design.levels["item"])  # unequal categories: no phantom items
    spec = bt.priors.get_prior()
    ma, mm = build_model(design, spec, method="augmented"), build_model(design, spec, method="marginal")
    u = ma.rvs_to_values[ma["missing_cell_means__"]]
    la = potentials(ma)
    f_aug = pytensor.function(
        ma.value_vars, [la, pytensor.grad(la, u)], on_unused_input="ignore", mode="FAST_COMPILE"
    )
    f_marg = pytensor.function(mm.value_vars, potentials(mm), on_unused_input="ignore", mode="FAST_COMPILE")
    rng = np.random.default_rng(2)
    diffs = []
    start = mm.initial_point()  # compiles a function: once
    for _ in range(4):
        point = {k: v + rng.normal(0, 0.6, np.shape(v)) for k, v in start.items()}
        la0, g = f_aug(**point, **{u.name: np.zeros(aug.n_latent)})
        # the log joint is quadratic in u: its Hessian by exact gradient differences
        Hn = np.column_stack([g - f_aug(**point, **{u.name: e})[1] for e in np.eye(aug.n_latent)])
        Hn = 0.5 * (Hn + Hn.T)
        integral = la0 + 0.5 * g @ np.linalg.solve(Hn, g) - 0.5 * np.linalg.slogdet(Hn)[1]
        integral += 0.5 * aug.n_latent * np.log(2 * np.pi)
        diffs.append(integral - f_marg(**point))
    # equal up to a constant that does not depend on the parameters
    assert np.ptp(diffs) < 1e-6 * max(1.0, abs(np.mean(diffs))), diffs


def test_auto_takes_blocks_for_short_cells_however_many():
    df = bt.simulate.tee_dgp(
        n_items=12, n_prompts=3, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=5
    )
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        few = bt.validate_design(df.iloc[5:], **roles)  # a few calls lost
        many = bt.validate_design(df.sample(frac=0.6, random_state=1), **roles)
    assert augment_layout(few).latent_share < 0.1 and choose_method(few) == "blocks"
    # the item blocks compile nothing per layout (a C callback), so 40% of the calls lost is
    # theirs too while each item's block is small
    assert augment_layout(many).latent_share > 0.3 and choose_method(many) == "blocks"


@pytest.mark.parametrize("random_judges", [False, True])
def test_complete_design_with_unequal_categories_is_exact_without_latent_cells(random_judges):
    """Every cell complete, categories of 2, 3 and 5 items: ``auto`` takes the strata likelihood
    (no latent values), and its log density is the marginal one up to a constant.
    """
    df = bt.simulate.tee_dgp(
        n_items=15, n_prompts=3, n_judges=2, n_temperatures=2, n_replicates=2, n_categories=3, random_seed=4
    )
    first = df.drop_duplicates("item").groupby("category")["item"].apply(list)
    drop = first.iloc[0][:3] + first.iloc[1][:2]  # sizes 2, 3, 5
    df = df[~df["item"].isin(drop)]
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature")
    extra = {"judge_effect": "random"} if random_judges else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        design = bt.validate_design(df, **roles, replicate="replicate", category="category", **extra)
    assert sorted(np.bincount(design.item_category)) == [2, 3, 5]
    assert design.complete and not design.balanced and choose_method(design) == "balanced"
    spec = bt.priors.get_prior()
    mb, mm = build_model(design, spec, method="balanced"), build_model(design, spec, method="marginal")
    f_bal = pytensor.function(mb.value_vars, potentials(mb), on_unused_input="ignore", mode="FAST_COMPILE")
    f_marg = pytensor.function(mm.value_vars, potentials(mm), on_unused_input="ignore", mode="FAST_COMPILE")
    rng = np.random.default_rng(3)
    diffs = []
    start = mm.initial_point()  # compiles a function: once
    for _ in range(5):
        point = {k: v + rng.normal(0, 0.8, np.shape(v)) for k, v in start.items()}
        diffs.append(f_bal(**point) - f_marg(**point))
    assert np.ptp(diffs) < 1e-7 * max(1.0, abs(np.mean(diffs))), diffs
