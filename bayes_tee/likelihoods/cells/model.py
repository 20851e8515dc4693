"""``cells`` and ``rows``: sampled random effects, for designs where ``marginal`` would be costly.

``cells``: random effects per level; each cell mean is ``Normal(predictor, sigma_cell^2 +
sigma_replicate^2 / n)`` with the cell error integrated out, the within-cell sums of squares
enter as the replicate potential, and few-level terms are integrated out exactly (Woodbury).
``rows``: one likelihood term per call with explicit cell effects, the textbook form kept as
the benchmark baseline.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ...design.terms import cell_term
from ..levels import choose_centering, coords, term_levels
from ..linalg import woodbury_loglik
from ..parts import fixed_predictor, random_effect, replicate_potential, residual_sd, sd_priors

#: Random terms with at most this many levels are integrated out of the cell model exactly.
MAX_MARGINAL_LEVELS = 40

#: ... as long as they add up to at most this many columns.
MAX_MARGINAL_COLUMNS = 120


def cell_model(
    design: Design, priors: PriorSpec, centering: dict[str, bool] | None = None, *, rows: bool = False
) -> pm.Model:
    """The cell-level model (``rows=False``) or the per-call baseline (``rows=True``).

    ``centering``: centred (``True``) or not, per random term; default :func:`cells_key`'s
    choice from the data's moment estimates (:func:`~bayes_tee.likelihoods.levels.choose_centering`).
    """
    centering = centering or choose_centering(design)
    cells = design.cells
    ct = cell_term(list(design.terms))
    level_coords = coords(design)
    random = [t for t in design.terms if t.kind == "random" and t.label != ct.label]
    levels = {t.label: term_levels(design, t) for t in random}
    # Few-level terms (prompt, category, prompt:x, random judge) are integrated out exactly:
    # their SDs are the weakly identified ones whose funnels no parameterisation removes.
    marginal = [] if rows else [t for t in random if len(levels[t.label][1]) <= MAX_MARGINAL_LEVELS]
    if sum(len(levels[t.label][1]) for t in marginal) > MAX_MARGINAL_COLUMNS:
        marginal = []
    with pm.Model(coords=level_coords) as model:
        sig = sd_priors(design, priors)
        pred, shift = fixed_predictor(design, priors)
        for t in random:
            if t in marginal:
                continue
            idx, labels = levels[t.label]
            pred = (
                pred
                + random_effect(model, t, labels, sig[t.label], centering.get(t.label, False) and not rows)[
                    idx
                ]
            )
        rep = residual_sd(design, sig)
        n = cells["n"].to_numpy().astype(float)
        if rows:
            if rep is None:
                raise ArgumentError("method='rows' needs replicates (some cell with two or more calls).")
            model.add_coord("cell", np.arange(len(cells)))
            z = pm.Normal("z_cell", 0.0, 1.0, dims="cell")
            pm.Normal("y", (pred + z * sig[ct.label])[design.row_cell], rep, observed=design.row_y)
            return model
        var = sig[ct.label] ** 2 + (rep**2 / n if rep is not None else np.zeros_like(n))  # one per cell
        resid = pm.Data("cell_mean", cells["mean"].to_numpy(dtype=float)) - pred
        if marginal:
            widths = [len(levels[t.label][1]) for t in marginal]
            offsets = np.cumsum([0, *widths[:-1]])
            cols = np.stack([levels[t.label][0] + o for t, o in zip(marginal, offsets)])
            scale = pt.concatenate([pt.repeat(sig[t.label], w) for t, w in zip(marginal, widths)])
            pm.Potential("cell_mean_loglik", woodbury_loglik(resid, var, n, cols, int(sum(widths)), scale))
        else:
            pm.Potential("cell_mean_loglik", -0.5 * pt.sum(pt.log(var) + resid**2 / var))
        if rep is not None:
            replicate_potential(design, rep, shift)
    return model


def cells_key(design: Design) -> tuple:
    """What besides the layout changes the compiled cell model: its per-term centring, chosen from
    the data's moment estimates.
    """
    return tuple(sorted(choose_centering(design).items()))
