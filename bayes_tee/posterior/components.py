"""Variance components, shares and the TEE interval, computed per posterior draw.

Two layers (as in arviz-stats): small NumPy functions that know only a trailing ``component``
axis, and thin wrappers that take the :class:`xarray.DataArray` of component draws
(dims ``chain, draw, component``) and return tidy DataFrames.

A component enters Var(theta_hat) divided by the number of levels it is averaged over; those
divisors, and which terms an estimand keeps, are :mod:`bayes_tee.gstudy.divisors`.

>>> post.components()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from .._core.intervals import check_level, summarize
from ..design.terms import Term
from ..gstudy.divisors import Estimand, divisors, vartheta_contributions
from ..gstudy.divisors import averaged_facets as averaged_facets  # bt.components keeps them
from ..gstudy.divisors import kept_terms as kept_terms
from ..gstudy.divisors import normal_mixture_quantile as normal_mixture_quantile


def components_table(draws: xr.DataArray, level: float = 0.9) -> pd.DataFrame:
    """Per-observation variance components with their shares of the per-call variance.

    Parameters
    ----------
    draws : xarray.DataArray
        Component variances, dims ``(chain, draw, component)``.
    level : float
        Credible level of the intervals.

    Returns
    -------
    pandas.DataFrame
        ``component, mean, median, low, high, share_median, share_low, share_high``.
    """
    shares = draws / draws.sum("component")
    out = summarize(draws, level)
    out.insert(0, "mean", draws.mean(("chain", "draw")).values)
    out = out.join(summarize(shares, level, "share_"))
    return out.reset_index()


def contributions(
    draws: xr.DataArray,
    terms: list[Term],
    counts: dict[str, float],
    *,
    estimand: Estimand = "domain",
    categories: Literal["fixed", "random"] = "fixed",
) -> xr.DataArray:
    """Each component's contribution to Var(theta_hat) per draw, with a ``divisor`` coord.

    Summing over ``component`` gives Var(theta_hat) per draw.
    """
    labels = [str(c) for c in draws["component"].values]
    div = divisors(labels, counts, facets={t.label: t.facets for t in terms}, categories=categories)
    contrib = vartheta_contributions(draws.values, labels, div, estimand=estimand)
    return draws.copy(data=contrib).assign_coords(divisor=("component", div))


def shares_table(
    draws: xr.DataArray,
    terms: list[Term],
    counts: dict[str, float],
    *,
    estimand: Estimand = "domain",
    categories: Literal["fixed", "random"] = "fixed",
    level: float = 0.9,
) -> pd.DataFrame:
    """Contributions to Var(theta_hat) at a design and their shares, per draw, summarised.

    Returns
    -------
    pandas.DataFrame
        ``component, divisor, contribution_median, contribution_low, contribution_high,
        share_median, share_low, share_high``; ``attrs["var_theta"]`` holds the total's
        posterior ``mean``, ``median``, ``low`` and ``high``.
    """
    contrib = contributions(draws, terms, counts, estimand=estimand, categories=categories)
    total = contrib.sum("component")
    out = pd.DataFrame(
        {"divisor": contrib["divisor"].values},
        index=pd.Index(contrib["component"].values.astype(str), name="component"),
    )
    out = out.join(summarize(contrib, level, "contribution_"))
    out = out.join(summarize(contrib / total, level, "share_"))
    out = out.reset_index()
    vals = total.values.ravel()
    q = (1 - check_level(level)) / 2
    out.attrs["var_theta"] = {
        "mean": float(np.mean(vals)),
        "median": float(np.median(vals)),
        "low": float(np.quantile(vals, q)),
        "high": float(np.quantile(vals, 1 - q)),
    }
    return out


def component_draws(posterior: xr.Dataset, terms: list[Term]) -> xr.DataArray:
    """Variance of every component per draw, dims ``(chain, draw, component)``.

    Random and residual terms: ``sigma^2``. Fixed judge/temperature: the population variance
    (divide by L) of the level effects, per draw (Messing 2026 Eq. 7).
    """
    arrays = []
    for t in terms:
        x = posterior[t.var_name]
        if t.kind == "fixed":
            dim = t.facets[0]
            arrays.append(((x - x.mean(dim)) ** 2).mean(dim))
        else:
            arrays.append(x**2)
    da = xr.concat(arrays, dim="component", coords="minimal", compat="override")
    return da.assign_coords(component=[t.label for t in terms]).transpose("chain", "draw", "component")
