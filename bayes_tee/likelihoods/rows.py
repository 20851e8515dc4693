"""The per-call likelihood (``rows``): one term per scored call, the textbook baseline the
per-cell likelihoods are benchmarked against (the same posterior, many times the cost). The
Gaussian family's is the cell model's (:mod:`.cells.model`), the binary family's the GLMM's
(:mod:`.logit_glmm.model`).

>>> rows_model(d, bt.priors.get_prior())  # doctest: +SKIP
"""

from __future__ import annotations

import pymc as pm

from .._core.exceptions import ArgumentError
from .._core.priors import PriorSpec
from ..design.design import Design
from ..families import get_family
from .cells.model import cell_model
from .logit_glmm.model import binomial_model


def rows_model(design: Design, priors: PriorSpec, centering: dict | None = None) -> pm.Model:
    """One likelihood term per call, for the Gaussian or the binary family (not ordinal)."""
    if design.row_cell is None:
        raise ArgumentError(
            "method='rows' (one likelihood term per call) needs the rows in memory: pass a pandas "
            "DataFrame, or use method='auto' (the per-cell likelihoods give the same posterior)."
        )
    if design.outcome_levels is not None:
        raise ArgumentError(
            "method='rows' is the per-call benchmark of the Gaussian and binomial models; an ordinal "
            "fit takes method='auto' (its per-cell category counts are exact)."
        )
    if get_family(design.family).latent:
        return binomial_model(design, priors, rows=True)
    return cell_model(design, priors, centering, rows=True)
