"""``augmented``: nearly balanced designs (a few calls, cells or items missing). The balanced
likelihood of the completed design with one latent value per incomplete cell
(:mod:`bayes_tee.likelihoods.strata.augment`); exact, and as cheap as ``balanced`` plus a few hundred
well-conditioned Gaussian coordinates.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._core.priors import PriorSpec
from ...design.design import Design
from ..anova import strata, strata_statistics
from ..levels import coords
from ..parts import residual_sd, sd_priors
from .augment import augment_layout
from .balanced import strata_potentials


def augmented_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """The augmented likelihood of a nearly balanced design (see the module docstring)."""
    aug = augment_layout(design)
    st = strata(aug.design, within=False)
    R = aug.replicates
    with pm.Model(coords=coords(design)) as model:
        sig = sd_priors(design, priors)
        # the latent means of the missing calls, on the outcome's scale around a neutral start
        centre = np.where(aug.latent_n > 0, aug.latent_mean, design.y_mean)
        u = pm.Flat("missing_cell_means__", shape=aug.n_latent, initval=np.zeros(aug.n_latent))
        z = centre + design.y_sd * u
        w = pt.inc_subtensor(pt.as_tensor(aug.observed_sum)[aug.latent_index], aug.latent_k / R * z)
        stats = strata_statistics(w.reshape(aug.shape), aug.design, R, shift=design.y_mean)
        strata_potentials(
            design,
            priors,
            st,
            sig,
            ss=pt.stack(stats["ss"]),
            grand_mean=stats["grand_mean"],
            deviations=stats["deviations"],
            category_means=stats["category_means"],
        )
        rep = residual_sd(design, sig)
        if rep is not None:
            partial = aug.latent_n > 0
            n, k = aug.latent_n[partial], aug.latent_k[partial]
            contrast = pt.sum(
                (aug.latent_mean[partial] - z[np.flatnonzero(partial)]) ** 2 * (n * k / (n + k))
            )
            dof = aug.within_df + float(partial.sum())
            pm.Potential("replicate_loglik", -dof * pt.log(rep) - (aug.within_ss + contrast) / (2.0 * rep**2))
    return model
