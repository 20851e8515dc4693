"""The NumPy/numba strata densities are the PyMC models they replace for nutpie: the same log
density (up to PyTensor's rounding of gammaln) and the same gradient, on every layout the
balanced and augmented likelihoods serve, with every prior family.
"""

import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.strata import density as strata_density
from bayes_tee.likelihoods.strata.density import StrataDensity
from bayes_tee.tee.fit import standardize

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)


def design(case):
    kw = dict(n_items=10, n_prompts=3, n_judges=2, n_temperatures=2, n_replicates=3, random_seed=3)
    roles = dict(ROLES)
    extra = {}
    if case.startswith("categories"):
        kw.update(n_categories=3, n_items=12)
        roles["category"] = "category"
    if case == "random_judges":
        extra["judge_effect"] = "random"
    if case == "single_facet":
        roles = dict(outcome="score", item="item", replicate="replicate")
    if case == "no_replicates":
        kw["n_replicates"] = 1
        roles.pop("replicate")
    df = bt.simulate.tee_dgp(**kw)
    if case == "single_facet":
        df = df[(df["prompt"] == df["prompt"].iloc[0]) & (df["judge"] == df["judge"].iloc[0])]
        df = df[df["temperature"] == df["temperature"].iloc[0]]
    df["score"] = 40.0 + 7.0 * df["score"]  # away from mean 0 / SD 1: the raw-scale arithmetic
    if case != "balanced" and case != "categories_balanced":
        rng = np.random.default_rng(1)
        df = df.drop(index=rng.choice(df.index, size=len(df) // 8, replace=False))
        if case.startswith("categories"):  # unequal categories
            df = df[~df["item"].isin(df["item"].unique()[:2])]
        if case == "empty_cells":
            cell = df[["item", "prompt", "judge", "temperature"]].drop_duplicates().iloc[[2, 9]]
            df = df.merge(cell, how="left", indicator=True).query("_merge == 'left_only'")
            df = df.drop(columns="_merge")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.validate_design(df, **roles, **extra)


@pytest.mark.parametrize(
    ("case", "priors"),
    [
        ("balanced", "default"),  # half-t
        ("balanced", "half_normal"),
        ("balanced", "half_cauchy"),
        ("balanced", "exponential"),
        ("balanced", bt.priors.PriorSpec("gamma", bt.priors.SDPrior("gamma", 0.5, nu=2.0))),
        ("categories_balanced", "half_t_wide"),
    ],
)
def test_balanced_density_equals_the_pymc_model(case, priors, same_density):
    same_density(design(case), "balanced", priors)


@pytest.mark.parametrize(
    "case", ["calls_lost", "categories", "empty_cells", "random_judges", "single_facet", "no_replicates"]
)
def test_augmented_density_equals_the_pymc_model(case, same_density):
    same_density(design(case), "augmented")


def test_augmented_density_axis_by_axis_rotation_equals_the_kronecker_one(monkeypatch, same_density):
    d = design("categories")
    monkeypatch.setattr(strata_density, "KRON_MAX_RATIO", 0)
    assert (
        StrataDensity(d, bt.priors.get_prior(), augmented=True)
        ._args[strata_density.KERNEL_ARGUMENTS.index("kron")]
        .size
        == 0
    )
    same_density(d, "augmented", n_points=2)


def test_standardised_density_matches_too(same_density):
    same_density(standardize(design("empty_cells"))[0], "augmented", "half_normal", n_points=2)


def test_balanced_density_refuses_an_unbalanced_design():
    with pytest.raises(ValueError, match="balanced"):
        StrataDensity(design("calls_lost"), bt.priors.get_prior())


def test_fit_samples_the_density_without_compiling():
    df = bt.simulate.tee_dgp(n_items=12, n_prompts=3, n_judges=2, n_replicates=2, random_seed=2)
    df = df.drop(index=df.index[::13])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)  # few draws
        post = bt.fit_posterior(
            df,
            outcome="score",
            item="item",
            prompt="prompt",
            judge="judge",
            temperature="temperature",
            replicate="replicate",
            chains=2,
            tune=200,
            draws=200,
            random_seed=1,
            progressbar=False,
            method="augmented",
        )
    assert post.method == "augmented"
    # the kernel as a C callback compiled once per machine: nothing compiled for this layout
    assert post.info["compiled_with"] == "callback" and post.info["compile_s"] < 5
    assert post.info["n_free_parameters"] > 8
    assert {"sigma_item", "mu", "judge_effect"} <= set(post.idata["posterior"].data_vars)
    assert post.idata["posterior"]["judge_effect"].dims[-1] == "judge"
