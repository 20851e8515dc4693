"""Building blocks every Gaussian and binomial likelihood shares: level indices, coordinates,
the SD priors, the intercept and fixed level effects, random-effect vectors (centred or not, per
:func:`choose_centering`) and the within-cell replicate potential.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from .._core.priors import PriorSpec
from ..design.roles import Design
from ..design.terms import Term
from .anova import anova_estimates


def term_levels(design: Design, term: Term) -> tuple[np.ndarray, list[str]]:
    """Index of each observed cell into the term's observed levels, and the level labels."""
    cells = design.cells
    if term.label == "category":
        return design.item_category[cells["item"].to_numpy()], list(design.categories)
    if len(term.facets) == 1:
        f = term.facets[0]
        return cells[f].to_numpy(), list(design.levels[f])
    codes = cells[list(term.facets)]
    idx, uniques = pd.MultiIndex.from_frame(codes).factorize()
    labels = ["|".join(design.levels[f][c] for f, c in zip(term.facets, combo)) for combo in uniques]
    return np.asarray(idx), labels


def choose_centering(design: Design, ratio: float = 1.0) -> dict[str, bool]:
    """Centred (``True``) or non-centred parameterisation per random term.

    A level's effect is seen through the mean of its cells, whose noise is the variance of
    every term nested inside the level, divided by how many of its levels the mean averages
    (item effects inside a category, item:prompt effects inside a prompt, cell error and
    replicate noise inside anything). A term is centred when its variance exceeds
    ``ratio`` times that noise, i.e. the data pin each level down well; otherwise it is
    non-centred, which is what removes the funnel of a weakly identified SD. Variances are
    the moment estimates of :func:`bayes_tee.likelihoods.anova.anova_estimates` (missing cells filled).

    Examples
    --------
    >>> choose_centering(d)["item"]
    True
    """
    est = {k: max(v, 0.0) for k, v in anova_estimates(design, fill_missing=True).items()}
    L = {f: len(design.levels[f]) for f in design.facets}
    n_rep = float(design.cells["n"].mean())

    def nest(t: Term) -> set[str]:  # facets, with items counted inside their category
        return (
            {"category"}
            if t.label == "category"
            else set(t.facets) | ({"category"} if "item" in t.facets and design.categories else set())
        )

    out = {}
    for t in design.terms:
        if t.kind != "random":
            continue
        noise = 0.0
        for j in design.terms:
            if j is t or j.kind == "fixed" or not nest(j) > nest(t):
                continue
            inner = [f for f in j.facets if f != "replicate" and f not in t.facets]
            count = np.prod([L[f] for f in inner]) if inner else 1.0
            if t.label == "category" and "item" in inner:
                count = count / len(design.categories)
            noise += est.get(j.label, 0.0) / (count * (n_rep if j.kind == "residual" else 1.0))
        out[t.label] = est.get(t.label, 0.0) > ratio * max(noise, 1e-12)
    return out


def coords(design: Design) -> dict[str, list[str]]:
    """PyMC coordinates: the level labels of every facet (and the categories)."""
    coords = {f: list(design.levels[f]) for f in design.facets}
    if design.categories:
        coords["category"] = list(design.categories)
    return coords


def sd_priors(design: Design, priors: PriorSpec, y_sd=None) -> dict[str, pt.TensorVariable]:
    """The prior SD variable of every random and residual term, by label, scaled by ``y_sd``."""
    y_sd = design.y_sd if y_sd is None else y_sd
    return {
        t.label: priors.for_component(t.label).build(t.var_name, y_sd)
        for t in design.terms
        if t.kind != "fixed"
    }


def fixed_effect(design: Design, priors: PriorSpec, term: Term, y_sd=None) -> pt.TensorVariable:
    """Zero-sum level effects of a fixed facet, scaled by ``y_sd``."""
    y_sd = design.y_sd if y_sd is None else y_sd
    return pm.ZeroSumNormal(term.var_name, sigma=priors.fixed_scale * y_sd, dims=term.facets[0])


def intercept(design: Design, priors: PriorSpec, y_mean=None, y_sd=None) -> pt.TensorVariable:
    """The grand mean ``mu``, centred on the outcome mean with a scale of ``y_sd``."""
    y_mean = design.y_mean if y_mean is None else y_mean
    y_sd = design.y_sd if y_sd is None else y_sd
    return pm.Normal("mu", mu=y_mean, sigma=priors.intercept_scale * y_sd)


def fixed_predictor(design: Design, priors: PriorSpec) -> pt.TensorVariable:
    """Grand mean plus the fixed level effects at every observed cell."""
    pred = intercept(design, priors)
    for t in design.terms:
        if t.kind == "fixed":
            pred = pred + fixed_effect(design, priors, t)[design.cells[t.facets[0]].to_numpy()]
    return pred


def residual_sd(design: Design, sig: dict) -> pt.TensorVariable | None:
    """The SD of the within-cell (replicate) residual, ``None`` when cells do not repeat."""
    return next((sig[t.label] for t in design.terms if t.kind == "residual"), None)


def replicate_potential(design: Design, rep: pt.TensorVariable) -> None:
    """Within-cell sums of squares: ``-(n-1) log sigma_rho - SS / (2 sigma_rho^2)`` summed over cells."""
    dof = float((design.cells["n"] - 1).sum())
    ss = float(design.cells["ss"].sum())
    pm.Potential("replicate_loglik", -dof * pt.log(rep) - ss / (2.0 * rep**2))


def random_effect(model: pm.Model, t: Term, labels: list[str], sd, centred: bool) -> pt.TensorVariable:
    """One level effect per label of term ``t``: centred ``Normal(0, sd)`` or non-centred ``z * sd``."""
    dim = t.facets[0] if len(t.facets) == 1 else t.key
    if dim not in model.coords:
        model.add_coord(dim, labels)
    if centred:
        return pm.Normal(f"re_{t.key}", 0.0, sd, dims=dim)
    return pm.Normal(f"z_{t.key}", 0.0, 1.0, dims=dim) * sd
