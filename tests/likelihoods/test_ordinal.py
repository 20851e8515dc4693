"""The ordinal (cumulative-link) GLMM: its numba density equals its PyMC model, its inputs are
checked, and a fit recovers known cutpoints and latent components.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt


def likert(n_items=24, n_prompts=3, n_judges=3, reps=2, K=5, judge_cuts=False, seed=0, drop=0.0, sd_item=1.2):
    """Likert scores from the cumulative-logit model: items, prompts, judges (fixed offsets),
    item x judge, and cutpoints common or per judge; returns the frame and the truth.
    """
    rng = np.random.default_rng(seed)
    item = rng.normal(0, sd_item, n_items)
    prompt = rng.normal(0, 0.4, n_prompts)
    judge = np.linspace(-0.5, 0.5, n_judges)
    ij = rng.normal(0, 0.5, (n_items, n_judges))
    base = np.linspace(-2.0, 2.0, K - 1)
    cuts = [base * (1.0 + 0.5 * j) if judge_cuts else base for j in range(n_judges)]
    rows = []
    for i in range(n_items):
        for v in range(n_prompts):
            for j in range(n_judges):
                for r in range(reps):
                    latent = 0.2 + item[i] + prompt[v] + judge[j] + ij[i, j] + rng.logistic()
                    rows.append((f"i{i:02d}", f"p{v}", f"j{j}", r, 1 + int(np.sum(latent > cuts[j]))))
    df = pd.DataFrame(rows, columns=["item", "prompt", "judge", "rep", "y"])
    if drop:
        df = df[rng.random(len(df)) >= drop].reset_index(drop=True)
    truth = {"sigma_item": sd_item, "cuts": np.array([c - c.mean() for c in cuts])}
    return df, truth


def design(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.build_design(df, outcome="y", item="item", prompt="prompt", judge="judge", **kw)


@pytest.mark.parametrize(
    ("family", "thresholds", "drop"),
    [
        ("ordinal", "common", 0.0),
        ("ordinal", "judge", 0.0),
        ("ordinal_probit", "common", 0.1),
        ("ordinal_probit", "judge", 0.1),
    ],
)
def test_ordinal_density_equals_the_pymc_model(family, thresholds, drop, same_density):
    df, _ = likert(n_items=10, K=4, drop=drop, judge_cuts=True)
    d = design(df, family=family, thresholds=thresholds)
    same_density(d, family, n_points=2)


def test_ordinal_gradient_matches_finite_differences():
    df, _ = likert(n_items=10, K=4, drop=0.1, judge_cuts=True)
    for family in ("ordinal", "ordinal_probit"):
        dens = bt.likelihoods.LIKELIHOODS[family].density(design(df, family=family), bt.priors.get_prior())
        rng = np.random.default_rng(0)
        x = dens.initial_point(rng) + rng.normal(scale=0.3, size=dens.layout.ndim)
        grad = dens.logp_grad(x)[1]
        for k in rng.choice(dens.layout.ndim, 25, replace=False):
            step = np.zeros_like(x)
            step[k] = 1e-5
            fd = (dens.logp_grad(x + step)[0] - dens.logp_grad(x - step)[0]) / 2e-5
            assert abs(fd - grad[k]) <= 1e-7 * max(1.0, abs(fd)), (family, k, fd, grad[k])


def test_ordinal_design_counts_and_checks():
    df, _ = likert(n_items=8, K=5)
    d = design(df, family="ordinal")
    counts = d.cells[d.count_columns].to_numpy()
    assert d.outcome_levels == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert (counts.sum(axis=1) == d.cells["n"]).all() and counts.sum() == len(df)
    first = df[(df["item"] == "i00") & (df["prompt"] == "p0") & (df["judge"] == "j0")]["y"]
    assert counts[0].tolist() == [int((first == k).sum()) for k in range(1, 6)]
    with pytest.raises(bt.DesignError, match="needs integer scores"):
        design(df.assign(y=df["y"] + 0.5), family="ordinal")
    with pytest.raises(bt.DesignError, match="3 or more categories.*family='binomial'"):
        design(df.assign(y=(df["y"] > 3).astype(int)), family="ordinal")
    with pytest.warns(bt.DesignWarning, match=r"Score\(s\) \[3\] of column 'y' were never given"):
        bt.build_design(df[df["y"] != 3], outcome="y", item="item", judge="judge", family="ordinal")
    with pytest.raises(bt.DesignError, match="thresholds='judge' gives each judge"):
        bt.build_design(df, outcome="y", item="item", family="ordinal", thresholds="judge")
    with pytest.raises(bt.DesignError, match="family='gaussian' has none"):
        design(df, thresholds="judge")
    with pytest.raises(bt.DesignError, match="does not apply with formula="):
        bt.build_design(df, formula="y ~ (1|item) + (1|judge)", thresholds="judge")
    with pytest.raises(bt.ArgumentError, match="method='rows'"):
        bt.fit_posterior(df, outcome="y", item="item", family="ordinal", method="rows", progressbar=False)
