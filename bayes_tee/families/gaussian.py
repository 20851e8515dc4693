"""The Gaussian family: scores modelled on their own scale (Messing (2026)'s linear model, and
its linear probability model for 0/1 scores).

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
>>> std, loc, scale = GAUSSIAN.standardize(d)
>>> std.y_mean, std.y_sd, loc == d.y_mean
(0.0, 1.0, True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Family

#: Default tuning steps and the most draws per chain. At the default draws the run stops at
#: the first checkpoint (1,000 draws, then every 500) where the SDs, fixed effects and grand mean pass
#: their checks with margin (``bayes_tee.tee.fit.Settings.checkpoints``), so most fits keep
#: 1,000; a few-level SD that mixes slowly runs on (on the small-facet designs, 7 of 180
#: Gaussian fits had an R-hat of 1.010-1.015 or a bulk ESS of 265-391 at 4 x 1,000).
TUNE, DRAWS = 1000, 2000


@dataclass(frozen=True)
class Gaussian(Family):
    """Identity link; the scores are standardised before sampling."""

    def standardize(
        self, design: Any, reference: tuple[float, float] | None = None
    ) -> tuple[Any, float, float]:
        """The design with its scores standardised (mean 0, SD 1), and the location and scale.

        Every prior is relative to the outcome's mean and SD, so the model on standardised
        scores is the same model; sampling it keeps the sampler's arithmetic near unit scale
        whatever the user's units (scores times 1e12 otherwise overflow the sums of squares and
        the step size). A constant outcome is left as it is. With the priors' ``reference``
        ``(location, scale)`` the scores are put on that scale instead: the priors are then
        relative to it, whatever the data.
        """
        if reference is not None:
            loc, scale = reference
        elif not (np.isfinite(design.y_sd) and design.y_sd > 0):
            return design, 0.0, 1.0
        else:
            loc, scale = float(design.y_mean), float(design.y_sd)
        cells = design.cells.assign(
            mean=(design.cells["mean"] - loc) / scale, ss=design.cells["ss"] / scale**2
        )
        for col in [c for c in cells.columns if str(c).startswith("sxy:")]:  # covariates x scores
            cells[col] = cells[col] / scale
        row_y = None if design.row_y is None else (design.row_y - loc) / scale
        return dataclasses.replace(design, cells=cells, y_mean=0.0, y_sd=1.0, row_y=row_y), loc, scale


GAUSSIAN = Gaussian(
    name="gaussian",
    link="identity",
    model_label="linear model",
    scale="outcome",
    tune=TUNE,
    draws=DRAWS,
    target_accept=0.9,
    default_method=None,
    theta_variable="mu",
    fixed_residual=False,
    formula=True,
)
