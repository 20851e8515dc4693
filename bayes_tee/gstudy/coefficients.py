"""Weights of the generalizability (E rho^2) and dependability (Phi) coefficients at a design.

G-theory (Cronbach et al. 1972; Brennan 2001) splits the variance of a mean score over a
measurement design into the *universe score* variance of the object of measurement (items by
default) and two error variances. For a design with ``n'_f`` levels of each facet ``f``, a
component ``sigma_k^2`` whose facets are ``S_k`` enters divided by the product of ``n'_f`` over
the facets of ``S_k`` other than the object ``o``:

- ``o`` in ``S_k`` and every other facet of ``S_k`` fixed: universe score (the same fixed
  levels are averaged for every object; a fixed facet's interaction with the object is part of
  what is measured);
- ``o`` in ``S_k`` otherwise: relative error ``delta`` and absolute error ``Delta``;
- ``o`` not in ``S_k``: absolute error ``Delta`` only, unless all of ``S_k`` is fixed (a
  constant shift, no error).

``E rho^2 = tau / (tau + delta)`` (relative decisions, ranking objects) and
``Phi = tau / (tau + Delta)`` (absolute decisions, against a threshold). The within-cell
residual is also divided by the replicates ``n'_replicate``. With items in categories, the
category variance is part of the items' universe score. The same weights serve the posterior
(one coefficient per draw) and the classical plug-in (:mod:`bayes_tee.studies.plugin`).

>>> from bayes_tee.design.terms import Term
>>> terms = [Term("item", ("item",), "random"), Term("judge", ("judge",), "random"),
...          Term("residual", ("item", "judge"), "random")]
>>> w = g_weights(terms, "item", pd.DataFrame({"n_judge": [1, 4]}), {"item": 40, "judge": 3})
>>> coefficients(np.array([1.0, 0.5, 1.0]), w)["phi"].round(3)
array([0.4  , 0.727])
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from ..design.terms import Term


def measured_facets(t: Term) -> tuple[str, ...]:
    """The facets a component is averaged over (``category`` sits with the items)."""
    if t.label == "category":
        return ("item",)
    return tuple(t.facets)


def g_weights(
    terms: list[Term],
    object: str,
    designs: pd.DataFrame,
    counts: dict[str, float],
    *,
    fixed_object: bool = False,
) -> dict[str, np.ndarray]:
    """Weights ``(n_designs, n_terms)`` of the universe-score, relative- and absolute-error
    variances: ``tau = variances @ w["tau"].T`` and likewise ``delta`` and ``Delta``.

    ``designs`` holds ``n_<facet>`` columns (``n_replicate`` for the replicates); counts not
    in it come from ``counts`` (the observed design), else 1. ``fixed_object``: the object is
    a fixed factor whose levels are the whole universe of objects (the compared systems of a
    ``system=`` fit); its universe-score variance is their population variance.
    """
    fixed = {t.facets[0] for t in terms if t.kind == "fixed"}
    if object in fixed and not fixed_object:
        raise ArgumentError(
            f"The object of measurement {object!r} is a fixed factor; fit it as (1|{object})."
        )
    if not fixed_object and not any(
        t.kind == "random" and measured_facets(t) == (object,) and t.label != "category" for t in terms
    ):
        facets = sorted({f for t in terms for f in t.facets if f != "replicate"})
        raise ArgumentError(
            f"object={object!r} is not a random main effect of the model; choose one of {facets} "
            "that the model has as (1|facet)."
        )
    # the residual is always error: the within-cell noise, or (no replicates) the cell term
    has_within = any(t.kind == "residual" for t in terms)
    widest = max(len(t.facets) for t in terms if t.label != "category")
    residual = {
        t.label for t in terms if t.kind == "residual" or (not has_within and len(t.facets) == widest)
    }
    n = len(designs)
    shape = (n, len(terms))
    w = {k: np.zeros(shape) for k in ("tau", "delta", "Delta")}
    for j, t in enumerate(terms):
        fs = measured_facets(t)
        div = np.ones(n)
        for f in fs:
            if f == object and t.label != "category":
                continue
            col = f"n_{f}"
            observed = float(counts.get(f, 1.0))
            div *= designs[col].fillna(observed).to_numpy(float) if col in designs else observed
        rest = {f for f in fs if f != object and f != "replicate"}
        if t.label == "category" and object == "item":
            w["tau"][:, j] = 1.0
        elif object in fs and t.label != "category":
            if rest <= fixed and t.label not in residual:
                w["tau"][:, j] = 1.0 / div
            else:
                w["delta"][:, j] = w["Delta"][:, j] = 1.0 / div
        elif not (set(fs) - {"replicate"} <= fixed):
            w["Delta"][:, j] = 1.0 / div
    return w


def coefficients(variances: np.ndarray, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """E rho^2 and Phi from component variances (``(..., n_terms)``: one set or one per draw),
    shape ``(..., n_designs)``, with the universe-score and error variances.
    """
    v = np.asarray(variances, float)
    tau, delta, Delta = (v @ weights[k].T for k in ("tau", "delta", "Delta"))
    return {
        "erho2": tau / (tau + delta),
        "phi": tau / (tau + Delta),
        "tau": tau,
        "delta": delta,
        "Delta": Delta,
    }


def n_grid(design, object: str, n: dict | None) -> pd.DataFrame:
    """Every combination of the counts in ``n`` (facet or its column -> count or list), one row
    per design, with an ``n_<facet>`` column for every facet but the object (observed counts
    where not given) and ``n_replicate`` when cells repeat.
    """
    counts = design.counts
    facets = [f for f in design.facets if f != object]
    if design.has_replicates:
        facets.append("replicate")
    given: dict[str, list[float]] = {}
    for key, val in (n or {}).items():
        facet = design.facet_of(key)
        if facet == object:
            raise ArgumentError(
                f"n= sets the counts of the facets of measurement, not of the object {object!r}."
            )
        if facet not in facets:
            raise ArgumentError(f"n={{{key!r}: ...}}: not a facet of this design; use one of {facets}.")
        vals = [float(x) for x in np.atleast_1d(val)]
        if any(not x >= 1 for x in vals):
            raise ArgumentError(f"n[{key!r}] must be at least 1, got {vals}.")
        given[facet] = vals
    rows = list(itertools.product(*[given.get(f, [float(counts.get(f, 1.0))]) for f in facets]))
    return pd.DataFrame(rows, columns=[f"n_{f}" for f in facets])
