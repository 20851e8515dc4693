"""Variance components, shares and the TEE interval, computed per posterior draw.

Two layers (as in arviz-stats): small NumPy functions that know only a trailing ``component``
axis, and thin wrappers that take the :class:`xarray.DataArray` of component draws
(dims ``chain, draw, component``) and return tidy DataFrames.

A component enters Var(theta_hat) divided by the number of levels it is averaged over
(Messing 2026 Eq. 3, 8-10, App. C.5): the product of the level counts of its facets, e.g.
``item:prompt / (N V)``, ``judge / M``, ``replicate / (N V H M R)``. Categories are fixed by
default, as in the paper, so ``category`` enters like item heterogeneity, ``/ N``; with
``categories="random"`` it enters ``/ C``. ``estimand="finite"`` (this exact item set) drops
the item and category terms.

>>> import numpy as np
>>> divisors(["item", "judge", "item:judge"], {"item": 100, "judge": 3})
array([100.,   3., 300.])
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr
from scipy import optimize, special

from .._core.exceptions import ArgumentError
from .._core.intervals import check_level, summarize
from ..design.terms import Term

Estimand = Literal["domain", "finite"]


def averaged_facets(
    labels: list[str],
    facets: dict[str, tuple[str, ...]] | None = None,
    *,
    categories: Literal["fixed", "random"] = "fixed",
) -> list[tuple[str, ...]]:
    """The facets each component is averaged over in theta_hat (its divisor is the product of
    their level counts). Fixed categories average with the items; random ones over ``C``.

    >>> averaged_facets(["category", "item:judge"])
    [('item',), ('item', 'judge')]
    """
    facets = facets or {}
    out = []
    for label in labels:
        fs = facets.get(label, tuple(label.split(":")))
        out.append(("item",) if label == "category" and categories == "fixed" else tuple(fs))
    return out


def divisors(
    labels: list[str],
    counts: dict[str, float],
    *,
    facets: dict[str, tuple[str, ...]] | None = None,
    categories: Literal["fixed", "random"] = "fixed",
) -> np.ndarray:
    """Divisor of each component in Var(theta_hat) at a design with the given level counts.

    Parameters
    ----------
    labels : list of str
        Component labels.
    counts : dict
        Level count per facet (``item``, ``prompt``, ``temperature``, ``judge``,
        ``replicate``, ``category``); missing facets count 1.
    facets : dict, optional
        Label -> facets; default: read from the label (``cell`` needs it given).
    categories : {"fixed", "random"}
        Fixed categories put ``category`` over ``N``; random ones over ``C``.

    Returns
    -------
    numpy.ndarray
    """
    return np.array(
        [
            float(np.prod([counts.get(f, 1) for f in fs]))
            for fs in averaged_facets(labels, facets, categories=categories)
        ]
    )


def kept_terms(
    labels: list[str],
    facets: dict[str, tuple[str, ...]] | None = None,
    *,
    estimand: Estimand = "domain",
    decision: Literal["absolute", "relative"] = "absolute",
) -> np.ndarray:
    """Which components enter Var(theta_hat) (boolean mask).

    ``estimand="finite"`` (this exact item set) drops the item and category terms;
    ``decision="relative"`` (systems compared under shared prompts, judges and temperatures)
    drops the terms that do not involve items, whose shared effects cancel (Messing 2026 App. D).

    >>> kept_terms(["item", "prompt", "item:prompt"], decision="relative")
    array([ True, False,  True])
    """
    if estimand not in ("domain", "finite"):
        raise ArgumentError(f"estimand must be 'domain' or 'finite', got {estimand!r}.")
    if decision not in ("absolute", "relative"):
        raise ArgumentError(f"decision must be 'absolute' or 'relative', got {decision!r}.")
    facets = facets or {}
    keep = np.ones(len(labels), bool)
    for j, label in enumerate(labels):
        if estimand == "finite" and label in ("item", "category"):
            keep[j] = False
        if (
            decision == "relative"
            and label != "category"
            and "item" not in facets.get(label, label.split(":"))
        ):
            keep[j] = False
    return keep


def vartheta_contributions(
    variances: np.ndarray,
    labels: list[str],
    divisor: np.ndarray,
    *,
    estimand: Estimand = "domain",
) -> np.ndarray:
    """Each component's contribution to Var(theta_hat): ``variance / divisor`` (last axis).

    ``estimand="finite"`` zeroes the item and category terms.

    >>> vartheta_contributions(np.array([0.04, 0.015]), ["item", "judge"], np.array([40., 3.]))
    array([0.001, 0.005])
    """
    return np.where(kept_terms(labels, estimand=estimand), variances / divisor, 0.0)


def normal_mixture_quantile(p: float, scales: np.ndarray) -> float:
    """Quantile of the equal-weight mixture of ``N(0, scales_s^2)``: the predictive error of
    an estimate whose SE is uncertain, integrated over its posterior (not plugged in).

    >>> round(normal_mixture_quantile(0.975, np.array([1.0, 1.0])), 3)
    1.96
    """
    scales = np.asarray(scales, float).ravel()

    def f(q: float) -> float:
        return float(np.mean(special.ndtr(q / scales))) - p

    hi = float(np.max(scales)) * 10.0
    return float(optimize.brentq(f, -hi, hi, xtol=1e-12))


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
