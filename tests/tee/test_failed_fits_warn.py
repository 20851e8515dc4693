"""A fit that fails its diagnostics is never returned in silence: every likelihood, sampled far
too briefly to pass (60 draws cannot reach a bulk ESS of 400), warns when it is fitted and
again on each table read from it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.likelihoods.registry import LIKELIHOODS

ROLES = dict(item="item", prompt="prompt", judge="judge", replicate="replicate")
OUTCOME = {"binomial": "bernoulli", "binomial_quadrature": "bernoulli", "ordinal": "ordinal",
           "ordinal_probit": "ordinal"}  # fmt: skip
FAMILY = {"binomial_quadrature": "binomial"}


def _data(method: str):
    df = bt.simulate.tee_dgp(10, 2, 3, 1, 2, outcome=OUTCOME.get(method, "gaussian"), random_seed=3)
    if method in ("augmented", "blocks", "marginal", "cells", "rows", "collapsed"):
        df = df[np.random.default_rng(1).random(len(df)) >= 0.1]
    return df


@pytest.mark.parametrize("method", list(LIKELIHOODS))
def test_an_unconverged_fit_always_warns(method):
    family = FAMILY.get(method, OUTCOME.get(method, "gaussian"))
    family = {"bernoulli": "binomial", "ordinal": method if method.startswith("ordinal") else "ordinal"}.get(
        family, family
    )
    kw = dict(draws=30, tune=30, chains=2, random_seed=1, progressbar=False)
    if method != "ordinal_probit":
        kw["method"] = method
    # collapsed: the items' and the cells' random effects only (no prompt facet: its calls are the
    # item x judge cell's replicates)
    roles = dict(item="item", judge="judge") if method == "collapsed" else ROLES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        with pytest.warns(bt.DiagnosticWarning, match="diagnostics failed"):
            post = bt.fit_posterior(_data(method), outcome="score", family=family, **roles, **kw)
        assert not post.diagnostics()["ok"]
        with pytest.warns(bt.DiagnosticWarning):
            post.components()
        with pytest.warns(bt.DiagnosticWarning):
            post.theta(n_draws=20, sims_per_draw=5)
