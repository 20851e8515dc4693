"""theta_hat of a fitted posterior: its estimate with panel, TEE and naive intervals (the
:class:`Fit` method ``theta``).

The closed forms (:mod:`bayes_tee.posterior.components`) answer on the model's scale; the logit
GLMM's theta goes through simulation (:mod:`bayes_tee.posterior.simulate`).

>>> theta(post)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from .._core.intervals import check_level
from .._core.trees import group
from ..families import get_family
from ..gstudy.divisors import normal_mixture_quantile
from . import components as comp
from . import predictive as pr
from .simulate import layout, posterior_draws

#: Why a fit that compares systems has no theta.
ON_SYSTEMS = (
    "theta() is one benchmark score, and this fit compares systems (the grand mean over them "
    "scores nothing): post.leaderboard() gives each system's score with its panel and new "
    "intervals, post.pairs() their differences."
)

if TYPE_CHECKING:
    from .fit import Fit


def theta(
    post: Fit,
    level: float = 0.95,
    *,
    n_draws: int = 400,
    sims_per_draw: int = 50,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """The grand mean with its panel, TEE and naive intervals side by side.

    ``panel``: the mean for this exact judge/temperature panel. ``tee`` adds the
    judge/temperature sensitivity, what another equally good pipeline would have reported
    (Messing 2026 Sec. 3.3): SE ``sqrt(E[Var(theta_hat)])``, interval from the predictive error
    mixed over the posterior of Var(theta_hat). ``naive``: ``s / sqrt(n)`` over the rows.
    For the GLMM everything is on the probability scale (the TEE error by simulating the
    design afresh per draw, ``n_draws`` x ``sims_per_draw``).

    Returns one row: ``estimate, panel_low, panel_high, tee_se, tee_low, tee_high,
    naive_estimate, naive_se, naive_low, naive_high, se_ratio, level``.

    >>> post.theta()  # doctest: +SKIP
    """
    a = (1 - check_level(level)) / 2
    z = float(stats.norm.ppf(1 - a))
    d = post.design
    naive_se = d.y_sd / np.sqrt(d.n_rows)
    P = group(post.idata, "posterior")
    fam = get_family(post.family)
    mu = P[fam.theta_variable].values.ravel()
    if fam.latent:  # components on a latent scale: theta's error by simulation
        rng = np.random.default_rng(random_seed)
        draws = posterior_draws(post, n_draws, rng)
        err = pr.simulate_studies(draws, post.terms, layout(post), sims_per_draw=sims_per_draw, rng=rng)[
            "error"
        ]
        tee_se = float(np.sqrt(np.mean(err**2)))
        half = float(np.quantile(np.abs(err), 1 - 2 * a))
    else:  # components on the outcome's scale: the closed form
        contrib = comp.contributions(post.component_draws(), post.terms, d.counts)
        v = contrib.sum("component").values.ravel()
        half = normal_mixture_quantile(1 - a, np.sqrt(v))
        tee_se = float(np.sqrt(np.mean(v)))
    est = float(np.median(mu))
    row = {
        "estimate": est,
        "panel_low": float(np.quantile(mu, a)),
        "panel_high": float(np.quantile(mu, 1 - a)),
        "tee_se": tee_se,
        "tee_low": est - half,
        "tee_high": est + half,
        "naive_estimate": d.y_mean,
        "naive_se": naive_se,
        "naive_low": d.y_mean - z * naive_se,
        "naive_high": d.y_mean + z * naive_se,
        "se_ratio": tee_se / naive_se,
        "level": level,
    }
    return pd.DataFrame([row])
