"""The shares of Var(theta_hat) at a design (the :class:`Fit` methods ``shares`` and
``plot_shares``): closed form on the model's scale (:mod:`bayes_tee.posterior.components`), by
simulation on the logit GLMM's probability scale.

>>> shares(post, n_items=200)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .. import plots
from .._core.exceptions import ArgumentError
from .._core.intervals import summarize_samples
from ..families import get_family
from ..gstudy.divisors import Estimand
from ..gstudy.weights import counts_with
from . import components as comp
from . import predictive as pr
from .simulate import layout, posterior_draws

#: Why a fit that compares systems has only the shares of a difference.
ON_SYSTEMS = "a fit that compares systems gives the shares of a difference's variance only."

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .fit import Fit


def shares(
    post: Fit,
    *,
    estimand: Estimand = "domain",
    categories: Literal["fixed", "random"] = "fixed",
    level: float = 0.9,
    scale: Literal["model", "probability"] = "model",
    n_draws: int = 200,
    sims_per_draw: int = 100,
    random_seed: int | None = None,
    **n: float | None,
) -> pd.DataFrame:
    """Each component's contribution to Var(theta_hat) at a design (``n_items=...``), and its share.

    Parameters
    ----------
    n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories : float, optional
        Design counts; ``None`` keeps the observed count. Judges and temperatures are
        fixed panels: more of them means averaging over a panel of that size.
    n_positions : float, optional
        Pairwise fits: presentation orders averaged over (2 counterbalanced, 1 single).
    estimand : {"domain", "finite"}
        ``finite`` (this exact item set) drops the item and category terms.
    categories : {"fixed", "random"}
        Fixed categories (the paper's default) enter with the items, ``/ N``.
    level : float
        Credible level.
    scale : {"model", "probability"}
        ``model``: the fitted scale, closed form. ``probability`` (GLMM): contributions to
        the variance of the mean success rate by simulation (``n_draws``,
        ``sims_per_draw``, ``random_seed``); for the linear model the two agree.

    Returns
    -------
    pandas.DataFrame
        ``component, divisor, contribution_median/low/high, share_median/low/high``;
        ``attrs["var_theta"]`` (the total's posterior ``mean``, ``median``, ``low``,
        ``high``), ``attrs["scale"]``.

    On a fit that compares systems (``system=``) the table is the shares of the variance of
    the difference between two systems (:func:`bayes_tee.posterior.separation.difference_shares`).

    >>> post.shares(n_items=200)  # doctest: +SKIP
    """
    if scale not in ("model", "probability"):
        raise ArgumentError(f"scale must be 'model' or 'probability', got {scale!r}.")
    if scale == "probability" and get_family(post.family).latent:
        if n.get("n_positions") is not None:
            raise ArgumentError(
                "probability-scale shares take the observed presentation orders; drop n_positions."
            )
        n = {k: v for k, v in n.items() if k != "n_positions"}
        return probability_shares(
            post,
            n,
            estimand=estimand,
            categories=categories,
            level=level,
            n_draws=n_draws,
            sims_per_draw=sims_per_draw,
            random_seed=random_seed,
        )
    counts = counts_with(post.design, **n)
    table = comp.shares_table(
        post.component_draws(), post.terms, counts, estimand=estimand, categories=categories, level=level
    )
    table.attrs.update(design=counts, estimand=estimand, scale=post.scale)
    return table


def probability_shares(
    post: Fit,
    design: dict,
    *,
    estimand: Estimand,
    categories: str,
    level: float,
    n_draws: int,
    sims_per_draw: int,
    random_seed: int | None,
) -> pd.DataFrame:
    """The GLMM's contributions to the variance of the mean success rate, by simulation
    (:func:`bayes_tee.posterior.predictive.probability_contributions`).
    """
    if estimand != "domain":
        raise ArgumentError("probability-scale shares of the GLMM are for estimand='domain'.")
    rng = np.random.default_rng(random_seed)
    draws = posterior_draws(post, n_draws, rng)
    observed = all(v is None for v in design.values())
    lay = layout(post, None if observed else design)
    labels, contrib, total = pr.probability_contributions(
        draws, post.terms, lay, sims_per_draw=sims_per_draw, categories=categories, rng=rng
    )
    share = contrib / contrib.sum(axis=1, keepdims=True)
    out = pd.concat(
        [
            pd.DataFrame({"component": labels}),
            summarize_samples(contrib, level, "contribution_"),
            summarize_samples(share, level, "share_"),
        ],
        axis=1,
    )
    total_summary = summarize_samples(total[:, None], level).iloc[0]
    out.attrs.update(
        var_theta={"mean": float(np.mean(total))}
        | {k: float(total_summary[k]) for k in ("median", "low", "high")},
        scale="probability",
        estimand=estimand,
        n_draws=len(total),
        sims_per_draw=sims_per_draw,
    )
    return out


def shares_figure(
    post: Fit, table: pd.DataFrame, kind: Literal["vartheta", "observation"] = "vartheta", **kwargs
) -> Figure:
    """The shares bar chart of :meth:`bayes_tee.Posterior.plot_shares` for ``table``: the shares of
    Var(theta_hat) at the design the ``n_*`` of ``**kwargs`` give (those of :func:`shares`), or of
    the per-call variance (``kind="observation"``, the components table).
    """
    n = {k: v for k, v in kwargs.items() if k.startswith("n_") and k != "n_draws"}
    scale = "probability" if kwargs.get("scale") == "probability" and kind == "vartheta" else post.scale
    return plots.plot_shares(
        table,
        kind,
        counts=counts_with(post.design, **n),
        facets=post.design.facets,
        method=post.method,
        scale=scale,
    )
