"""An SD that underflows to zero in warm-up is a rejected point, never an exception: a
ZeroDivisionError raised in nutpie's callback stopped every chain of a blocks fit (2 prompts of
SD 0.05, benchmarks/small_facets.py).
"""

from __future__ import annotations

import numpy as np

import bayes_tee as bt
from bayes_tee._core.compile import density_logp
from bayes_tee.likelihoods.registry import LIKELIHOODS


def test_every_density_takes_an_sd_of_zero_without_raising():
    df = bt.simulate.tee_dgp(
        n_items=12, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2, random_seed=2
    )
    df = df[np.random.default_rng(1).random(len(df)) > 0.1]
    binary = df.assign(score=(df["score"] > df["score"].median()).astype(int))
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
    spec = bt.priors.get_prior()
    checked = []
    for name, lk in LIKELIHOODS.items():
        if lk.density is None or name.startswith("ordinal"):
            continue
        data = binary if lk.family == "binomial" else df
        d = bt.validate_design(data, **roles, family=lk.family)
        if name == "balanced":  # complete layout only
            d = bt.validate_design(
                bt.simulate.tee_dgp(
                    n_items=12, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2, random_seed=2
                ),
                **roles,
            )
        if name == "collapsed":  # its layouts: the items' and the cells' random effects, a slope
            d = bt.build_design(
                df.assign(length=df["item"].astype("category").cat.codes % 5),
                formula="score ~ judge + length + (1|item) + (1|item:judge:prompt)", warn=False,
            )  # fmt: skip
        dens = lk.density(d, spec)
        x = dens.initial_point(np.random.default_rng(0))
        for sd in [n for n, kind, _ in dens.layout.parameters if kind == "log"]:
            y = x.copy()
            y[dens.layout.slices[sd]] = -800.0  # exp(-800) == 0.0
            value, grad = density_logp(dens, y)
            assert value == -np.inf or (np.isfinite(value) and np.isfinite(grad).all()), (name, sd, value)
        checked.append(name)
    assert {"balanced", "augmented", "blocks", "collapsed", "binomial", "binomial_quadrature"} <= set(checked)
