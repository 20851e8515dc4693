"""Each variance component's divisor in Var(theta_hat), and which components a decision keeps.

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
from scipy import optimize, special

from .._core.exceptions import ArgumentError

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
