"""``marginal``: any Gaussian design (missing cells, unequal replicates). The cell means are
jointly Gaussian with every random effect integrated out exactly
(:func:`bayes_tee.likelihoods.linalg.item_block_loglik`), plus the replicate potential. The same few
parameters as ``balanced``; the cost grows with items and replicate-count patterns, not calls.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._core.priors import PriorSpec
from ...design.design import Design
from ...design.terms import Term, cell_term
from ..levels import coords
from ..linalg import ItemBlocks, item_block_loglik
from ..parts import fixed_predictor, replicate_potential, residual_sd, sd_priors


def indicators(design: Design, terms: list[Term]) -> tuple[np.ndarray, list[int]]:
    """``(P, K)`` 0/1 matrix: at each position of an item block, which level of each term (its
    facets other than the item) it is; and the number of columns per term.
    """
    others = [f for f in design.facets if f != "item"]
    shape = [len(design.levels[f]) for f in others]
    grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), dtype=int)
    mats = []
    for t in terms:
        sub = [others.index(f) for f in t.facets if f != "item"]
        col = (
            np.ravel_multi_index(grid[sub], [shape[j] for j in sub]) if sub else np.zeros(grid.shape[1], int)
        )
        mats.append(np.eye(int(np.prod([shape[j] for j in sub])))[col])
    Z = np.concatenate(mats, axis=1) if mats else np.zeros((grid.shape[1], 0))
    return Z, [m.shape[1] for m in mats]


def marginal_layout(design: Design) -> tuple[ItemBlocks, list[Term], list[Term]]:
    """Item blocks and the item-nested / crossed random terms of the marginal model."""
    others = [f for f in design.facets if f != "item"]
    cells = design.cells
    shape = [len(design.levels[f]) for f in others]
    position = (
        np.ravel_multi_index([cells[f].to_numpy() for f in others], shape)
        if others
        else np.zeros(len(cells), int)
    )
    blocks = ItemBlocks.build(
        cells["item"].to_numpy(),
        position,
        cells["n"].to_numpy().astype(float),
        len(design.levels["item"]),
        int(np.prod(shape)) if shape else 1,
    )
    ct = cell_term(list(design.terms))
    random = [t for t in design.terms if t.kind == "random" and t.label not in (ct.label, "category")]
    nested = [t for t in random if "item" in t.facets]
    crossed = [t for t in random if "item" not in t.facets]
    return blocks, nested, crossed


def marginal_cost(design: Design) -> float:
    """Floating-point work of one marginal log-density evaluation (see :func:`build_model`)."""
    blocks, nested, crossed = marginal_layout(design)
    Ka = indicators(design, nested)[0].shape[1]
    Kb = indicators(design, crossed)[0].shape[1]
    return blocks.flops(Ka, Kb + len(design.categories or ()))


def marginal_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """The marginal likelihood: every random effect integrated out exactly, per item block."""
    blocks, nested, crossed = marginal_layout(design)
    ct = cell_term(list(design.terms))
    cells = design.cells

    def scales(terms, widths):
        if not terms:
            return pt.zeros(0)
        return pt.concatenate([pt.repeat(sig[t.label], w) for t, w in zip(terms, widths)])

    za, wa = indicators(design, nested)
    zb, wb = indicators(design, crossed)
    with pm.Model(coords=coords(design)) as model:
        sig = sd_priors(design, priors)
        pred, shift = fixed_predictor(design, priors)
        rep = residual_sd(design, sig)
        grouped = bool(design.categories)
        pm.Potential(
            "cell_mean_loglik",
            item_block_loglik(
                blocks,
                pm.Data("cell_mean", cells["mean"].to_numpy(dtype=float)) - pred,
                sig[ct.label] ** 2,
                rep**2 if rep is not None else pt.as_tensor(0.0),
                za,
                scales(nested, wa),
                zb,
                scales(crossed, wb),
                item_group=design.item_category if grouped else None,
                scale_group=sig["category"] if grouped else None,
            ),
        )
        if rep is not None:
            replicate_potential(design, rep, shift)
    return model
