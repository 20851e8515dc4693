"""Generalizability (E rho^2) and dependability (Phi) coefficients, per posterior draw: the
weights of :mod:`bayes_tee.gstudy.coefficients` applied to the variance-component draws.

>>> post.reliability(n={"judge": [1, 3, 5]})  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, DesignWarning
from .._core.intervals import summarize_samples
from .._core.moved import moved_names
from ..design.terms import Term
from ..gstudy.coefficients import coefficients, g_weights, n_grid

if TYPE_CHECKING:
    from .fit import Fit


#: A change of the median E rho^2 above this, when the judges are declared the other way
#: (fixed or random), is said as a :class:`~bayes_tee.DesignWarning`.
JUDGE_STATUS_TOLERANCE = 0.02


def reliability(
    post: Fit, *, object: str = "item", n: dict | None = None, level: float = 0.9
) -> pd.DataFrame:
    """E rho^2 and Phi per posterior draw at each design (see the module docstring).

    Parameters
    ----------
    post : Fit
        A fitted posterior (any formula or roles fit).
    object : str
        The object of measurement: a random main effect (``item``; a system/model facet when
        systems are compared). Its column name works too.
    n : dict, optional
        Facet (or its column) -> count or list of counts; facets not given keep the observed
        count, ``replicate`` the mean calls per cell.
    level : float
        Credible level.

    Returns
    -------
    pandas.DataFrame
        One row per design: ``n_<facet>`` columns, ``erho2_median/low/high``,
        ``phi_median/low/high``, and the universe-score and error variances
        ``tau_*``, ``delta_*`` (relative) and ``Delta_*`` (absolute).

    Warns
    -----
    DesignWarning
        When declaring the judges the other way (random instead of fixed, or fixed instead of
        random) would move the median E rho^2 by more than :data:`JUDGE_STATUS_TOLERANCE`: the
        coefficient then depends on whether these judges are the universe or a sample of it.
    """
    if not 0 < level < 1:
        raise ArgumentError(f"level must be between 0 and 1, got {level!r}.")
    design = post.design
    obj = design.facet_of(object)
    grid = n_grid(design, obj, n)
    terms = post.terms
    fixed_object = obj == design.system
    w = g_weights(terms, obj, grid, design.counts, fixed_object=fixed_object)
    da = post.component_draws()
    labels = [str(c) for c in da["component"].values]
    order = [labels.index(t.label) for t in terms]
    draws = da.values.reshape(-1, da.sizes["component"])[:, order]
    g = coefficients(draws, w)
    out = pd.concat(
        [grid.reset_index(drop=True)]
        + [summarize_samples(g[k], level, f"{k}_") for k in ("erho2", "phi", "tau", "delta", "Delta")],
        axis=1,
    )
    out.attrs.update(object=obj, level=level)
    judge = next((t for t in terms if t.label == "judge"), None)
    if judge is not None and obj != "judge":
        status = "random" if judge.kind == "fixed" else "fixed"
        flipped = [Term(t.label, t.facets, status) if t is judge else t for t in terms]
        w_other = g_weights(flipped, obj, grid, design.counts, fixed_object=fixed_object)
        other = np.median(coefficients(draws, w_other)["erho2"], axis=0)
        out.attrs[f"erho2_judges_{status}"] = other
        shift = np.abs(other - out["erho2_median"].to_numpy())
        if shift.max() > JUDGE_STATUS_TOLERANCE:
            j = int(shift.argmax())
            warnings.warn(
                f"E rho^2 of {obj} is {out['erho2_median'].iloc[j]:.3f} with the judges {judge.kind}, "
                f"{other[j]:.3f} with them {status}: it depends on "
                "whether these judges are the whole universe (fixed: their interactions with the object "
                "are measured signal) or a sample of judges (random: those are error). Say which in the "
                "report; refit with judge_effect= (or (1|judge) / + judge in a formula) for the other.",
                DesignWarning,
                stacklevel=3,
            )
    return out


#: Names that moved (old imports still work, with a DeprecationWarning).
__getattr__ = moved_names(
    __name__,
    {
        "measured_facets": "bayes_tee.gstudy.coefficients",
    },
)
