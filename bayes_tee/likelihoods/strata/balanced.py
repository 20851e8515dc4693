"""``balanced``: exact for complete designs (every cell with the same calls; categories of any
size). The stratum sums of squares are sufficient (:mod:`bayes_tee.likelihoods.anova`): one
scaled chi-square term per stratum plus Gaussian terms for the grand mean (or the category
means) and the fixed contrasts. No random-effect vectors, so no funnels; the cost does not
grow with the number of calls.
"""

from __future__ import annotations

import pymc as pm
import pytensor.tensor as pt

from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ..anova import balanced_data, strata
from ..levels import coords
from ..parts import fixed_effect, intercept, sd_priors


def balanced_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """The balanced-strata likelihood; score-dependent inputs are data containers (:func:`balanced_data`)."""
    if not design.complete:
        raise ArgumentError(
            "method='balanced' needs every cell present with the same number of replicates; "
            "use method='auto' for this design."
        )
    st = strata(design)
    with pm.Model(coords=coords(design)) as model:
        # Everything that depends on the scores is a data container, so a compiled model can be
        # refitted to new scores of the same design without recompiling (balanced_data).
        data = balanced_data(design, st)
        y_sd = pm.Data("y_sd", data["y_sd"])
        sig = sd_priors(design, priors, y_sd)
        strata_potentials(
            design,
            priors,
            st,
            sig,
            ss=pm.Data("strata_ss", data["strata_ss"]),
            grand_mean=pm.Data("grand_mean", data["grand_mean"]),
            category_means=pm.Data("category_means", data["category_means"]) if st.categories else None,
            deviations={
                fs.term: pm.Data(f"{fs.term}_deviations", data[f"{fs.term}_deviations"]) for fs in st.fixed
            },
            y_mean=pm.Data("y_mean", data["y_mean"]),
            y_sd=y_sd,
        )
    return model


def strata_potentials(
    design: Design,
    priors: PriorSpec,
    st,
    sig,
    *,
    ss,
    grand_mean,
    deviations,
    category_means=None,
    y_mean=None,
    y_sd=None,
) -> None:
    """The balanced likelihood from stratum sums of squares (of the likelihood's strata,
    ``st.rows``), grand mean (or category means) and fixed-level deviations (data containers
    for ``balanced``, tensors of the completed array for ``augmented``).
    """
    s2 = pt.stack([sig[label] ** 2 for label in st.var_terms])
    rows = st.rows
    ems = pt.dot(pt.as_tensor(st.coef[rows]), s2)
    pm.Potential("strata_loglik", -0.5 * pt.sum(st.df[rows] * pt.log(ems) + ss / ems))
    mu = intercept(design, priors, y_mean, y_sd)
    if st.categories is None:
        ems0 = pt.dot(pt.as_tensor(st.grand_coef), s2)
        pm.Potential("grand_mean_loglik", -0.5 * (pt.log(ems0) + st.n_total * (grand_mean - mu) ** 2 / ems0))
    else:  # anova.CategoryMeans: diag(a) + kappa 1 1', by the determinant lemma and Sherman-Morrison
        cm = st.categories
        a = pt.dot(pt.as_tensor(cm.cat_coef), s2) + pt.dot(pt.as_tensor(cm.item_coef), s2) / cm.sizes
        kappa = pt.dot(pt.as_tensor(cm.kappa_coef), s2)
        r = category_means - mu
        s1, sr = pt.sum(1.0 / a), pt.sum(r / a)
        den = 1.0 + kappa * s1
        quad = pt.sum(r**2 / a) - kappa * sr**2 / den
        pm.Potential("category_means_loglik", -0.5 * (pt.sum(pt.log(a)) + pt.log(den) + quad))
    fixed_terms = {t.label: t for t in design.terms if t.kind == "fixed"}
    for fs in st.fixed:
        beta = fixed_effect(design, priors, fixed_terms[fs.term], y_sd)
        emsf = pt.dot(pt.as_tensor(fs.coef), s2)
        q = fs.weight * pt.sum((deviations[fs.term] - beta) ** 2)
        pm.Potential(f"{fs.term}_loglik", -0.5 * (fs.df * pt.log(emsf) + q / emsf))
